//! Continuous Lyapunov equations by the sign function (Roberts; Benner et al. section 2), with
//! scipy's convention: `solve_continuous_lyapunov(a, q)` solves A·X + X·Aᵀ = Q for stable A.
//!
//! For H = [[A, Q], [0, −Aᵀ]] with A stable, sign(H) = [[−I, Y], [0, I]] where A·Y + Y·Aᵀ =
//! −2Q (from sign(H)·H = H·sign(H)), so X = −Y/2. The Newton iteration on H keeps its block
//! form: A_{k+1} = (μA_k + A_k⁻¹/μ)/2 and C_{k+1} = (μC_k + A_k⁻¹C_kA_k⁻ᵀ/μ)/2 with C₀ = Q,
//! so only order-n inverses are needed (GPU Gauss-Jordan, f32). A_k → sign(A), which must be
//! −I: otherwise A is not stable ([`NumericalError::NotStable`]). The C-update is linear in C,
//! so the recorded (μ_k, A_k⁻¹) give an approximate solution operator; iterative refinement
//! with the f64 residual Q − AX − XAᵀ brings X to double accuracy when the f32 operator is
//! accurate enough (κ·u₃₂ well below 1). The products of the C-update run in f64 on the CPU.

use super::sign::{change, converged, iterate_inverse, scaling};
use super::{Inverter, Kind, check_input};
use crate::baseline::{from_faer, to_faer};
use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;
use faer::Mat;

/// The solution and how it was reached.
#[derive(Clone, Debug)]
pub struct Lyapunov {
    /// X with A·X + X·Aᵀ = Q.
    pub x: Matrix<f64>,
    /// Newton iterations (GPU inverses).
    pub iterations: usize,
    /// ‖Q − AX − XAᵀ‖_F / (‖A‖_F‖X‖_F) after each refinement step (the first before any).
    pub residuals: Vec<f64>,
}

/// The recorded iteration: (μ_k, A_k⁻¹) in order.
struct Operator {
    steps: Vec<(f64, Mat<f64>)>,
}

impl Operator {
    /// X solving A·X + X·Aᵀ = R approximately: C₀ = R through the recorded steps, X = −C/2.
    fn apply(&self, r: &Mat<f64>) -> Mat<f64> {
        let mut c = r.clone();
        for (mu, y) in &self.steps {
            let ycy = y * &c * y.transpose();
            c = (&c * *mu + ycy * (1.0 / mu)) * 0.5;
        }
        c * -0.5
    }
}

/// ‖Q − AX − XAᵀ‖_F / (‖A‖_F‖X‖_F) and the residual itself.
fn residual(a: &Mat<f64>, q: &Mat<f64>, x: &Mat<f64>) -> (Mat<f64>, f64) {
    let r = q - a * x - x * a.transpose();
    let scale = (a.norm_l2() * x.norm_l2()).max(f64::MIN_POSITIVE);
    let norm = r.norm_l2() / scale;
    (r, norm)
}

/// Solves A·X + X·Aᵀ = Q (scipy's `solve_continuous_lyapunov(a, q)`) for stable A, with at
/// most `refine_steps` refinement steps in f64.
pub fn solve_continuous_lyapunov(
    inv: &Inverter,
    a: &Matrix<f64>,
    q: &Matrix<f64>,
    refine_steps: usize,
) -> Result<Lyapunov> {
    check_input("A", a, Kind::General)?;
    check_input("Q", q, Kind::General)?;
    let n = a.rows();
    if q.shape() != (n, n) {
        return Err(Error::shape(format!(
            "A is {n}x{n} but Q is {}x{}; Q must have A's shape",
            q.rows(),
            q.cols()
        )));
    }
    let options = super::SignOptions::default();
    let mut ak = a.clone();
    let mut steps = Vec::new();
    let mut scale = true;
    let mut previous = f64::INFINITY;
    loop {
        let k = steps.len();
        if k == options.max_iterations {
            return Err(NumericalError::SignNotConverged {
                iterations: k,
                why: format!("the Newton iteration did not converge in {k} iterations"),
            }
            .into());
        }
        let y = iterate_inverse(inv, &ak, k, false)?;
        let mu = if scale { scaling(&ak, &y) } else { 1.0 };
        let next = Matrix::from_fn(n, n, |i, j| 0.5 * (mu * ak[(i, j)] + y[(i, j)] / mu));
        steps.push((mu, to_faer(&y)));
        let delta = change(&next, &ak);
        ak = next;
        if !delta.is_finite() {
            return Err(NumericalError::SignNotConverged {
                iterations: k + 1,
                why: "an iterate is not finite".into(),
            }
            .into());
        }
        if delta < 1e-2 {
            scale = false;
        }
        if converged(delta, previous) {
            break;
        }
        previous = delta;
    }
    // A_k → sign(A); stable A means sign(A) = −I.
    let trace: f64 = (0..n).map(|i| ak[(i, i)]).sum();
    let off = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let e = ak[(i, j)] + f64::from(u8::from(i == j));
            e * e
        })
        .sum::<f64>()
        .sqrt();
    if off > 0.1 * (n as f64).sqrt() {
        let unstable = ((n as f64 + trace) / 2.0).round().clamp(0.0, n as f64) as usize;
        return Err(NumericalError::NotStable {
            order: n,
            unstable,
            trace,
        }
        .into());
    }
    let op = Operator { steps };
    let (fa, fq) = (to_faer(a), to_faer(q));
    let mut x = op.apply(&fq);
    let (mut r, mut norm) = residual(&fa, &fq, &x);
    let mut residuals = vec![norm];
    for _ in 0..refine_steps {
        let next = &x + op.apply(&r);
        let (r_next, norm_next) = residual(&fa, &fq, &next);
        if norm_next.is_nan() || norm_next >= norm {
            break;
        }
        x = next;
        r = r_next;
        norm = norm_next;
        residuals.push(norm);
    }
    Ok(Lyapunov {
        x: from_faer(&x),
        iterations: op.steps.len(),
        residuals,
    })
}
