//! The tiled method: GL compute kernels over storage buffers (after the CUDA course's tiled
//! Cholesky), carrying the paper's ideas to tile granularity: only tiles on or below the
//! diagonal are launched (Algorithm 3), the factorization is blocked and stays on the GPU
//! (Algorithm 5), and LAPACK's RFP packed storage runs at the full format's speed (section 3.3).
//!
//! One job per file: [`view`] strided blocks, [`tiles`] the launched tile lists, [`config`]
//! tile sizes per device, [`kernels`] the compiled kernels, [`launches`] what
//! they launched, [`storage`] matrices in buffers
//! (full and RFP), [`assembly`], [`cholesky`], [`trsm_wide`], [`solve`], [`bench`] GPU timings.

pub mod assembly;
pub mod bench;
pub mod cholesky;
pub mod config;
pub mod kernels;
pub mod launches;
pub mod parts;
pub mod product;
pub mod schedule;
pub mod solve;
pub mod status;
pub mod storage;
pub mod table;
pub mod tiles;
pub mod tuning;
pub mod trsm_wide;
pub mod view;

pub use assembly::DeviceProduct;
pub use config::{DiagonalFactor, KernelConfig, PanelVariant};
pub use kernels::{Operand, TiledKernels};
pub use launches::{LaunchCounts, LaunchKind};
pub use parts::{Parts, Region};
pub use product::{Mask, Product, Support, Update};
pub use schedule::{ChainPoll, CholeskySchedule, SplitSolve};
pub use solve::DeviceRhs;
pub use storage::{Storage, TiledMatrix, Triangle};
pub use tuning::TiledTuning;
pub use view::View;
