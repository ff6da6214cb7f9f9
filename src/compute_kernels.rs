//! Every compute kernel of every family, for checks over the whole set (each kernel is declared
//! once, in its family's table: `tiled::table`, `inverse::table`, `batched::table`, the device
//! residual's in `gpu::residual_kernels`, the preheat in `timing`). A program is linked from its entry
//! ([`ComputeProgram::new`]), which checks the driver's active uniforms and blocks against the
//! declaration, and only declared uniforms can be set: a misspelt name is an error, not a
//! silent no-op.
//!
//! [`ComputeProgram::new`]: crate::gl::ComputeProgram::new

use crate::batched::table::*;
use crate::gl::ComputeKernel;
use crate::gpu::residual_kernels::*;
use crate::inverse::table::*;
use crate::tiled::table::*;
use crate::timing::PREHEAT;

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
    &TRSV_CHAIN_COLS,
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
    &INTERCHANGE,
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
    &TRANSPOSE,
    &GATHER,
    &COLUMN_SUMS,
    &PREHEAT,
    &BATCHED_ASSEMBLE,
    &BATCHED_CHOLESKY,
    &BATCHED_SPD_SOLVE,
    &BATCHED_LEAST_SQUARES,
    &BATCHED_GRAM,
    &BATCHED_PREPARE,
];
