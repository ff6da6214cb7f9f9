//! The batched operations (many small problems in one launch) against f64 references problem by problem.

#[path = "../common/mod.rs"]
mod common;

mod batched;
mod batched_gram;
mod batched_inverse;
mod batched_residual;
mod batched_scan;
mod batched_single_x;
mod batched_singular;
mod batched_tiles;
mod batched_triangles;
mod batched_view;
