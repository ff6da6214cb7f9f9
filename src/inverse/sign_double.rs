//! sign(A) by the scaled Newton iteration in f64 on the host (faer's LU inverses): the
//! fallback where the GPU's f32 iterate cannot be inverted (eigenvalues spanning more than
//! f32 resolves, or eigenvectors too ill-conditioned for it), as scipy's `signm` computes
//! such matrices.

use crate::cpu::{from_faer, to_faer};
use crate::error::{NumericalError, Result};
use crate::matrix::Matrix;
use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;

/// Newton steps allowed before the iteration is called unconverged.
const MAX_STEPS: usize = 100;

/// Relative change below which a step that no longer shrinks it ends the iteration as
/// converged (quadratic convergence has reached rounding); above it such a step is a stall.
const STALL_BELOW: f64 = 1e-8;

/// Relative step ‖X_{k+1} − X_k‖_F/‖X_{k+1}‖_F below which the norm scaling is dropped
/// (it would slow the final quadratic steps; Higham, Functions of Matrices, 5.9).
const UNSCALED_BELOW: f64 = 1e-2;

/// sign(A) for A already scaled by a power of two, with the Newton steps taken and
/// ‖I − S²‖_F. X_{k+1} = (μ_k·X_k + (μ_k·X_k)⁻¹)/2 with μ_k = (‖X_k⁻¹‖_F/‖X_k‖_F)^½, until a
/// step no longer shrinks the change (quadratic convergence has reached rounding).
pub fn sign_in_double(a: &Matrix<f64>) -> Result<(Matrix<f64>, usize, f64)> {
    let n = a.rows();
    let mut x = to_faer(a);
    let mut previous_delta = f64::INFINITY;
    let mut scaled = true;
    for step in 0..MAX_STEPS {
        let inverse = x.partial_piv_lu().inverse();
        if !all_finite(&inverse) {
            return Err(NumericalError::SignNotConverged {
                iterations: step,
                why: format!(
                    "the float64 Newton iterate {step} cannot be inverted (an eigenvalue on or \
                     too near the imaginary axis)"
                ),
            }
            .into());
        }
        let mu = if scaled {
            (inverse.norm_l2() / x.norm_l2()).sqrt()
        } else {
            1.0
        };
        let next = (&x * faer::Scale(mu) + &inverse * faer::Scale(1.0 / mu)) * faer::Scale(0.5);
        let delta = (&next - &x).norm_l2() / next.norm_l2();
        x = next;
        if delta < UNSCALED_BELOW {
            scaled = false;
        }
        // Converged: the change at rounding level, or no longer shrinking once quadratic
        // convergence has brought it near rounding (never a stall far from it).
        let stalled = delta >= previous_delta && previous_delta < STALL_BELOW;
        if !scaled && (delta <= 4.0 * f64::EPSILON || stalled) {
            let residual = (Mat::<f64>::identity(n, n) - &x * &x).norm_l2();
            return Ok((from_faer(&x), step + 1, residual));
        }
        previous_delta = if scaled { f64::INFINITY } else { delta };
    }
    Err(NumericalError::SignNotConverged {
        iterations: MAX_STEPS,
        why: "the float64 Newton iteration did not converge".into(),
    }
    .into())
}

fn all_finite(m: &Mat<f64>) -> bool {
    (0..m.ncols()).all(|j| (0..m.nrows()).all(|i| m[(i, j)].is_finite()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigenvalues_spanning_twelve_decades() {
        let a = Matrix::from_fn(4, 4, |i, j| {
            if i == j { [1e6, -1e-6, 3.0, -2.0][i] } else { 0.0 }
        });
        let (s, _, residual) = sign_in_double(&a).unwrap();
        for (j, want) in [1.0, -1.0, 1.0, -1.0].iter().enumerate() {
            assert!((s[(j, j)] - want).abs() < 1e-14, "{j}: {}", s[(j, j)]);
        }
        assert!(residual < 1e-13);
    }

    #[test]
    fn a_singular_matrix_has_no_sign() {
        let a = Matrix::from_fn(2, 2, |i, j| if i == j { [1.0, 0.0][i] } else { 0.0 });
        assert!(sign_in_double(&a).is_err());
    }
}
