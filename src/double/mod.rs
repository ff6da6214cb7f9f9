//! f64 factorizations on the GPU, for callers that need the factor or the inverse itself to
//! f64's accuracy (scipy's float64 `cholesky`, `cho_factor` and `inv(assume_a="pos")`), where
//! the paper's kernels and the tiled method carry f32's. Small orders in one chained launch,
//! left-looking by tiles that wait on the GPU for the tiles they read
//! (glsl/double/potrf_chain.comp); larger ones right-looking by blocks of at most 64, two
//! launches a block: one factors the diagonal block, inverts its factor and forms the panel
//! below it (glsl/double/potrf_block.comp), the f64 product (glsl/inverse/dgemm.comp) the
//! trailing update's lower triangle; nothing crosses to the host between blocks.

mod chain;
#[cfg(test)]
mod chain_tests;
mod cholesky;
mod inverse;
pub(crate) mod kernels;
mod solve;
#[cfg(test)]
mod solve_tests;

pub use cholesky::{DoubleCholeskyOptions, DoubleSchedule};
pub(crate) use cholesky::{cholesky, cholesky_into};
pub(crate) use inverse::spd_inverse;
pub use kernels::MAX_BLOCK;
pub(crate) use solve::{InverseFactor, SIDES};
