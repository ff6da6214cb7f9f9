//! symraster: dense symmetric linear algebra by drawing triangles.
//!
//! A faithful implementation of Jung & O'Leary, "Exploiting Structure of Symmetric or
//! Triangular Matrices on a GPU" (2008): C = A·D²·Aᵀ (Algorithm 3) and its Cholesky factor
//! (Algorithm 5) computed by OpenGL fragment shaders over triangles that cover exactly the
//! lower triangle, with a plain CPU reference (Algorithms 2 and 4).
//!
//! One [`Gpu`] (a headless OpenGL context on this thread) has one method per operation; the
//! method (faithful, blocked, tiled) and the storage format are [`Options`], [`Method::Auto`]
//! (the default) taking the fastest the device runs. Inputs may be `f32` or `f64`
//! ([`Element`]): the GPU computes in f32, and each operation's docs say what precision its
//! result carries.
//!
//! Factor and solve (every Cholesky gives one [`Cholesky`], L kept on the GPU where the
//! method computed it there, its solves run where L is):
//!
//! ```
//! use symraster::{Format, Gpu, Matrix, Options};
//! let gpu = Gpu::new()?;
//! let a = Matrix::from_fn(3, 6, |i, j| ((i * 6 + j) % 5) as f32 + 1.0);
//! let d = vec![1.0f32; 6];
//! let c = gpu.assemble(&a, &d, Format::Full)?;       // lower triangle of A·diag(d)·Aᵀ
//! let l = gpu.cholesky(&c, Options::default())?;     // C = L·Lᵀ
//! let x = l.solve(&[1.0, 2.0, 3.0])?;                // C·x = b: f64 in and out, f32-accurate
//! let l2 = gpu.factor_product(&a, &d, Format::Packed)?; // the same L, C never leaving the GPU
//! assert_eq!(l2.order(), 3);
//! let r = c.to_f64().symmetric_from_lower().mul_vec(&x.iter().map(|&v| v.into()).collect::<Vec<f64>>())?;
//! assert!((r[2] - 3.0).abs() < 1e-3);
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! The SPD solve, f64 in and f64 out (LAPACK's dsposv: the f32 factor on the GPU, refinement
//! in f64, an f64 CPU fallback where that does not reach the tolerance):
//!
//! ```
//! use symraster::{Gpu, Matrix, SolveOptions};
//! let gpu = Gpu::new()?;
//! let c = Matrix::from_row_major(2, 2, vec![4.0, 1.0, 1.0, 3.0])?;
//! let s = gpu.spd_solve(&c, &[1.0, 2.0], SolveOptions::default())?;
//! assert!(s.converged && s.backward_error < 1e-15);
//! println!("x = {:?} after {} steps, κ ≈ {:.1}", s.x, s.iterations, s.condition);
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! Weighted least squares min ‖D(b − Aᵀx)‖₂ (section 5.3), the same refinement:
//!
//! ```
//! use symraster::{Gpu, Matrix, SolveOptions};
//! let gpu = Gpu::new()?;
//! let a = Matrix::from_fn(2, 5, |i, j| (i + j) as f64 + (i * j) as f64 * 0.5 + 1.0);
//! let (d, b) = (vec![1.0; 5], vec![1.0, 2.0, 0.0, -1.0, 3.0]);
//! let s = gpu.least_squares(&a, &d, &b, SolveOptions::default())?;
//! assert!(s.converged && s.x.len() == 2);
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! Inversion, the sign function and Lyapunov equations (compute shaders; f64 results):
//!
//! ```
//! use symraster::{Gpu, InvertOptions, Matrix};
//! let gpu = Gpu::new()?;
//! let m = Matrix::from_row_major(2, 2, vec![4.0, 1.0, 1.0, 3.0])?;
//! let inv = gpu.invert(&m, InvertOptions::spd())?.x;           // M⁻¹ (lower triangle read)
//! assert!(m.matmul(&inv)?.max_abs() < 1.0 + 1e-12);
//! let a = Matrix::from_row_major(2, 2, vec![-2.0, 1.0, 0.0, 3.0])?;
//! let s = gpu.sign(&a, Default::default())?.s;                 // sign(A)
//! assert!((s.matmul(&s)?[(0, 0)] - 1.0).abs() < 1e-10);
//! let stable = Matrix::from_row_major(2, 2, vec![-2.0, 1.0, 0.0, -3.0])?;
//! let x = gpu.lyapunov(&stable, &Matrix::identity(2), Default::default())?.x; // A·X + X·Aᵀ = I
//! let r = &(&stable * &x) + &(&x * &stable.transpose());
//! assert!((r[(0, 0)] - 1.0).abs() < 1e-10 && r[(0, 1)].abs() < 1e-10);
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! Errors are typed: [`Error::Input`] (bad input), [`Error::Device`] (the GPU cannot),
//! [`Error::Numerical`] (no trustworthy result) and [`Error::OutOfMemory`] (an allocation the
//! host or the GPU refused, never an abort), each with a one-line message:
//!
//! ```
//! use symraster::{Error, Gpu, Matrix, NumericalError, Options};
//! let gpu = Gpu::new()?;
//! let c = Matrix::from_row_major(2, 2, vec![1.0f32, 2.0, 2.0, 1.0])?; // indefinite
//! match gpu.cholesky(&c, Options::default()) {
//!     Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
//!         assert_eq!(column, 1)
//!     }
//!     other => panic!("expected NotPositiveDefinite, got {other:?}"),
//! }
//! # Ok::<(), symraster::Error>(())
//! ```
//!
//! Where things are: [`gpu`] is the API ([`Gpu`], one file per operation; [`Gpu::step`] runs
//! an operation pass by pass for the debugger); [`least_squares`] the refined solves'
//! options and results (Algorithm 1); [`tuning`] the methods' tuning; [`layout`] the storage
//! formats (the paper's packed format, LAPACK's RFP); [`io`] .npy and .mtx files; [`reference`](mod@reference)
//! the f64 CPU references; [`host`] the f64 Cholesky factor and solve on the host (for a
//! factor to f64 accuracy); [`error`] the typed errors; [`memory`] the allocations that fail
//! as errors. The rest is internal: `pub(crate)`,
//! and public but hidden from these docs only with the `internals` feature (not API, nothing
//! there is stable: for the program's debugger and reproduction, the benchmarks and the tests
//! of the internals): the paper's method as data (`faithful`: each figure's draw geometry),
//! the fragment-pass machinery it shares with the blocked method (`draw`: the kernel table,
//! plans and the pass runner), the blocked and tiled methods (`blocked`, `tiled`), every
//! compute kernel (`compute_kernels`; each family declares its own in its `table`), inversion,
//! sign and Lyapunov on the tiled kernels (`inverse`), the RAII OpenGL layer (`gl`), the timing and
//! CPU baselines of the benchmarks (`timing`, `baseline`) and the seeded test problems
//! (`problems`). The `symraster` program (command line, debugger, window, reproduction) is a
//! crate of its own, `program/` (package `symraster-cli`).

#![warn(missing_docs)]

/// Declares the internal modules: `pub` (hidden from the docs) with the `internals` feature,
/// for the program's debugger, viewer and reproduction, the benchmarks and the tests of the
/// internals; `pub(crate)` without it, so the library's API is only what the docs show.
/// Without the feature, the items only those users call (benchmark timings, seeded problems,
/// raw-storage entry points) look unused to the compiler: `dead_code` and `unused_imports` are
/// allowed there, in these modules only, and checked as usual with the feature (the program,
/// the benchmarks and the tests build with it).
macro_rules! internal_modules {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code, unused_imports)]
        pub(crate) mod $name;
    )*};
}

