//! The f64 Cholesky factor of C = AD²Aᵀ on the CPU (faer), formed from A and d scaled by
//! powers of two (exact) as the GPU's f32 factor is: the fallback when that factor fails or
//! refinement stagnates (as LAPACK's dsposv falls back to dpotrf), with its own singularity
//! test so that a singular C is an error instead of a solution.

use super::refinement::Equations;
use super::{
    Criterion, Fallback, Solution, SolveOptions, Timings, estimate_inverse_norm_1, estimate_norm_1,
    estimate_norm_1_batched, refine,
};
use crate::cpu;
use crate::error::{NumericalError, Result};
use crate::matrix::{Element, MatrixView};
use crate::scaling::{norm_inf, norm2, times_power_of_two};
use crate::symmetric::SymmetricView;
use faer::Mat;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use std::time::{Duration, Instant};

/// A pivot ratio L(j,j)²/C(j,j) at or below this is f64 rounding noise: C is singular to
/// double precision (64·ε ≈ 1.4e-14).
const PIVOT_RATIO_LIMIT: f64 = 64.0 * f64::EPSILON;

/// L with C' = L·Lᵀ in f64, C' = (2^e·A)·diag(2^f·d)·(2^e·A)ᵀ = 4^e·2^f·C.
pub struct DoubleFactor {
    l: Mat<f64>,
    /// Whether C is A·D²·Aᵀ (least squares) or given (the SPD solve): the errors name it so.
    normal: bool,
    /// 2^e.
    a_scale: f64,
    /// 2^f.
    d_scale: f64,
}

impl DoubleFactor {
    /// Forms C' in f64 (all cores) and factors it. A is a `&Matrix` or any [`MatrixView`],
    /// read where it lies into the scaled copy the factorization works on. A pivot that is not
    /// positive is [`NumericalError::NotPositiveDefinite`] with the f64 failing column.
    pub fn of<'a>(
        a: impl Into<MatrixView<'a, f64>>,
        d: &[f64],
        a_scale: f64,
        d_scale: f64,
    ) -> Result<Self> {
        let a = a.into();
        let m = a.rows();
        let par = crate::cpu::all_cores();
        let a_mat = Mat::from_fn(m, a.cols(), |i, k| a.get(i, k) * a_scale);
        let scaled_d: Vec<f64> = d.iter().map(|v| v * d_scale).collect();
        let scaled = cpu::scale_columns(&a_mat, &scaled_d);
        let mut c = Mat::<f64>::zeros(m, m);
        cpu::assemble_lower_into(&mut c, &a_mat, &scaled, par);
        cpu::cholesky_in_place(&mut c, par)?;
        Ok(Self {
            l: c,
            normal: true,
            a_scale,
            d_scale,
        })
    }

    /// Factors C' = `scale`·C in f64 (C symmetric, its lower triangle read; `scale` a power of
    /// two; an f32 C widened as it is read). A pivot that is not positive is
    /// [`NumericalError::NotPositiveDefinite`].
    pub(crate) fn of_symmetric<T: Element>(c: &SymmetricView<'_, T>, scale: f64) -> Result<Self> {
        let m = c.order();
        let mut l = Mat::from_fn(m, m, |i, j| if i >= j { c.get(i, j) * scale } else { 0.0 });
        cpu::cholesky_in_place(&mut l, crate::cpu::all_cores())?;
        Ok(Self {
            l,
            normal: false,
            a_scale: 1.0,
            d_scale: scale,
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
        let par = crate::cpu::all_cores();
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

    /// κ₁ of C' equilibrated to a unit diagonal (S·C'·S with S = diag(C'(j,j))^-½), estimated
    /// by Hager's method through f64 products and solves: how LAPACK's expert drivers (dposvx)
    /// judge singularity, so that a graded C (unknowns in different units) counts as well
    /// conditioned as its equilibrated form. `scaled_diagonal` is C'’s diagonal.
    pub fn equilibrated_condition(&self, scaled_diagonal: &[f64]) -> f64 {
        let m = self.l.nrows();
        let s: Vec<f64> = scaled_diagonal.iter().map(|d| d.sqrt().recip()).collect();
        let product = |v: &[f64]| -> Vec<f64> {
            // S·L·Lᵀ·S·v.
            let sv: Vec<f64> = v.iter().zip(&s).map(|(v, s)| v * s).collect();
            // Lᵀ·(S·v), then L·that, reading L's lower triangle only.
            let t: Vec<f64> = (0..m)
                .map(|k| (k..m).map(|i| self.l[(i, k)] * sv[i]).sum())
                .collect();
            (0..m)
                .map(|i| s[i] * (0..=i).map(|k| self.l[(i, k)] * t[k]).sum::<f64>())
                .collect()
        };
        let inverse = |v: &[f64]| -> Vec<f64> {
            // S⁻¹·C'⁻¹·S⁻¹·v.
            let v: Vec<f64> = v.iter().zip(&s).map(|(v, s)| v / s).collect();
            let z = self.solve_scaled(&v);
            z.iter().zip(&s).map(|(z, s)| z / s).collect()
        };
        // Both operators are symmetric: Hager's estimate of ‖·‖₁ applies to each.
        estimate_norm_1(m, product) * estimate_inverse_norm_1(m, inverse)
    }

    /// Refuses a C singular to double precision: the condition of C' equilibrated to a unit
    /// diagonal ([`DoubleFactor::equilibrated_condition`]) at or beyond 1/ε, or a pivot ratio
    /// L(j,j)²/C'(j,j) at rounding level. `scaled_diagonal` is C'’s diagonal.
    pub fn check_singular(&self, scaled_diagonal: &[f64]) -> Result<()> {
        let condition = self.equilibrated_condition(scaled_diagonal);
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
            let (matrix, hint) = match self.normal {
                true => ("AD²Aᵀ", "check that A has full row rank"),
                false => ("C", "C is not positive definite to working precision"),
            };
            return Err(NumericalError::SingularToDouble {
                matrix,
                hint,
                condition,
                column,
                ratio,
            }
            .into());
        }
        Ok(())
    }
}

/// C's scale and diagonal as the factors see them: C' = 2^`exponent`·C, C'’s diagonal.
pub(crate) struct Scaled<'a> {
    pub(crate) exponent: i32,
    pub(crate) diagonal: &'a [f64],
}

