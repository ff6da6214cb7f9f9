//! The tiled method's compute kernels: each `.comp` file (`glsl/tiled/`) declared once, with
//! its storage blocks by binding and its uniforms, checked when its program links
//! ([`ComputeProgram::new`](crate::gl::ComputeProgram::new)).

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
pub const POTRF_INV_FN: &str = include_str!("../../glsl/tiled/potrf_inv_fn.glsl");

/// The diagonal block's factor-and-invert in panels with few barriers (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor`]).
pub const POTRF_INV_PANELS_FN: &str = include_str!("../../glsl/tiled/potrf_inv_panels.glsl");

/// The diagonal block's factor-and-invert two columns per barrier (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor::Pairs`]).
pub const POTRF_INV_PAIRS_FN: &str = include_str!("../../glsl/tiled/potrf_inv_pairs.glsl");

/// The diagonal block's factor-and-invert four columns per barrier (the same function as
/// [`POTRF_INV_FN`], chosen by [`crate::tiled::config::DiagonalFactor::Quads`]).
pub const POTRF_INV_QUADS_FN: &str = concat!(
    "#define FACTOR_WIDTH 4\n",
    include_str!("../../glsl/tiled/potrf_inv_steps.glsl")
);

/// The diagonal block's factor-and-invert by the lanes of one subgroup, row i in lane i's
/// registers (blocks of 32; [`POTRF_INV_FN`] for other orders, which follows it here).
pub const POTRF_INV_LANES_FN: &str = concat!(
    include_str!("../../glsl/tiled/potrf_inv_lanes.glsl"),
    "\n#ifndef LANES_FACTOR\n",
    include_str!("../../glsl/tiled/potrf_inv_fn.glsl"),
    "\n#endif\n"
);

/// The subgroup extension's directives (defines SUBGROUPS where the driver has it), put in
/// front of a kernel's source before any other token.
pub const SUBGROUPS_HEADER: &str = include_str!("../../glsl/tiled/subgroups.glsl");

/// `gemm.comp`, for [`GEMM`] and [`GEMM_FUSED`].
const GEMM_SOURCE: &str = include_str!("../../glsl/tiled/gemm.comp");

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
    source: include_str!("../../glsl/tiled/gemm_texel.comp"),
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
    source: include_str!("../../glsl/tiled/pack.comp"),
    buffers: &[("DstBuf", 0)],
    uniforms: &["src", "rows", "cols", "ld", "s_off", "s_rs", "s_cs"],
    optional: &[],
};

/// The product on packed k-major panels.
pub static GEMM_PANEL: ComputeKernel = ComputeKernel {
    name: "tiled/gemm_panel",
    source: include_str!("../../glsl/tiled/gemm_panel.comp"),
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
    // Compiled with SUPPORT only (`Product::support`: the depth slices a work group skips).
    optional: &["a_support", "a_shift", "b_support", "b_shift"],
};

/// [`GEMM_PANEL`] with FUSED_DIAG (and INV_BINDING 6): then factors and inverts the diagonal
/// block at its output's corner (the trailing update of the tiled Cholesky).
pub static GEMM_PANEL_FUSED: ComputeKernel = ComputeKernel {
    name: "tiled/gemm_panel (then the diagonal block)",
    source: include_str!("../../glsl/tiled/gemm_panel.comp"),
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
    // Set by every panel product, active only with SUPPORT (never compiled so here).
    optional: &["a_support", "a_shift", "b_support", "b_shift"],
};

/// Packs an operand (d folded in) into a panel for [`GEMM_PANEL`].
pub static PACK_PANEL: ComputeKernel = ComputeKernel {
    name: "tiled/pack_panel",
    source: include_str!("../../glsl/tiled/pack_panel.comp"),
    buffers: &[("PanelBuf", 0), ("XBuf", 1), ("DBuf", 3)],
    uniforms: &[
        "rows", "depth", "tile", "kp", "block", "x_off", "x_rs", "x_cs", "use_d", "d_off",
    ],
    optional: &[],
};

/// Inverts the diagonal blocks of a factor for the triangular solves.
pub static TRTRI_BLOCKS: ComputeKernel = ComputeKernel {
    name: "tiled/trtri_blocks",
    source: include_str!("../../glsl/tiled/trtri_blocks.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1)],
    uniforms: &["n", "l_off", "l_rs", "l_cs", "slot0", "in_place"],
    optional: &[],
};

/// x ← x·L⁻ᵀ over one block column of L, each work group solving some rows of x through all
/// of it with the inverted diagonal blocks of [`TRTRI_BLOCKS`] (the split Cholesky's L21).
pub static TRSM_ROWS: ComputeKernel = ComputeKernel {
    name: "tiled/trsm_rows",
    source: include_str!("../../glsl/tiled/trsm_rows.comp"),
    buffers: &[("XBuf", 0), ("LBuf", 1), ("InvBuf", 2)],
    uniforms: &[
        "rows", "w", "x_off", "x_rs", "x_cs", "l_off", "l_rs", "l_cs", "inv_off",
    ],
    optional: &[],
};

/// Triangular solves of one or more right-hand sides in one launch, each a chain of blocks
/// through flags (the diagonal blocks inverted by [`TRTRI_BLOCKS`]).
pub static TRSV_CHAIN: ComputeKernel = ComputeKernel {
    name: "tiled/trsv_chain",
    source: include_str!("../../glsl/tiled/trsv_chain.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1), ("XBuf", 2), ("Sync", 3)],
    uniforms: &[
        "rhs",
        "x_row",
        "x_rhs",
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

/// The triangular solves of one right side of several columns in one launch each way, a work
/// group per block row solving it for every column (the diagonal blocks inverted by
/// [`TRTRI_BLOCKS`]; compiled per vec4s of columns an invocation keeps, `CV`).
pub static TRSV_CHAIN_COLS: ComputeKernel = ComputeKernel {
    name: "tiled/trsv_chain_cols",
    source: include_str!("../../glsl/tiled/trsv_chain_cols.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1), ("XBuf", 2), ("Sync", 3)],
    uniforms: &[
        "cols",
        "x_row",
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
    source: include_str!("../../glsl/tiled/potrf_block.comp"),
    buffers: &[("CBuf", 0), ("Status", 5)],
    uniforms: &["n", "c_off", "c_rs", "c_cs", "column0"],
    optional: &[],
};

/// The triangular solve with one diagonal block.
pub static TRSM_BLOCK: ComputeKernel = ComputeKernel {
    name: "tiled/trsm_block",
    source: include_str!("../../glsl/tiled/trsm_block.comp"),
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
    source: include_str!("../../glsl/tiled/potrf_chain.comp"),
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
    source: include_str!("../../glsl/tiled/potrf_inv_block.comp"),
    buffers: &[("CBuf", 0), ("InvBuf", 1), ("Status", 5)],
    uniforms: &["n", "c_off", "c_rs", "c_cs", "column0", "inv_off"],
    optional: &[],
};
