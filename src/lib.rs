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
//! let x = l.solve(&[1.0, 2.0, 3.0])?;               // C·x = b
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! Where things are: [`gpu`] is the API ([`Gpu`], one file per operation); [`geometry`] the
//! paper's draw geometry as data, [`kernels`] the fragment kernel table, [`execution`] the pass
//! runner; [`tiled`] the tiled compute path (GL compute kernels over storage buffers);
//! [`inverse`] inversion, the sign function and Lyapunov equations on the tiled kernels; [`gl`]
//! the RAII OpenGL layer; [`layout`] the storage formats; [`reference`] and [`baseline`] the
//! CPU references; [`least_squares`] Algorithm 1; [`io`] .npy and .mtx files; [`problems`]
//! the random test problems (seeded). The `symraster` program (command line, debugger, window,
//! reproduction) lives in `src/bin/symraster/` behind the `cli` feature.

pub mod baseline;
pub mod error;
pub mod execution;
pub mod geometry;
pub mod gl;
pub mod gpu;
#[doc(hidden)]
pub mod internal;
pub mod inverse;
pub mod io;
pub mod kernels;
pub mod layout;
pub mod least_squares;
pub mod matrix;
pub mod problems;
pub mod reference;
pub mod tiled;
pub mod timing;
pub mod tuning;

pub use error::{DeviceError, Error, ErrorKind, InputError, NumericalError, Result};
pub use gpu::{
    Cholesky, Gpu, LuFactors, Method, Operation, Options, Run, assembly_plan, check_factor,
    cholesky_plan,
};
pub use inverse::{InverseMethod, InvertOptions, LyapunovOptions, SignOptions};
pub use layout::{BlockColumn, Blocking, Format, Layout, PackedMatrix, rfp};
pub use least_squares::{Solution, SolveOptions, Timings};
pub use matrix::{Element, Matrix, relative_error};