/// The solve through an f64 factor on the CPU (the fallback): x⁰ = C⁻¹g, refined in f64
/// against the same test, C checked for singularity to double precision first. `start` is
/// the solve's start and `factor` the time its factor was ready.
pub(crate) fn solve_in_double(
    equations: &impl Equations,
    double: &DoubleFactor,
    scaled: &Scaled<'_>,
    options: &SolveOptions,
    reason: Fallback,
    (start, factor): (Instant, Duration),
) -> Result<Solution> {
    let m = equations.order();
    let Ok(norm_c_scaled) = scaled_norm(m, scaled.exponent, |vs| {
        Ok::<_, std::convert::Infallible>(vs.iter().map(|v| equations.apply(v)).collect())
    });
    let norm_c = times_power_of_two(norm_c_scaled, -scaled.exponent);
    let condition = norm_c_scaled * double.inverse_norm_scaled();
    double.check_singular(scaled.diagonal)?;
    let rhs = equations.rhs();
    let x0 = double.correct(rhs);
    let x0_time = start.elapsed();
    let tolerance = options.tolerance_for(m);
    let refinement = refine(
        |x| Ok(equations.residual(x)),
        |r| Ok(double.correct(r)),
        &x0,
        norm_c,
        norm_inf(rhs),
        options.stopping(m),
    )?;
    // Refinement in f64 may stop on stagnation at rounding level: the test decides.
    let converged = match options.criterion {
        Criterion::BackwardError => refinement.backward_error <= tolerance,
        Criterion::Paper => {
            let r = norm2(&equations.residual(&refinement.x));
            r <= tolerance * norm2(&refinement.x)
        }
    };
    let timings = Timings {
        factor,
        x0: x0_time,
        refine: start.elapsed() - x0_time,
        total: start.elapsed(),
    };
    let solution = Solution::refined(
        refinement,
        x0,
        options,
        tolerance,
        condition,
        Some(reason),
        timings,
    )?;
    Ok(Solution {
        converged,
        ..solution
    })
}

/// An estimate of ‖C'‖₁ = ‖2^s·C‖₁ from products with C (`apply_many`, several vectors a call,
/// as [`estimate_norm_1_batched`] makes them), each taken as 2^(s−h)·C·(2^h·v), h = s/2, so that
/// neither the product nor its input leaves f64's range where C itself lies near its edges (the
/// ‖C‖₁ of the condition estimate κ₁ = ‖C'‖₁·‖C'⁻¹‖₁). An error from `apply_many` is the
/// estimate's.
pub(crate) fn scaled_norm<E>(
    m: usize,
    s: i32,
    mut apply_many: impl FnMut(&[&[f64]]) -> std::result::Result<Vec<Vec<f64>>, E>,
) -> std::result::Result<f64, E> {
    let h = s / 2;
    estimate_norm_1_batched(m, |vs| {
        let ws: Vec<Vec<f64>> = vs
            .iter()
            .map(|v| v.iter().map(|&x| times_power_of_two(x, h)).collect())
            .collect();
        let ws: Vec<&[f64]> = ws.iter().map(Vec::as_slice).collect();
        Ok(apply_many(&ws)?
            .into_iter()
            .map(|y| {
                y.into_iter()
                    .map(|y| times_power_of_two(y, s - h))
                    .collect()
            })
            .collect())
    })
}