internal_modules! {
    baseline;
    blocked;
    compute_kernels;
    draw;
    faithful;
    gl;
    inverse;
    problems;
    tiled;
    timing;
}

pub mod batched;
mod cpu;
mod double;
pub mod error;
mod format;
pub mod gpu;
pub mod host;
/// Not part of the API: the `Gpu` internals as a trait, with the `internals` feature only.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internal;
pub mod io;
pub mod layout;
pub mod least_squares;
pub mod matrix;
pub mod memory;
mod options;
mod phases;
pub mod reference;
mod scaling;
pub mod symmetric;
pub mod tuning;

pub use batched::{AsBatchRef, Batch, BatchFactor, BatchOptions, BatchRef, BatchSolution, Failure};
pub use double::{DoubleCholeskyOptions, DoubleSchedule, MAX_BLOCK as MAX_DOUBLE_BLOCK};
pub use error::{DeviceError, Error, ErrorKind, InputError, NumericalError, Result};
pub use gl::{Context, DeviceInfo};
pub use gpu::{
    Batched, Cholesky, Gpu, GpuBuilder, Limits, LuFactors, Method, Operation, Options, Run,
    TiledLimits,
};
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use gpu::{assembly_plan, check_factor, cholesky_plan};
pub use inverse::{
    AUTO_GJE_MAX_ORDER, Handover, InverseMethod, InvertOptions, Kind, Lyapunov, LyapunovOptions,
    Refined, Sign, SignOptions, Storage,
};
pub use layout::{BlockColumn, Blocking, Format, Layout, PackedMatrix, rfp};
pub use least_squares::{Solution, SolveOptions, SpdFactor, Timings};
pub use matrix::{Element, Matrix, relative_error};
pub use memory::OutOfMemory;
pub use symmetric::{SymmetricView, Triangle};
pub use tuning::{KernelShape, Tuning};
