//! The CPU reference in f64, written plainly after the paper: the yardstick for GPU results.

use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;

/// Algorithm 2: the lower triangle (with diagonal) of C = A·diag(d)·Aᵀ, upper triangle zero.
/// `d` holds the diagonal of D² (the paper's texture d).
pub fn assemble(a: &Matrix<f64>, d: &[f64]) -> Matrix<f64> {
    let (m, n) = a.shape();
    assert_eq!(d.len(), n, "d must have one entry per column of A");
    let mut c = Matrix::zeros(m, m);
    let mut b = vec![0.0; m];
    for k in 0..n {
        for i in 0..m {
            b[i] = d[k] * a[(i, k)];
        }
        for j in 0..m {
            for i in j..m {
                c[(i, j)] += a[(i, k)] * b[j];
            }
        }
    }
    c
}

/// Algorithm 4: the Cholesky factor L (C = L·Lᵀ) from the lower triangle of `c` only.
///
/// Fails with [`NumericalError::NotPositiveDefinite`] naming the first column whose pivot is not
/// positive (0-based).
pub fn cholesky(c: &Matrix<f64>) -> Result<Matrix<f64>> {
    let m = c.rows();
    assert_eq!(c.cols(), m, "cholesky needs a square matrix");
    let mut l = c.lower_triangle();
    for k in 0..m {
        let pivot = l[(k, k)];
        if pivot.is_nan() || pivot <= 0.0 {
            return Err(Error::from(NumericalError::NotPositiveDefinite {
                column: k,
                pivot,
            }));
        }
        l[(k, k)] = pivot.sqrt();
        for i in k + 1..m {
            l[(i, k)] /= l[(k, k)];
        }
        for i in k + 1..m {
            for j in k + 1..=i {
                l[(i, j)] -= l[(j, k)] * l[(i, k)];
            }
        }
    }
    Ok(l)
}

/// LU without pivoting (Doolittle), in place: the unit-lower L below the diagonal, U on and
/// above it. A zero pivot gives [`NumericalError::ZeroPivot`] with its column.
pub fn lu_no_pivoting(a: &Matrix<f64>) -> Result<Matrix<f64>> {
    let m = a.rows();
    assert_eq!(a.cols(), m, "LU needs a square matrix");
    let mut lu = a.clone();
    for k in 0..m {
        let pivot = lu[(k, k)];
        if pivot == 0.0 || !pivot.is_finite() {
            return Err(Error::from(NumericalError::ZeroPivot {
                column: k,
                pivot: pivot as f32,
            }));
        }
        for i in k + 1..m {
            lu[(i, k)] /= pivot;
        }
        for i in k + 1..m {
            for j in k + 1..m {
                lu[(i, j)] -= lu[(i, k)] * lu[(k, j)];
            }
        }
    }
    Ok(lu)
}

/// L·U from a combined LU matrix (unit-lower L below the diagonal, U on and above).
pub fn multiply_lu(lu: &Matrix<f64>) -> Matrix<f64> {
    let m = lu.rows();
    Matrix::from_fn(m, m, |i, j| {
        let l = |i: usize, k: usize| if i == k { 1.0 } else { lu[(i, k)] };
        (0..=i.min(j)).map(|k| l(i, k) * lu[(k, j)]).sum()
    })
}

/// L·Lᵀ in f64, for backward-error checks.
pub fn multiply_lower_by_transpose(l: &Matrix<f64>) -> Matrix<f64> {
    let m = l.rows();
    Matrix::from_fn(m, m, |i, j| {
        (0..=i.min(j)).map(|k| l[(i, k)] * l[(j, k)]).sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assemble_small_by_hand() {
        // A = [1 2; 3 4], d = [1, 2]: C = [1+8, 3+16; ., 9+32].
        let a = Matrix::from_row_major(2, 2, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let c = assemble(&a, &[1.0, 2.0]);
        assert_eq!(c.as_slice(), &[9.0, 0.0, 19.0, 41.0]);
    }

    #[test]
    fn cholesky_by_hand_and_reads_lower_only() {
        let c = Matrix::from_row_major(2, 2, vec![4.0, f64::NAN, 2.0, 5.0]).unwrap();
        let l = cholesky(&c).unwrap();
        assert_eq!(l.as_slice(), &[2.0, 0.0, 1.0, 2.0]);
    }

    #[test]
    fn not_positive_definite_names_column() {
        let c = Matrix::from_row_major(3, 3, vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
            .unwrap();
        match cholesky(&c) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                assert_eq!(column, 1)
            }
            other => panic!("expected not positive definite, got {other:?}"),
        }
    }
}
