// The diagonal block's factor over 4 x 4 blocks (Kernel 3 for a 4·KB block, as the Brook+
// sample's square-root step): each fragment of the block's lower triangle factors the whole
// block, right-looking over 4 x 4 blocks, reading only its lower triangle, and writes its own
// 4 x 4 piece. Loop bounds are constants, so compilers unroll them and keep the blocks in
// registers. T0 = (origin + .5, ±1): block (k+i, k+j) is texel origin ± (j, i), the origin
// that of block (k, k) (the full format and the packed trapezoid +1, the packed corner -1,
// its blocks rotated by 180°). A pivot that is not positive becomes NaN, and so does
// everything computed from it.
// KB, the texel columns of a block column, is #defined by the host (src/kernels.rs).
in vec3 T0;
// Index of lower block (i, j), j <= i, in the packed array.
int at(int i, int j) {
    return i * (i + 1) / 2 + j;
}
float root(float p) {
    return p > 0.0 ? sqrt(p) : not_a_number();
}
// The Cholesky factor of a 4 x 4 block from its lower triangle (its upper entries are never
// read), upper triangle zero.
mat4 factor(mat4 a) {
    mat4 l = mat4(0.0);
    for (int j = 0; j < 4; ++j) {
        float p = a[j][j];
        for (int t = 0; t < j; ++t) {
            p -= l[t][j] * l[t][j];
        }
        float d = root(p);
        l[j][j] = d;
        for (int i = j + 1; i < 4; ++i) {
            float s = a[j][i];
            for (int t = 0; t < j; ++t) {
                s -= l[t][i] * l[t][j];
            }
            l[j][i] = s / d;
        }
    }
    return l;
}
// X with X·Dᵀ = S, D lower triangular (its upper entries are never read), column by column.
mat4 solve(mat4 s, mat4 d) {
    mat4 x = mat4(0.0);
    for (int c = 0; c < 4; ++c) {
        vec4 v = s[c];
        for (int t = 0; t < c; ++t) {
            v -= x[t] * d[t][c];
        }
        x[c] = v / d[c][c];
    }
    return x;
}
void main() {
    ivec2 here = ivec2(gl_FragCoord.xy);
    ivec2 o = texel(T0.xy);
    int dir = T0.z < 0.0 ? -1 : 1;
    mat4 a[KB * (KB + 1) / 2];
    for (int i = 0; i < KB; ++i) {
        for (int j = 0; j <= i; ++j) {
            a[at(i, j)] = block(o + dir * ivec2(j, i));
        }
    }
    for (int j = 0; j < KB; ++j) {
        mat4 d = factor(a[at(j, j)]);
        a[at(j, j)] = d;
        for (int i = j + 1; i < KB; ++i) {
            a[at(i, j)] = solve(a[at(i, j)], d);
        }
        for (int i = j + 1; i < KB; ++i) {
            for (int c = j + 1; c <= i; ++c) {
                a[at(i, c)] -= a[at(i, j)] * transpose(a[at(c, j)]);
            }
        }
    }
    int ti = dir * (here.y - o.y);
    int tj = dir * (here.x - o.x);
    mat4 mine = mat4(0.0);
    for (int i = 0; i < KB; ++i) {
        for (int j = 0; j <= i; ++j) {
            if (i == ti && j == tj) {
                mine = a[at(i, j)];
            }
        }
    }
    put(mine);
}
