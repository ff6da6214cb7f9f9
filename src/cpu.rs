//! Dense linear algebra on the CPU (faer, multi-threaded): the products and the Cholesky
//! factor the library falls back to in f64 (as LAPACK's dsposv falls back to dpotrf) and checks
//! its results with; the benchmarks' CPU baseline (`baseline`) is built on them.

use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{self, LltError};
use faer::linalg::matmul::triangular::{BlockStructure, matmul};
use faer::{Accum, Mat, Par};

/// Numbers faer computes with here: f32 (Figs 8-9) and f64 (the tables' CPU solve).
pub trait Real: faer::traits::RealField + Copy + Into<f64> {}
impl Real for f32 {}
impl Real for f64 {}

/// Every core (rayon's pool): faer's own global default is sequential, so the library's
/// host work names its parallelism explicitly.
pub fn all_cores() -> Par {
    Par::rayon(0)
}

/// Parallelism: `threads` = 0 uses all of rayon's threads.
pub fn par(threads: usize) -> Par {
    if threads == 1 {
        Par::Seq
    } else {
        Par::rayon(threads)
    }
}

/// Copies a host matrix into faer's column-major storage.
pub fn to_faer<T: Real>(m: &Matrix<T>) -> Mat<T> {
    Mat::from_fn(m.rows(), m.cols(), |i, j| m[(i, j)])
}

/// Copies faer's matrix back.
pub fn from_faer<T: Real + Default>(m: &Mat<T>) -> Matrix<T> {
    Matrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

/// B = A·diag(d), the column scaling of Algorithm 2 done at once.
pub fn scale_columns<T: Real>(a: &Mat<T>, d: &[T]) -> Mat<T> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, k| a[(i, k)] * d[k])
}

/// Writes the lower triangle (with diagonal) of A·Bᵀ into `c` (B = A·diag(d)); the upper
/// triangle is not touched. Half the work of a full product.
pub fn assemble_lower_into<T: Real>(c: &mut Mat<T>, a: &Mat<T>, b: &Mat<T>, par: Par) {
    matmul(
        c.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        a.as_ref(),
        BlockStructure::Rectangular,
        b.transpose(),
        BlockStructure::Rectangular,
        T::one_impl(),
        par,
    );
}

/// Factors the lower triangle of `c` in place (C = L·Lᵀ); the strict upper triangle is left as
/// it was. A pivot that is not positive gives [`NumericalError::NotPositiveDefinite`].
pub fn cholesky_in_place<T: Real>(c: &mut Mat<T>, par: Par) -> Result<()> {
    let n = c.nrows();
    let mut buffer = MemBuffer::new(factor::cholesky_in_place_scratch::<T>(
        n,
        par,
        Default::default(),
    ));
    let stack = MemStack::new(&mut buffer);
    match factor::cholesky_in_place(
        c.as_mut(),
        Default::default(),
        par,
        stack,
        Default::default(),
    ) {
        Ok(_) => Ok(()),
        Err(LltError::NonPositivePivot { index }) => {
            Err(Error::from(NumericalError::NotPositiveDefinite {
                column: index,
                pivot: Into::<f64>::into(c[(index, index)]),
            }))
        }
    }
}
