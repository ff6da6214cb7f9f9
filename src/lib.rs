//! symraster: dense symmetric linear algebra by drawing triangles.
//!
//! A faithful implementation of Jung & O'Leary, "Exploiting Structure of Symmetric or
//! Triangular Matrices on a GPU" (2008): C = A·D²·Aᵀ (Algorithm 3) and its Cholesky factor
//! (Algorithm 5) computed by OpenGL fragment shaders over triangles that cover exactly the
//! lower triangle, with a plain CPU reference (Algorithms 2 and 4).
//!
//! ```no_run
//! use symraster::{Format, Gpu, Matrix};
//! let gpu = Gpu::new()?;
//! let a = Matrix::from_fn(3, 6, |i, j| ((i * 6 + j) % 5) as f32 + 1.0);
//! let d = vec![1.0f32; 6];
//! let c = gpu.assemble(&a, &d, Format::Full)?;      // lower triangle of A·diag(d)·Aᵀ
//! let l = gpu.cholesky(&c, Format::Full)?;          // C = L·Lᵀ
//! # Ok::<(), symraster::Error>(())
//! ```

pub mod baseline;
pub mod error;
pub mod execution;
pub mod geometry;
pub mod gl;
mod gpu;
pub mod io;
pub mod kernels;
pub mod layout;
pub mod least_squares;
mod lu;
pub mod matrix;
pub mod normal_equations;
pub mod packed;
pub mod reference;
pub mod reproduce;
pub mod rfp;
pub mod tables;
pub mod testing;
pub mod timing;
pub mod view;

pub use error::{Error, Result};
pub use gpu::{Gpu, Method, Options, assembly_plan, check_factor, cholesky_plan};
pub use layout::{Format, Layout};
pub use least_squares::{Solution, SolveOptions, Timings};
pub use lu::LuFactors;
pub use matrix::{Matrix, relative_error};
pub use packed::PackedMatrix;
