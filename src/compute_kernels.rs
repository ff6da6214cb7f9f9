//! The compute kernels: each `.comp` file declared once, with its storage blocks (by binding)
//! and its uniforms, as [`crate::draw::kernels`] does for the fragment kernels. A program is linked
//! from its entry here ([`ComputeProgram::new`]), which checks the driver's active uniforms and
//! blocks against the declaration, and only declared uniforms can be set: a misspelt name is an
//! error, not a silent no-op.
//!
//! [`ComputeProgram::new`]: crate::gl::ComputeProgram::new

use crate::gl::ComputeKernel;

/// The product's scalar uniforms shared by `gemm.comp` and `gemm_texel.comp`.
macro_rules! product_uniforms {
    ($($extra:literal),*) => {
        &[
            "rows", "cols", "depth", "c_off", "c_rs", "c_cs", "a_off", "a_rs", "a_cs", "b_off",
            "b_rs", "b_cs", "alpha", "beta", "use_d", "lower", "shift", "tile_base", "d_off"
            $(, $extra)*
        ]
    };
}

/// The diagonal block's factor-and-invert as a function (included by [`POTRF_INV_BLOCK`] and
/// by [`GEMM_FUSED`] in place of its `// FUSED_DIAG_FUNCTION` line).
pub const POTRF_INV_FN: &str = include_str!("../glsl/tiled/potrf_inv_fn.glsl");

/// The diagonal block's factor-and-invert in panels with few barriers (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor`]).
pub const POTRF_INV_PANELS_FN: &str = include_str!("../glsl/tiled/potrf_inv_panels.glsl");

/// The diagonal block's factor-and-invert two columns per barrier (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor::Pairs`]).
pub const POTRF_INV_PAIRS_FN: &str = include_str!("../glsl/tiled/potrf_inv_pairs.glsl");

/// The diagonal block's factor-and-invert four columns per barrier (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor::Quads`]).
pub const POTRF_INV_QUADS_FN: &str = concat!(
    "#define FACTOR_WIDTH 4\n",
    include_str!("../glsl/tiled/potrf_inv_steps.glsl")
);

/// The diagonal block's factor-and-invert by the lanes of one subgroup, row i in lane i's
/// registers (blocks of 32; [`POTRF_INV_FN`] for other orders, which follows it here).
pub const POTRF_INV_LANES_FN: &str = concat!(
    include_str!("../glsl/tiled/potrf_inv_lanes.glsl"),
    "\n#ifndef LANES_FACTOR\n",
    include_str!("../glsl/tiled/potrf_inv_fn.glsl"),
    "\n#endif\n"
);

/// The subgroup extension's directives (defines SUBGROUPS where the driver has it), put in
/// front of a kernel's source before any other token.
pub const SUBGROUPS_HEADER: &str = include_str!("../glsl/tiled/subgroups.glsl");

/// `gemm.comp`, for [`GEMM`] and [`GEMM_FUSED`].
const GEMM_SOURCE: &str = include_str!("../glsl/tiled/gemm.comp");

/// The tiled product C = beta·C + alpha·A·D²·Bᵀ over storage buffers (optionally lower tiles).
pub static GEMM: ComputeKernel = ComputeKernel {
    name: "tiled/gemm",
    source: GEMM_SOURCE,
    buffers: &[
        ("CBuf", 0),
        ("ABuf", 1),
        ("BBuf", 2),
        ("DBuf", 3),
        ("TileBuf", 4),
    ],
    uniforms: product_uniforms!(),
    optional: &[],
};

/// [`GEMM`] with FUSED_DIAG (and INV_BINDING 6): then factors and inverts the diagonal block
/// at its output's corner.
pub static GEMM_FUSED: ComputeKernel = ComputeKernel {
    name: "tiled/gemm (then the diagonal block)",
    source: GEMM_SOURCE,
    buffers: &[
        ("CBuf", 0),
        ("ABuf", 1),
        ("BBuf", 2),
        ("DBuf", 3),
        ("TileBuf", 4),
        ("Status", 5),
        ("InvBuf", 6),
    ],
    uniforms: product_uniforms!("diag_n", "diag_column0", "diag_inv_off"),
    optional: &[],
};

