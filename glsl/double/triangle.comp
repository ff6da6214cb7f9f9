// Between an order-n row-major square and a triangle packed by rows (row i of the lower
// triangle: entries 0..=i at i(i+1)/2; of the upper: entries i..n-1 at i·n − i(i−1)/2), so that
// only a triangle crosses the bus. mode 0 unpacks: square(i, j) ← C(i, j) for j <= i (with
// `both` every entry), NaN elsewhere, C(i, j) = C(j, i) read from the packed lower triangle or
// (`upper`) the upper one. mode 1 packs the square's lower triangle L: into the packed lower
// triangle, or (`upper`) U = Lᵀ into the packed upper one.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) buffer SquareBuf { double square[]; };
layout(std430, binding = 1) buffer PackedBuf { double tri[]; };

uniform uint n;
uniform int upper;
uniform int both;
uniform int mode;

// Where entry (r, c), c <= r, of the lower triangle lies packed: its own place, or that of
// (c, r) in the upper triangle.
uint at(uint r, uint c) {
    return upper != 0 ? c * n - (c * (c - 1u)) / 2u + (r - c) : (r * (r + 1u)) / 2u + c;
}

void main() {
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (i >= n || j >= n) {
        return;
    }
    if (mode == 0) {
        double v = packDouble2x32(uvec2(0u, 0x7ff80000u));
        if (j <= i || both != 0) {
            v = tri[at(max(i, j), min(i, j))];
        }
        square[i * n + j] = v;
    } else if (j <= i) {
        tri[at(i, j)] = square[i * n + j];
    }
}
