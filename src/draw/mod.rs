//! The fragment-shader machinery the drawing methods share (the paper's `faithful` and the
//! `blocked` method): the kernel table ([`kernels`], each kernel declared once), a run's
//! geometry as data ([`Plan`], [`Pass`], [`Vertex`]) and the pass runner ([`execution`]).

pub mod execution;
pub mod kernels;
mod plan;
mod vertex;

pub use execution::{Execution, Operands};
pub use kernels::{Input, Kernel, Kernels, Target};
pub use plan::{Pass, Plan};
pub use vertex::{Vertex, rectangle, texel_quad};