/// The product reading its operands through buffer textures (units 0-3: A, B, d, C).
pub static GEMM_TEXEL: ComputeKernel = ComputeKernel {
    name: "tiled/gemm_texel",
    source: include_str!("../glsl/tiled/gemm_texel.comp"),
    buffers: &[("CBuf", 0), ("TileBuf", 4)],
    uniforms: &[
        "rows",
        "cols",
        "depth",
        "c_off",
        "c_rs",
        "c_cs",
        "a_off",
        "a_rs",
        "b_off",
        "b_rs",
        "alpha",
        "beta",
        "use_d",
        "lower",
        "shift",
        "tile_base",
        "d_off",
        "a_tex",
        "b_tex",
        "d_tex",
    ],
    // Strides along k are read only by the one-float reads (VEC 1); C through its texture
    // only where the variant reads it.
    optional: &["a_cs", "b_cs", "c_tex"],
};

/// Copies an operand (a buffer texture) into rows of `ld` floats for the texel product.
pub static PACK: ComputeKernel = ComputeKernel {
    name: "tiled/pack",
    source: include_str!("../glsl/tiled/pack.comp"),
    buffers: &[("DstBuf", 0)],
    uniforms: &["src", "rows", "cols", "ld", "s_off", "s_rs", "s_cs"],
    optional: &[],
};

/// The product on packed k-major panels.
pub static GEMM_PANEL: ComputeKernel = ComputeKernel {
    name: "tiled/gemm_panel",
    source: include_str!("../glsl/tiled/gemm_panel.comp"),
    buffers: &[("CBuf", 0), ("ABuf", 1), ("BBuf", 2), ("TileBuf", 4)],
    uniforms: &[
        "rows",
        "cols",
        "slices",
        "block4",
        "pt",
        "c_off",
        "c_rs",
        "c_cs",
        "alpha",
        "beta",
        "lower",
        "shift",
        "tile_base",
    ],
    optional: &[],
};

/// [`GEMM_PANEL`] with FUSED_DIAG (and INV_BINDING 6): then factors and inverts the diagonal
/// block at its output's corner (the trailing update of the tiled Cholesky).
pub static GEMM_PANEL_FUSED: ComputeKernel = ComputeKernel {
    name: "tiled/gemm_panel (then the diagonal block)",
    source: include_str!("../glsl/tiled/gemm_panel.comp"),
    buffers: &[
        ("CBuf", 0),
        ("ABuf", 1),
        ("BBuf", 2),
        ("TileBuf", 4),
        ("Status", 5),
        ("InvBuf", 6),
    ],
    uniforms: &[
        "rows",
        "cols",
        "slices",
        "block4",
        "pt",
        "c_off",
        "c_rs",
        "c_cs",
        "alpha",
        "beta",
        "lower",
        "shift",
        "tile_base",
        "diag_n",
        "diag_column0",
        "diag_inv_off",
    ],
    optional: &[],
};

/// Packs an operand (d folded in) into a panel for [`GEMM_PANEL`].
pub static PACK_PANEL: ComputeKernel = ComputeKernel {
    name: "tiled/pack_panel",
    source: include_str!("../glsl/tiled/pack_panel.comp"),
    buffers: &[("PanelBuf", 0), ("XBuf", 1), ("DBuf", 3)],
    uniforms: &[
        "rows", "depth", "tile", "kp", "block", "x_off", "x_rs", "x_cs", "use_d", "d_off",
    ],
    optional: &[],
};

