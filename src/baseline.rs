//! The fast CPU baseline (faer, multi-threaded) the GPU is compared with: the lower triangle of
//! A·diag(d)·Aᵀ (as ATLAS's ssyrk in the paper) and the Cholesky factor (as spotrf).

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

/// The lower triangle of A·diag(d)·Aᵀ (upper zero), on the CPU with faer.
pub fn assemble<T: Real + Default>(a: &Matrix<T>, d: &[T], par: Par) -> Matrix<T> {
    let fa = to_faer(a);
    let b = scale_columns(&fa, d);
    let mut c = Mat::zeros(a.rows(), a.rows());
    assemble_lower_into(&mut c, &fa, &b, par);
    from_faer(&c).lower_triangle()
}

/// The Cholesky factor of the lower triangle of `c` (upper zero), on the CPU with faer.
pub fn cholesky<T: Real + Default>(c: &Matrix<T>, par: Par) -> Result<Matrix<T>> {
    let mut fc = to_faer(c);
    cholesky_in_place(&mut fc, par)?;
    Ok(from_faer(&fc).lower_triangle())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{problems as testing, reference, relative_error};

    #[test]
    fn faer_baseline_agrees_with_the_reference() {
        let mut rng = testing::rng(1);
        let a = testing::uniform_matrix(&mut rng, 37, 74).to_f64();
        let d: Vec<f64> = testing::uniform_vector(&mut rng, 74)
            .iter()
            .map(|&x| x as f64)
            .collect();
        let c = assemble(&a, &d, par(0));
        let c_ref = reference::assemble(&a, &d);
        assert!(relative_error(&c, &c_ref) < 1e-14);
        let spd = testing::well_conditioned_spd(&mut rng, 37).to_f64();
        let l = cholesky(&spd, par(0)).unwrap();
        assert!(relative_error(&l, &reference::cholesky(&spd).unwrap()) < 1e-13);
        let mut bad = spd.clone();
        bad[(4, 4)] = -100.0;
        assert!(matches!(
            cholesky(&bad, par(1)),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                column: 4,
                ..
            }))
        ));
    }
}
