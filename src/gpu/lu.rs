//! LU without pivoting on the GPU: the comparison of Fig 9 (Galoppo et al.'s LU-GPU), built
//! from the same kernels as Cholesky.

use super::Gpu;
use crate::draw::execution::{Execution, Operands};
use crate::error::{Error, NumericalError, Result};
use crate::faithful;
use crate::gl::PingPong;
use crate::layout::Format;
use crate::matrix::{Element, Matrix, check_finite, check_square};

/// A combined LU factor: unit-lower L strictly below the diagonal, U on and above it.
#[derive(Clone, Debug, PartialEq)]
pub struct LuFactors {
    /// The combined matrix, as LAPACK's getrf stores it (here without row interchanges).
    pub lu: Matrix<f32>,
}

impl LuFactors {
    /// The unit-lower-triangular L.
    pub fn l(&self) -> Matrix<f32> {
        let lu = &self.lu;
        Matrix::from_fn(lu.rows(), lu.cols(), |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Greater => lu[(i, j)],
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Less => 0.0,
        })
    }

    /// The upper-triangular U.
    pub fn u(&self) -> Matrix<f32> {
        let lu = &self.lu;
        Matrix::from_fn(
            lu.rows(),
            lu.cols(),
            |i, j| if j >= i { lu[(i, j)] } else { 0.0 },
        )
    }
}

impl Gpu {
    /// LU without pivoting of the square `a` (full format only). Meant for matrices that need
    /// no pivoting (diagonally dominant ones); a zero pivot gives [`NumericalError::ZeroPivot`].
    ///
    /// f64 input is rounded to f32 once (range checked); the factors carry f32's accuracy.
    pub fn lu<T: Element>(&self, a: &Matrix<T>) -> Result<LuFactors> {
        let a = T::single("A", a)?;
        let a = &*a;
        let mut run = self.start_lu(a)?;
        run.finish()?;
        let m = a.rows();
        let lu = run.download_square()?;
        for k in 0..m {
            let pivot = lu[(k, k)];
            if pivot == 0.0 || !pivot.is_finite() {
                return Err(Error::from(NumericalError::ZeroPivot { column: k, pivot }));
            }
        }
        if let Some(p) = lu.as_slice().iter().position(|x| !x.is_finite()) {
            return Err(Error::from(NumericalError::NonFiniteResult {
                row: p / m,
                col: p % m,
            }));
        }
        Ok(LuFactors { lu })
    }

    /// Uploads `a` and prepares the LU passes without running them.
    pub(crate) fn start_lu(&self, a: &Matrix<f32>) -> Result<Execution<'_>> {
        check_square("A", a, "for LU")?;
        let m = a.rows();
        check_finite("A", a)?;
        let layout = self.check_order(m, Format::Full)?;
        let ctx = self.context();
        let pair = PingPong::new(ctx, m, m)?;
        pair.source().texture().upload(a.as_slice())?;
        pair.target().texture().fill(0.0)?;
        Execution::new(
            ctx,
            self.kernels(),
            faithful::lu::full_plan(m),
            layout,
            pair,
            Operands::PairOnly,
        )
    }
}
