// Cholesky of one diagonal block (n ≤ NB) AND the inverse of its factor, by one work group of
// PX x PY invocations (16 x 16 unless defined) holding EA x EB entries each in registers (MAGMA's inverted diagonal
// blocks): the panel solve of the blocked Cholesky then becomes one product with L⁻ᵀ instead
// of a chain of substitution kernels. Factor: column by column (Algorithm 5's square root,
// normalization and outer-product subtraction on the unscaled column and 1/pivot); the owners
// of column j publish it through shared memory (double-buffered: one barrier per column).
// Inverse: the elimination's row operations applied to I in the same sweep (one barrier per
// column for both: row j of the running inverse is published beside column j), scaled by the
// pivots' square roots at the end. Only the lower triangle of C is read and written; the
// inverse goes to `inv` as a full NB-strided row-major block (zeros above the diagonal). The
// first pivot that is not positive (or NaN) is recorded in the status word with its global
// column and its value before the square root, unless an earlier column already failed.
// factor_block is potrf_inv_fn.glsl's (the above) or potrf_inv_panels.glsl's (the same in
// panels of 16 columns, few barriers), as DiagonalFactor chooses, put in front of this file.
layout(local_size_x = PX, local_size_y = PY) in;

uniform uint n;
uniform uint c_off;
uniform uint c_rs;
uniform uint c_cs;
uniform uint column0;
uniform uint inv_off;

void main() {
    factor_block(n, c_off, c_rs, c_cs, column0, inv_off);
}