/// Inverts the diagonal blocks of a factor for the triangular solves.
pub static TRTRI_BLOCKS: ComputeKernel = ComputeKernel {
    name: "tiled/trtri_blocks",
    source: include_str!("../glsl/tiled/trtri_blocks.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1)],
    uniforms: &["n", "l_off", "l_rs", "l_cs", "slot0", "in_place"],
    optional: &[],
};

/// x ← x·L⁻ᵀ over one block column of L, each work group solving some rows of x through all
/// of it with the inverted diagonal blocks of [`TRTRI_BLOCKS`] (the split Cholesky's L21).
pub static TRSM_ROWS: ComputeKernel = ComputeKernel {
    name: "tiled/trsm_rows",
    source: include_str!("../glsl/tiled/trsm_rows.comp"),
    buffers: &[("XBuf", 0), ("LBuf", 1), ("InvBuf", 2)],
    uniforms: &[
        "rows", "w", "x_off", "x_rs", "x_cs", "l_off", "l_rs", "l_cs", "inv_off",
    ],
    optional: &[],
};

/// One triangular solve with one right-hand side in one launch, the blocks chained through
/// flags (the diagonal blocks inverted by [`TRTRI_BLOCKS`]).
pub static TRSV_CHAIN: ComputeKernel = ComputeKernel {
    name: "tiled/trsv_chain",
    source: include_str!("../glsl/tiled/trsv_chain.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1), ("XBuf", 2), ("Sync", 3)],
    uniforms: &[
        "m",
        "n1",
        "blocks1",
        "blocks",
        "transposed",
        "spin_limit",
        "off0",
        "rs0",
        "cs0",
        "off1",
        "rs1",
        "cs1",
        "off2",
        "rs2",
        "cs2",
    ],
    optional: &[],
};

/// The Cholesky of one diagonal block by one work group.
pub static POTRF_BLOCK: ComputeKernel = ComputeKernel {
    name: "tiled/potrf_block",
    source: include_str!("../glsl/tiled/potrf_block.comp"),
    buffers: &[("CBuf", 0), ("Status", 5)],
    uniforms: &["n", "c_off", "c_rs", "c_cs", "column0"],
    optional: &[],
};

/// The triangular solve with one diagonal block.
pub static TRSM_BLOCK: ComputeKernel = ComputeKernel {
    name: "tiled/trsm_block",
    source: include_str!("../glsl/tiled/trsm_block.comp"),
    buffers: &[("XBuf", 0), ("LBuf", 1)],
    uniforms: &[
        "rows", "n", "x_off", "x_rs", "x_cs", "l_off", "l_rs", "l_cs", "backward",
    ],
    optional: &[],
};

/// The Cholesky of full storage as one launch, left-looking by tiles chained through flags
/// ([`POTRF_INV_FN`], [`POTRF_INV_PANELS_FN`] or [`POTRF_INV_LANES_FN`] at its
/// `// FUSED_DIAG_FUNCTION` line).
pub static POTRF_CHAIN: ComputeKernel = ComputeKernel {
    name: "tiled/potrf_chain",
    source: include_str!("../glsl/tiled/potrf_chain.comp"),
    buffers: &[
        ("CBuf", 0),
        ("InvBuf", 1),
        ("Sync", 3),
        ("SyncPoll", 3),
        ("Status", 5),
        ("ChainStatus", 6),
        ("InvRead", 7),
    ],
    uniforms: &[
        "m",
        "n",
        "column0",
        "tiles",
        "c_off",
        "c_rs",
        "c_cs",
        "spin_limit",
    ],
    optional: &[],
};

/// The Cholesky of one diagonal block and its factor's inverse ([`POTRF_INV_FN`] in front).
pub static POTRF_INV_BLOCK: ComputeKernel = ComputeKernel {
    name: "tiled/potrf_inv_block",
    source: include_str!("../glsl/tiled/potrf_inv_block.comp"),
    buffers: &[("CBuf", 0), ("InvBuf", 1), ("Status", 5)],
    uniforms: &["n", "c_off", "c_rs", "c_cs", "column0", "inv_off"],
    optional: &[],
};

/// Gauss-Jordan / LU: one column step of a pivoted leaf panel (pivot, update, candidates).
pub static LEAF: ComputeKernel = ComputeKernel {
    name: "inverse/leaf",
    source: include_str!("../glsl/inverse/leaf.comp"),
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
    source: include_str!("../glsl/inverse/permute.comp"),
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
    source: include_str!("../glsl/inverse/tournament.comp"),
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
    source: include_str!("../glsl/inverse/leaf_finish.comp"),
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
        "n", "c0", "w", "tol", "col_groups", "right", "pend", "step", "prefetch",
    ],
    optional: &[],
};

/// Gauss-Jordan: the panel column copied and block row 1 moved out before a block's products,
/// the panel's b x b inverses formed alongside (b ≤ 64).
pub static PANEL_SPLIT: ComputeKernel = ComputeKernel {
    name: "inverse/panel_split",
    source: include_str!("../glsl/inverse/panel_split.comp"),
    buffers: &[("ABuf", 0), ("ColBuf", 1), ("RowBuf", 2), ("OutBuf", 3)],
    uniforms: &["n", "k0", "b", "base", "whole", "steps", "prefetch"],
    optional: &[],
};

/// The general inverses' rank-b updates C ← β·C + α·X·Y over row-major blocks (TM, TN and
/// VEC4 defined by src/inverse/rank.rs).
pub static RANK_UPDATE: ComputeKernel = ComputeKernel {
    name: "inverse/rank_update",
    source: include_str!("../glsl/inverse/rank_update.comp"),
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
    source: include_str!("../glsl/inverse/copy.comp"),
    buffers: &[("DstBuf", 0), ("SrcBuf", 1)],
    uniforms: &[
        "rows", "cols", "d_off", "d_rs", "d_cs", "s_off", "s_rs", "s_cs", "mode", "alpha",
    ],
    optional: &[],
};

/// The Newton iterations' elementwise steps and partial norms.
pub static NEWTON: ComputeKernel = ComputeKernel {
    name: "inverse/newton",
    source: include_str!("../glsl/inverse/newton.comp"),
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
    source: include_str!("../glsl/inverse/newton_report.comp"),
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

/// Sign and Lyapunov: the double-precision product C = α·A·B + β·D + γ·I (tile sums of C²).
pub static DGEMM: ComputeKernel = ComputeKernel {
    name: "inverse/dgemm",
    source: include_str!("../glsl/inverse/dgemm.comp"),
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
        "gamma_lo", "gamma_hi", "sums",
    ],
    optional: &[],
};

/// Sign and Lyapunov: f64 ↔ f32 between strided views (narrow, widen-and-add with Σ out²,
/// symmetrize in place).
pub static CONVERT: ComputeKernel = ComputeKernel {
    name: "inverse/convert",
    source: include_str!("../glsl/inverse/convert.comp"),
    buffers: &[("OutBuf", 0), ("SingleBuf", 1), ("InBuf", 2), ("PartialBuf", 3)],
    uniforms: &[
        "rows", "cols", "d_off", "d_rs", "d_cs", "s_off", "s_rs", "s_cs", "mode", "alpha_lo",
        "alpha_hi", "beta_lo", "beta_hi",
    ],
    optional: &[],
};

/// Least squares: partial sums of Aᵀ·x by row chunks, in f64.
pub static WEIGHTED_TRANSPOSE_PRODUCT: ComputeKernel = ComputeKernel {
    name: "least_squares/weighted_transpose_product",
    source: include_str!("../glsl/least_squares/weighted_transpose_product.comp"),
    buffers: &[("ABuf", 0), ("XBuf", 2), ("PartialBuf", 3)],
    uniforms: &["m", "n", "col_base", "rows_per_chunk"],
    optional: &[],
};

/// Least squares: the chunks' sums, weighted by d², in f64.
pub static SUM_CHUNKS: ComputeKernel = ComputeKernel {
    name: "least_squares/sum_chunks",
    source: include_str!("../glsl/least_squares/sum_chunks.comp"),
    buffers: &[("DBuf", 1), ("PartialBuf", 2), ("YBuf", 3)],
    uniforms: &["n", "col_base", "chunks"],
    optional: &[],
};

/// Least squares: r = f − A·y over a range of columns, in f64.
pub static RESIDUAL: ComputeKernel = ComputeKernel {
    name: "least_squares/residual",
    source: include_str!("../glsl/least_squares/residual.comp"),
    buffers: &[("ABuf", 0), ("FBuf", 1), ("YBuf", 2), ("RBuf", 3)],
    uniforms: &["m", "n", "col0", "col1"],
    optional: &[],
};

/// Least squares: C = A·D²·Aᵀ's diagonal as mantissa and exponent parts, row by row.
pub static DIAGONAL_PARTS: ComputeKernel = ComputeKernel {
    name: "least_squares/diagonal",
    source: include_str!("../glsl/least_squares/diagonal.comp"),
    buffers: &[("ABuf", 0), ("DBuf", 1), ("PartsBuf", 2)],
    uniforms: &["n", "row_base", "q"],
    optional: &[],
};

/// Least squares: A (f64) scaled by a power of two and rounded to f32.
pub static TO_SINGLE: ComputeKernel = ComputeKernel {
    name: "least_squares/to_single",
    source: include_str!("../glsl/least_squares/to_single.comp"),
    buffers: &[("ABuf", 0), ("OutBuf", 1)],
    uniforms: &["len", "exponent"],
    optional: &[],
};

/// `src[index[k]]` for every k (a factor's diagonal).
pub static GATHER: ComputeKernel = ComputeKernel {
    name: "least_squares/gather",
    source: include_str!("../glsl/least_squares/gather.comp"),
    buffers: &[("SrcBuf", 0), ("IndexBuf", 1), ("OutBuf", 2)],
    uniforms: &["count"],
    optional: &[],
};

/// Busy work that brings a GPU's clocks up before timed stretches.
pub static PREHEAT: ComputeKernel = ComputeKernel {
    name: "preheat",
    source: include_str!("../glsl/preheat.comp"),
    buffers: &[("Sink", 0)],
    uniforms: &["iterations"],
    optional: &[],
};

/// The batched kernels' shared part (`glsl/batched/common.glsl`): one work group per problem,
/// packed lower storage in shared memory or a work buffer, the factor and the solves.
pub const BATCHED_COMMON: &str = include_str!("../glsl/batched/common.glsl");

/// The batched kernels' observations (`glsl/batched/observations.glsl`): A and d staged by
/// column blocks, and the assembly of A·diag(d)·Aᵀ from them.
pub const BATCHED_OBSERVATIONS: &str = include_str!("../glsl/batched/observations.glsl");

/// The batched assembly by register tiles (`glsl/batched/tiles.glsl`, after
/// [`BATCHED_OBSERVATIONS`]; empty unless the plan defines `ASSEMBLY_TILES`).
pub const BATCHED_TILES: &str = include_str!("../glsl/batched/tiles.glsl");

/// The uniforms every batched kernel has: its launch's first problem and the problems held.
macro_rules! batch_uniforms {
    ($($extra:literal),*) => { &["problem0", "count" $(, $extra)*] };
}

/// Batched assembly, one work group per problem ([`BATCHED_COMMON`] and
/// [`BATCHED_OBSERVATIONS`] in front).
pub static BATCHED_ASSEMBLE: ComputeKernel = ComputeKernel {
    name: "batched/assemble",
    source: include_str!("../glsl/batched/assemble.comp"),
    buffers: &[
        ("ABuf", 0),
        ("DBuf", 1),
        ("CBuf", 3),
        ("WorkBuf", 6),
        ("GramBuf", 7),
    ],
    uniforms: batch_uniforms!(),
    // Read only where it assembles on chip (not from the separate assembly's buffer).
    optional: &["observations"],
};

/// Batched Cholesky with LAPACK's INFO per problem ([`BATCHED_COMMON`] in front).
pub static BATCHED_CHOLESKY: ComputeKernel = ComputeKernel {
    name: "batched/cholesky",
    source: include_str!("../glsl/batched/cholesky.comp"),
    buffers: &[("CBuf", 3), ("LBuf", 4), ("InfoBuf", 5), ("WorkBuf", 6)],
    uniforms: batch_uniforms!(),
    optional: &[],
};

/// Batched SPD solve with refinement in f64 ([`BATCHED_COMMON`] in front).
pub static BATCHED_SPD_SOLVE: ComputeKernel = ComputeKernel {
    name: "batched/spd_solve",
    source: include_str!("../glsl/batched/spd_solve.comp"),
    buffers: &[
        ("BBuf", 2),
        ("CBuf", 3),
        ("XBuf", 4),
        ("InfoBuf", 5),
        ("WorkBuf", 6),
    ],
    uniforms: batch_uniforms!(),
    optional: &[],
};

/// Batched weighted least squares in one pass: assembly, factor, solves and refinement
/// ([`BATCHED_COMMON`] and [`BATCHED_OBSERVATIONS`] in front).
pub static BATCHED_LEAST_SQUARES: ComputeKernel = ComputeKernel {
    name: "batched/least_squares",
    source: include_str!("../glsl/batched/least_squares.comp"),
    buffers: &[
        ("ABuf", 0),
        ("ABuf4", 0),
        ("DBuf", 1),
        ("BBuf", 2),
        ("XBuf", 4),
        ("InfoBuf", 5),
        ("WorkBuf", 6),
        ("GramBuf", 7),
    ],
    uniforms: batch_uniforms!(),
    // Read by the assembly on chip and the residual from A, not where both come from the
    // separate assembly's buffer.
    optional: &["observations"],
};

/// The batched assembly as a launch of its own: C's packed triangle and g per problem in
/// register tiles (`glsl/batched/gram.comp`, self-contained), read by the job's kernel.
pub static BATCHED_GRAM: ComputeKernel = ComputeKernel {
    name: "batched/gram",
    source: include_str!("../glsl/batched/gram.comp"),
    buffers: &[("ABuf", 0), ("DBuf", 1), ("BBuf", 2), ("GramBuf", 7)],
    uniforms: batch_uniforms!("observations"),
    optional: &[],
};

/// Every kernel of the table.
pub static ALL: &[&ComputeKernel] = &[
    &GEMM,
    &GEMM_FUSED,
    &GEMM_TEXEL,
    &PACK,
    &GEMM_PANEL,
    &GEMM_PANEL_FUSED,
    &PACK_PANEL,
    &TRTRI_BLOCKS,
    &TRSM_ROWS,
    &TRSV_CHAIN,
    &POTRF_BLOCK,
    &TRSM_BLOCK,
    &POTRF_INV_BLOCK,
    &POTRF_CHAIN,
    &LEAF,
    &PERMUTE,
    &TOURNAMENT,
    &LEAF_FINISH,
    &PANEL_SPLIT,
    &RANK_UPDATE,
    &COPY,
    &NEWTON,
    &NEWTON_REPORT,
    &DGEMM,
    &CONVERT,
    &WEIGHTED_TRANSPOSE_PRODUCT,
    &SUM_CHUNKS,
    &RESIDUAL,
    &DIAGONAL_PARTS,
    &TO_SINGLE,
    &GATHER,
    &PREHEAT,
    &BATCHED_ASSEMBLE,
    &BATCHED_CHOLESKY,
    &BATCHED_SPD_SOLVE,
    &BATCHED_LEAST_SQUARES,
    &BATCHED_GRAM,
];
