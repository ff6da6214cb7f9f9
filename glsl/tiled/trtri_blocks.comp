// Inverts diagonal blocks of a lower-triangular factor, one block per work group of 16 x 16
// invocations holding EA x EB entries each in registers: block g is the order-n_g lower
// triangle at view offset + g·NB·(rs + cs) (n_g = NB but for the last block, n − g·NB), its
// inverse goes to inv[(slot0 + g)·NB² ...] as a full NB-strided row-major block (zeros above
// the diagonal and past n_g), or, with in_place, over block g's own lower triangle (InvBuf then
// bound to L's buffer: every invocation writes only the entries it read). Row by row (L·Y = I): row j of Y is final once the rows above
// have been subtracted; its owners divide it by L(j,j) and publish it beside column j of L
// (double-buffered shared memory, one barrier per row), then every invocation subtracts
// L(i,j)·Y(j,:) from its rows below j. The triangular solves then run as products with these
// inverses (MAGMA's and rocBLAS's trsm): a few dispatches per block instead of a chain.
layout(local_size_x = 16, local_size_y = 16) in;

#define EA (NB / 16)
#define EB (NB / 16)

layout(std430, binding = 0) readonly buffer LBuf { float l[]; };
layout(std430, binding = 1) writeonly buffer InvBuf { float inv[]; };

uniform uint n;
uniform uint l_off;
uniform uint l_rs;
uniform uint l_cs;
uniform uint slot0;
uniform int in_place;

shared float col[2][NB];
shared float row[2][NB];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint g = gl_WorkGroupID.x;
    uint nb = min(uint(NB), n - g * uint(NB));
    uint off = l_off + g * uint(NB) * (l_rs + l_cs);
    // s: entry (ty + 16a, tx + 16b) of L (identity outside the block); y: of Y, from I.
    float s[EA][EB];
    float y[EA][EB];
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + 16u * uint(a);
            uint k = tx + 16u * uint(b);
            s[a][b] = (i < nb && k <= i) ? l[off + i * l_rs + k * l_cs] : (i == k ? 1.0 : 0.0);
            y[a][b] = i == k ? 1.0 : 0.0;
        }
    for (uint j = 0u; j < nb; j++) {
        uint buf = j & 1u;
        for (int b = 0; b < EB; b++)
            if (tx + 16u * uint(b) == j)
                for (int a = 0; a < EA; a++) col[buf][ty + 16u * uint(a)] = s[a][b];
        barrier();
        float d = 1.0 / col[buf][j];
        for (int a = 0; a < EA; a++)
            if (ty + 16u * uint(a) == j)
                for (int b = 0; b < EB; b++) {
                    y[a][b] *= d;
                    row[buf][tx + 16u * uint(b)] = y[a][b];
                }
        barrier();
        for (int a = 0; a < EA; a++) {
            uint i = ty + 16u * uint(a);
            if (i <= j || i >= nb) continue;
            float f = col[buf][i];
            for (int b = 0; b < EB; b++) y[a][b] -= f * row[buf][tx + 16u * uint(b)];
        }
    }
    for (int a = 0; a < EA; a++)
        for (int b = 0; b < EB; b++) {
            uint i = ty + 16u * uint(a);
            uint k = tx + 16u * uint(b);
            if (in_place != 0) {
                if (i < nb && k <= i) inv[off + i * l_rs + k * l_cs] = y[a][b];
            } else {
                inv[(slot0 + g) * uint(NB * NB) + i * uint(NB) + k] = (i < nb && k <= i) ? y[a][b] : 0.0;
            }
        }
}
