//! The inversion kernels (`glsl/inverse/`): each declared once, with its storage blocks by
//! binding and its uniforms, checked when its program links.

use crate::gl::ComputeKernel;

/// Gauss-Jordan / LU: one column step of a pivoted leaf panel (pivot, update, candidates).
pub static LEAF: ComputeKernel = ComputeKernel {
    name: "inverse/leaf",
    source: include_str!("../../glsl/inverse/leaf.comp"),
    buffers: &[
        ("ABuf", 0),
        ("PartIn", 1),
        ("PartOut", 2),
        ("ChosenBuf", 3),
        ("StatusBuf", 4),
    ],
    uniforms: &["n", "c0", "w", "p", "groups", "tol", "pivoting", "start"],
    optional: &[],
};

/// Gauss-Jordan / LU: a leaf's row interchanges across all columns.
pub static PERMUTE: ComputeKernel = ComputeKernel {
    name: "inverse/permute",
    source: include_str!("../../glsl/inverse/permute.comp"),
    buffers: &[
        ("ABuf", 0),
        ("MovedBuf", 1),
        ("ChosenBuf", 2),
        ("PivBuf", 3),
    ],
    uniforms: &["n", "c0", "w", "mode"],
    optional: &[],
};

/// Gauss-Jordan / LU: one round of a leaf's tournament pivoting (CALU's candidate rows).
pub static TOURNAMENT: ComputeKernel = ComputeKernel {
    name: "inverse/tournament",
    source: include_str!("../../glsl/inverse/tournament.comp"),
    buffers: &[
        ("ABuf", 0),
        ("CandIn", 1),
        ("CandOut", 2),
        ("Lu11Buf", 3),
        ("StashBuf", 4),
        ("TallyBuf", 5),
    ],
    uniforms: &[
        "n", "c0", "w", "mode", "chunk", "sets", "fan", "last", "pend", "step", "fuse",
        "prefetch",
    ],
    optional: &[],
};

/// Gauss-Jordan / LU: a tournament-pivoted leaf's interchanges, L11\U11 and L21 = A21·U11⁻¹.
pub static LEAF_FINISH: ComputeKernel = ComputeKernel {
    name: "inverse/leaf_finish",
    source: include_str!("../../glsl/inverse/leaf_finish.comp"),
    buffers: &[
        ("ABuf", 0),
        ("ChosenBuf", 1),
        ("PivBuf", 2),
        ("StatusBuf", 3),
        ("Lu11Buf", 4),
        ("StashBuf", 5),
        ("UnitLBuf", 6),
    ],
    uniforms: &[
        "n", "c0", "w", "tol", "col_groups", "right", "lo", "others", "pend", "step",
        "prefetch",
    ],
    optional: &[],
};

/// Gauss-Jordan with look-ahead: a block's row interchanges on the columns outside its panel.
pub static INTERCHANGE: ComputeKernel = ComputeKernel {
    name: "inverse/interchange",
    source: include_str!("../../glsl/inverse/interchange.comp"),
    buffers: &[("ABuf", 0), ("PivBuf", 1)],
    uniforms: &["n", "k0", "b"],
    optional: &[],
};

/// Gauss-Jordan: the panel column copied and block row 1 moved out before a block's products,
/// the panel's b x b inverses formed alongside (b ≤ 64).
pub static PANEL_SPLIT: ComputeKernel = ComputeKernel {
    name: "inverse/panel_split",
    source: include_str!("../../glsl/inverse/panel_split.comp"),
    buffers: &[("ABuf", 0), ("ColBuf", 1), ("RowBuf", 2), ("OutBuf", 3)],
    uniforms: &["n", "k0", "b", "base", "whole", "steps", "prefetch"],
    optional: &[],
};

/// The general inverses' rank-b updates C ← β·C + α·X·Y over row-major blocks (TM, TN and
/// VEC4 defined by src/inverse/rank.rs).
pub static RANK_UPDATE: ComputeKernel = ComputeKernel {
    name: "inverse/rank_update",
    source: include_str!("../../glsl/inverse/rank_update.comp"),
    buffers: &[("CBuf", 0), ("XBuf", 1), ("YBuf", 2)],
    uniforms: &[
        "rows", "cols", "depth", "split", "c_off", "c_ld", "x_off", "x_ld", "y_off", "y_off2",
        "y_ld", "alpha", "beta", "row_base",
    ],
    optional: &[],
};

/// Scaled, permuted or transposed copies between views.
pub static COPY: ComputeKernel = ComputeKernel {
    name: "inverse/copy",
    source: include_str!("../../glsl/inverse/copy.comp"),
    buffers: &[("DstBuf", 0), ("SrcBuf", 1)],
    uniforms: &[
        "rows", "cols", "d_off", "d_rs", "d_cs", "s_off", "s_rs", "s_cs", "mode", "alpha",
    ],
    optional: &[],
};

/// The Newton iterations' elementwise steps and partial norms.
pub static NEWTON: ComputeKernel = ComputeKernel {
    name: "inverse/newton",
    source: include_str!("../../glsl/inverse/newton.comp"),
    buffers: &[
        ("XBuf", 0),
        ("WBuf", 1),
        ("PermBuf", 2),
        ("PartialBuf", 3),
        ("YBuf", 4),
    ],
    uniforms: &["n", "mode", "a", "b", "group_base"],
    optional: &[],
};

/// The Newton iteration's bookkeeping on the device: the column order from the pivots, the
/// scaling μ and the sums, into one report read once per step.
pub static NEWTON_REPORT: ComputeKernel = ComputeKernel {
    name: "inverse/newton_report",
    source: include_str!("../../glsl/inverse/newton_report.comp"),
    buffers: &[
        ("PivBuf", 0),
        ("ReportBuf", 1),
        ("PartialBuf", 2),
        ("StatusBuf", 3),
        ("PermBuf", 4),
    ],
    uniforms: &["mode", "count", "scale", "norm_lo", "norm_hi"],
    optional: &[],
};

/// Sign, Lyapunov and the f64 factors: the double-precision product C = α·A·B + β·D + γ·I
/// (tile sums of C², or only C's lower triangle).
pub static DGEMM: ComputeKernel = ComputeKernel {
    name: "inverse/dgemm",
    source: include_str!("../../glsl/inverse/dgemm.comp"),
    buffers: &[
        ("CBuf", 0),
        ("ABuf", 1),
        ("BBuf", 2),
        ("DBuf", 3),
        ("PartialBuf", 4),
    ],
    uniforms: &[
        "rows", "cols", "k0", "k1", "c_off", "c_rs", "c_cs", "a_off", "a_rs", "a_cs", "b_off",
        "b_rs", "b_cs", "d_off", "d_rs", "d_cs", "alpha_lo", "alpha_hi", "beta_lo", "beta_hi",
        "gamma_lo", "gamma_hi", "sums", "lower",
    ],
    optional: &[],
};

/// Sign and Lyapunov: f64 ↔ f32 between strided views (narrow, widen-and-add with Σ out²,
/// symmetrize in place).
pub static CONVERT: ComputeKernel = ComputeKernel {
    name: "inverse/convert",
    source: include_str!("../../glsl/inverse/convert.comp"),
    buffers: &[("OutBuf", 0), ("SingleBuf", 1), ("InBuf", 2), ("PartialBuf", 3)],
    uniforms: &[
        "rows", "cols", "d_off", "d_rs", "d_cs", "s_off", "s_rs", "s_cs", "mode", "alpha_lo",
        "alpha_hi", "beta_lo", "beta_hi",
    ],
    optional: &[],
};
