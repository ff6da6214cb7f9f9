//! The device residual's kernels (`glsl/least_squares/`, Algorithm 1's residual in f64 on the
//! GPU): each declared once, with its storage blocks by binding and its uniforms.

use crate::gl::ComputeKernel;

/// Least squares: partial sums of Aᵀ·x by row chunks, in f64.
pub static WEIGHTED_TRANSPOSE_PRODUCT: ComputeKernel = ComputeKernel {
    name: "least_squares/weighted_transpose_product",
    source: include_str!("../../glsl/least_squares/weighted_transpose_product.comp"),
    buffers: &[("ABuf", 0), ("XBuf", 2), ("PartialBuf", 3)],
    uniforms: &["m", "n", "col_base", "rows_per_chunk"],
    optional: &[],
};

/// Least squares: the chunks' sums, weighted by d², in f64.
pub static SUM_CHUNKS: ComputeKernel = ComputeKernel {
    name: "least_squares/sum_chunks",
    source: include_str!("../../glsl/least_squares/sum_chunks.comp"),
    buffers: &[("DBuf", 1), ("PartialBuf", 2), ("YBuf", 3)],
    uniforms: &["n", "col_base", "chunks"],
    optional: &[],
};

/// Least squares: r = f − A·y over a range of columns, in f64.
pub static RESIDUAL: ComputeKernel = ComputeKernel {
    name: "least_squares/residual",
    source: include_str!("../../glsl/least_squares/residual.comp"),
    buffers: &[("ABuf", 0), ("FBuf", 1), ("YBuf", 2), ("RBuf", 3)],
    uniforms: &["m", "n", "col0", "col1"],
    optional: &[],
};

/// Least squares: C = A·D²·Aᵀ's diagonal as mantissa and exponent parts, row by row.
pub static DIAGONAL_PARTS: ComputeKernel = ComputeKernel {
    name: "least_squares/diagonal",
    source: include_str!("../../glsl/least_squares/diagonal.comp"),
    buffers: &[("ABuf", 0), ("DBuf", 1), ("PartsBuf", 2)],
    uniforms: &["n", "row_base", "q"],
    optional: &[],
};

/// Least squares: A (f64) scaled by a power of two and rounded to f32.
pub static TO_SINGLE: ComputeKernel = ComputeKernel {
    name: "least_squares/to_single",
    source: include_str!("../../glsl/least_squares/to_single.comp"),
    buffers: &[("ABuf", 0), ("OutBuf", 1)],
    uniforms: &["len", "exponent"],
    optional: &[],
};

/// Least squares: columns of A that came as contiguous lines (Aᵀ's rows) put in place, in f64.
pub static TRANSPOSE: ComputeKernel = ComputeKernel {
    name: "least_squares/transpose",
    source: include_str!("../../glsl/least_squares/transpose.comp"),
    buffers: &[("LinesBuf", 0), ("ABuf", 1)],
    uniforms: &["m", "n", "col0", "count"],
    optional: &[],
};

/// `src[index[k]]` for every k (a factor's diagonal).
pub static GATHER: ComputeKernel = ComputeKernel {
    name: "least_squares/gather",
    source: include_str!("../../glsl/least_squares/gather.comp"),
    buffers: &[("SrcBuf", 0), ("IndexBuf", 1), ("OutBuf", 2)],
    uniforms: &["count"],
    optional: &[],
};

/// Σ_i |C(i, j)| for each column j of a symmetric C held as the lower triangle of a row-major
/// square in one f32 buffer, or with `DOUBLE_C` f64 (‖C‖₁ their largest). No version line: the
/// variants put theirs before their define.
pub static COLUMN_SUMS: ComputeKernel = ComputeKernel {
    name: "least_squares/column_sums",
    source: include_str!("../../glsl/least_squares/column_sums.comp"),
    buffers: &[("CBuf", 0), ("OutBuf", 1)],
    uniforms: &["n", "ld", "out_off", "col0"],
    optional: &[],
};

/// Least squares: A's columns scaled by d (and both by powers of two), in f64: the left factor
/// of C = A·D²·Aᵀ assembled in f64.
pub static SCALE_COLUMNS: ComputeKernel = ComputeKernel {
    name: "least_squares/scale_columns",
    source: include_str!("../../glsl/least_squares/scale_columns.comp"),
    buffers: &[("ABuf", 0), ("DBuf", 1), ("OutBuf", 2)],
    uniforms: &["m", "n", "a_exp", "d_exp"],
    optional: &[],
};
