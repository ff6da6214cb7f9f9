//! The tiled compute method: assembly's product variants, the Cholesky's blocked and split schedules, the triangular solves, storage over several buffers.

#[path = "../common/mod.rs"]
mod common;

mod assembly_variants;
mod filled_uploads;
mod product_support;
mod tiled;
mod tiled_blocks;
mod tiled_parts;
mod tiled_split;
mod tiled_trsm_wide;
