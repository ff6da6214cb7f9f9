//! The chained launches (the Cholesky as one launch, its split in halves, the one-right-hand-side
//! solves): on llvmpipe every context of this binary runs one thread, so work groups run in
//! ticket order and the chains complete without waits (`common::chain::gpu`).

#[path = "../common/mod.rs"]
mod common;

mod solve_chain;
mod tiled_chain;
mod tiled_chain_split;
