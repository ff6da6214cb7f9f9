//! The result of a Cholesky factorization: the factor with the operations that use it.

use crate::error::{Error, Result};
use crate::layout::{PackedMatrix, rfp};
use crate::matrix::Matrix;

/// The Cholesky factor L of a symmetric positive definite C = L·Lᵀ, in single precision as the
/// GPU computed it, with solves against it (like faer's and nalgebra's `Cholesky`).
#[derive(Clone, Debug, PartialEq)]
pub struct CholeskyFactor {
    l: Matrix<f32>,
}

impl CholeskyFactor {
    /// Wraps a lower-triangular factor (the upper triangle is ignored).
    pub fn new(l: Matrix<f32>) -> Self {
        Self { l }
    }

    /// The order m.
    pub fn order(&self) -> usize {
        self.l.rows()
    }

    /// L, lower triangular with the upper triangle zero.
    pub fn l(&self) -> &Matrix<f32> {
        &self.l
    }

    /// L by value.
    pub fn into_l(self) -> Matrix<f32> {
        self.l
    }

    /// L in the paper's rectangular packed format.
    pub fn to_packed(&self) -> PackedMatrix {
        PackedMatrix::from_lower(&self.l).expect("a factor is square")
    }

    /// L as LAPACK's RFP array (TRANSR = 'N', UPLO = 'L'), m(m+1)/2 values.
    pub fn to_rfp(&self) -> Vec<f32> {
        rfp::from_lower(&self.l).expect("a factor is square")
    }

    /// Solves L·Lᵀ·x = b in f32 arithmetic: forward substitution L·y = b from the first
    /// equation to the last, then back substitution Lᵀ·x = y from the last to the first
    /// (section 2). `b` must have m finite entries ([`crate::InputError::NonFinite`] otherwise:
    /// a NaN would make x all NaN).
    pub fn solve(&self, b: &[f32]) -> Result<Vec<f32>> {
        let mut x = b.to_vec();
        self.solve_in_place(&mut x)?;
        Ok(x)
    }

    /// [`CholeskyFactor::solve`] overwriting `b` with x.
    pub fn solve_in_place(&self, b: &mut [f32]) -> Result<()> {
        let (l, m) = (&self.l, self.order());
        if b.len() != m {
            return Err(Error::shape(format!(
                "the factor is {m}x{m}, so the right side needs {m} entries, but has {}",
                b.len()
            )));
        }
        crate::matrix::check_finite_vec("b (the right side)", b)?;
        for i in 0..m {
            let s: f32 = l.row(i)[..i].iter().zip(&b[..i]).map(|(a, b)| a * b).sum();
            b[i] = (b[i] - s) / l[(i, i)];
        }
        for i in (0..m).rev() {
            b[i] /= l[(i, i)];
            let bi = b[i];
            for (bk, &lik) in b[..i].iter_mut().zip(&l.row(i)[..i]) {
                *bk -= lik * bi;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;

    #[test]
    fn solve_inverts_llt_and_ignores_the_upper_triangle() {
        let l = Matrix::from_row_major(3, 3, vec![2.0f32, 9.0, 9.0, 1.0, 3.0, 9.0, 0.5, -1.0, 4.0])
            .unwrap();
        let z = [1.0f32, -2.0, 0.25];
        let llt = reference::multiply_lower_by_transpose(&l.lower_triangle().to_f64());
        let r: Vec<f32> = (0..3)
            .map(|i| (0..3).map(|j| llt[(i, j)] * f64::from(z[j])).sum::<f64>() as f32)
            .collect();
        let got = CholeskyFactor::new(l).solve(&r).unwrap();
        for (g, z) in got.iter().zip(z) {
            assert!((g - z).abs() < 1e-5, "{got:?}");
        }
    }

    #[test]
    fn solve_checks_the_length() {
        let f = CholeskyFactor::new(Matrix::from_fn(2, 2, |i, j| (i == j) as u8 as f32));
        assert!(matches!(
            f.solve(&[1.0]),
            Err(Error::Input(crate::InputError::Shape(_)))
        ));
    }
}
