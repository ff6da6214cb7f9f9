//! The f64 Cholesky factor of C = AD²Aᵀ on the CPU (faer), formed from A and d scaled by
//! powers of two (exact) as the GPU's f32 factor is: the fallback when that factor fails or
//! refinement stagnates (as LAPACK's dsposv falls back to dpotrf), with its own singularity
//! test so that a singular C is an error instead of a solution.

use super::estimate_inverse_norm_1;
use crate::baseline;
use crate::error::{NumericalError, Result};
use crate::matrix::Matrix;
use faer::Mat;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;

/// A pivot ratio L(j,j)²/C(j,j) at or below this is f64 rounding noise: C is singular to
/// double precision (64·ε ≈ 1.4e-14).
const PIVOT_RATIO_LIMIT: f64 = 64.0 * f64::EPSILON;

/// L with C' = L·Lᵀ in f64, C' = (2^e·A)·diag(2^f·d)·(2^e·A)ᵀ = 4^e·2^f·C.
pub struct DoubleFactor {
    l: Mat<f64>,
    /// 2^e.
    a_scale: f64,
    /// 2^f.
    d_scale: f64,
}

impl DoubleFactor {
    /// Forms C' in f64 (all cores) and factors it. A pivot that is not positive is
    /// [`NumericalError::NotPositiveDefinite`] with the f64 failing column.
    pub fn of(a: &Matrix<f64>, d: &[f64], a_scale: f64, d_scale: f64) -> Result<Self> {
        let m = a.rows();
        let par = faer::get_global_parallelism();
        let a_mat = Mat::from_fn(m, a.cols(), |i, k| a[(i, k)] * a_scale);
        let scaled_d: Vec<f64> = d.iter().map(|v| v * d_scale).collect();
        let scaled = baseline::scale_columns(&a_mat, &scaled_d);
        let mut c = Mat::<f64>::zeros(m, m);
        baseline::assemble_lower_into(&mut c, &a_mat, &scaled, par);
        baseline::cholesky_in_place(&mut c, par)?;
        Ok(Self {
            l: c,
            a_scale,
            d_scale,
        })
    }

    /// z = C⁻¹·r in f64 (C unscaled): C·z = r ⇔ C'·(z/2^e) = 2^e·2^f·r.
    pub fn correct(&self, r: &[f64]) -> Vec<f64> {
        let into = self.a_scale * self.d_scale;
        let v: Vec<f64> = r.iter().map(|v| v * into).collect();
        self.solve_scaled(&v)
            .into_iter()
            .map(|z| z * self.a_scale)
            .collect()
    }

    /// C'⁻¹·v in f64.
    pub fn solve_scaled(&self, v: &[f64]) -> Vec<f64> {
        let m = self.l.nrows();
        let par = faer::get_global_parallelism();
        let mut rhs = Mat::from_fn(m, 1, |i, _| v[i]);
        let mut buffer = MemBuffer::new(llt::solve::solve_in_place_scratch::<f64>(m, 1, par));
        llt::solve::solve_in_place(
            self.l.as_ref(),
            rhs.as_mut(),
            par,
            MemStack::new(&mut buffer),
        );
        (0..m).map(|i| rhs[(i, 0)]).collect()
    }

    /// An estimate of ‖C'⁻¹‖₁ (Hager, through f64 solves).
    pub fn inverse_norm_scaled(&self) -> f64 {
        estimate_inverse_norm_1(self.l.nrows(), |v| self.solve_scaled(v))
    }

    /// Refuses a C singular to double precision: a condition estimate `condition` (κ₁ of C)
    /// at or beyond 1/ε, or a pivot ratio L(j,j)²/C'(j,j) at rounding level.
    /// `scaled_diagonal` is C'’s diagonal.
    pub fn check_singular(&self, condition: f64, scaled_diagonal: &[f64]) -> Result<()> {
        let (column, ratio) = (0..self.l.nrows())
            .map(|j| (j, self.l[(j, j)].powi(2) / scaled_diagonal[j]))
            .fold((0, f64::INFINITY), |best, (j, r)| {
                if r.is_nan() || r < best.1 {
                    (j, r)
                } else {
                    best
                }
            });
        let singular = condition.is_nan() || condition * f64::EPSILON >= 1.0;
        let noise = ratio.is_nan() || ratio <= PIVOT_RATIO_LIMIT;
        if singular || noise {
            let condition = if condition.is_nan() || ratio.is_nan() {
                f64::INFINITY
            } else {
                condition.max(1.0 / ratio)
            };
            return Err(NumericalError::SingularToDouble {
                condition,
                column,
                ratio,
            }
            .into());
        }
        Ok(())
    }
}
