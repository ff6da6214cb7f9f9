//! Continuous Lyapunov equations by the sign function (Roberts; Benner et al. section 2), with
//! scipy's convention: `solve_continuous_lyapunov(a, q)` solves A·X + X·Aᵀ = Q for stable A.
//!
//! For H = [[A, Q], [0, −Aᵀ]] with A stable, sign(H) = [[−I, Y], [0, I]] where A·Y + Y·Aᵀ =
//! −2Q (from sign(H)·H = H·sign(H)), so X = −Y/2. The Newton iteration on H keeps its block
//! form: A_{k+1} = (μA_k + A_k⁻¹/μ)/2 and C_{k+1} = (μC_k + A_k⁻¹C_kA_k⁻ᵀ/μ)/2 with C₀ = Q,
//! so only order-n inverses are needed (GPU Gauss-Jordan, f32). The A-iteration runs on the
//! GPU with its iterate and inverses kept there ([`newton`]); A_k → sign(A),
//! which must be −I: otherwise A is not stable ([`NumericalError::NotStable`]). The C-update
//! is linear in C and depends only on the recorded (μ_k, A_k⁻¹): applied to Q it gives X, and
//! applied to the f64 residual Q − AX − XAᵀ it refines X to double accuracy when the f32
//! operator is accurate enough (κ·u₃₂ well below 1). Its products (two per step, tiled GEMM;
//! the second only its lower triangle, mirrored, where Q is symmetric) run on the GPU in f32, the residual's two in f64 on the GPU ([`double`](super::kernels::double);
//! one where Q is symmetric, and X with it: X·Aᵀ = (A·X)ᵀ),
//! and X, R and the iterate stay there between them ([`convert`](super::convert)): A and Q go
//! up once (Q while the GPU takes the iteration's first inverse) and X comes back once.

use super::kernels::double::{DoubleSquare, DoubleWork};
use super::kernels::{CopyMode, DeviceSquare, Inverter};
use super::sign::scale_for_largest;
use super::{check_general_input, newton};
use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;
use crate::tiled::View;
use crate::tiled::{Product, Update};

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

/// The recorded iteration on the device: (μ_k, A_k⁻¹) in order, and room for the f32 iterate
/// W = Cᵀ and a product.
struct Operator<'a> {
    inv: &'a Inverter,
    steps: Vec<(f64, DeviceSquare)>,
    w: DeviceSquare,
    u: DeviceSquare,
    /// Whether the operator is only applied to symmetric R (a symmetric Q): every C is then
    /// symmetric, so each step's second product forms only its lower triangle, mirrored.
    symmetric: bool,
}

impl Operator<'_> {
    /// Hands the iterate, the product and the recorded inverses back for the next call of the
    /// order ([`Inverter::recycle_single`]).
    fn recycle(self) {
        let inv = self.inv;
        for square in [self.w, self.u].into_iter().chain(self.steps.into_iter().map(|(_, y)| y)) {
            inv.recycle_single(square);
        }
    }

    /// out = base − C/2·s with C the recorded steps C ← (μC + A_k⁻¹·C·A_k⁻ᵀ/μ)/2 applied in
    /// f32 to C₀ = R/s (s ≥ max |R|, so the trip through f32 neither overflows nor
    /// underflows): out approximately solves A·Δ + Δ·Aᵀ = R, plus `base`. All on the device:
    /// W₀ = Rᵀ/s narrowed from the f64 R, the products on W = Cᵀ (both then read their
    /// operands along rows, as the tiled product C ← A·Bᵀ is fastest: U = Y·C = Y·Wᵀ, then
    /// W ← (μW + Y·Uᵀ/μ)/2, the transpose of C's update), Cᵀ widened onto base. Returns
    /// ‖out‖_F; a non-finite result is an error naming its first entry.
    fn apply(
        &self,
        r: &DoubleSquare,
        s: f64,
        out: &DoubleSquare,
        base: Option<&DoubleSquare>,
    ) -> Result<f64> {
        let n = r.n;
        let v = View::row_major(n, n);
        let inv = self.inv;
        let w = &self.w;
        let start = std::time::Instant::now();
        inv.narrow(w.op(v), r.op(true), 1.0 / s)?;
        phase(inv, start, "operator: R narrowed");
        let k = inv.tiled();
        for (mu, y) in &self.steps {
            k.gemm(Product::new(self.u.op(v), y.op(v), w.op(v)))?;
            let update = Product::new(w.op(v), y.op(v), self.u.op(v)).update(Update::Scaled {
                alpha: (0.5 / mu) as f32,
                beta: (0.5 * mu) as f32,
            });
            if self.symmetric {
                // Y·C·Yᵀ of a symmetric C is symmetric: its lower triangle, mirrored up (the
                // transposed view's lower triangle is W's upper one).
                k.gemm(update.lower())?;
                inv.copy(w.op(v.t()), w.op(v), CopyMode::LowerOnly, 1.0)?;
            } else {
                k.gemm(update)?;
            }
        }
        phase(inv, start, "operator: products");
        let sum = inv.widen(out.op(false), w.op(v.t()), -0.5 * s, base.map(|b| (1.0, &b.buffer)))?;
        phase(inv, start, "operator: widened");
        if sum.is_finite() {
            return Ok(sum.sqrt());
        }
        // A non-finite entry, or finite entries whose squares overflow the sum: the norm from
        // the entries scaled by the largest.
        let x = out.download()?;
        if let Some(at) = x.as_slice().iter().position(|x| !x.is_finite()) {
            return Err(NumericalError::NonFiniteResult {
                row: at / n,
                col: at % n,
            }
            .into());
        }
        let max = x.max_abs();
        let scaled: f64 = x.as_slice().iter().map(|v| (v / max) * (v / max)).sum();
        Ok(max * scaled.sqrt())
    }
}

/// Logs (at debug level) the wall time since `start` at the end of `phase`, after the GPU's
/// work has finished (only when debug logging is on: the wait costs time).
fn phase(inv: &Inverter, start: std::time::Instant, phase: &str) {
    if log::log_enabled!(log::Level::Debug) {
        inv.context().finish();
        log::debug!("lyapunov: {phase} done at {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    }
}

/// Whether `q` equals its transpose exactly (compared in 64 x 64 blocks, for the cache; block
/// rows on all cores).
fn is_symmetric(q: &Matrix<f64>) -> bool {
    use rayon::prelude::*;
    let n = q.rows();
    let s = q.as_slice();
    (0..n.div_ceil(64)).into_par_iter().map(|b| b * 64).all(|i0| {
        (0..=i0).step_by(64).all(|j0| {
            (i0..(i0 + 64).min(n)).all(|i| (j0..(j0 + 64).min(i)).all(|j| s[i * n + j] == s[j * n + i]))
        })
    })
}

/// What the solver needs of Q besides Q on the device.
struct QSide {
    /// Q's power-of-two scale ([`power_of_two_scale`](super::sign::power_of_two_scale)).
    scale: f64,
    /// Whether Q equals its transpose.
    symmetric: bool,
    /// The largest |entry| of the scaled Q.
    max_abs: f64,
}

/// Q checked, scaled by its power of two and written into `r`, with what else the solver
/// needs of it.
fn q_up(r: &DoubleSquare, q: &Matrix<f64>) -> Result<QSide> {
    let extent = check_general_input("Q", q)?;
    let scale = scale_for_largest(extent.max_abs);
    let q = q.scaled(scale);
    r.write(&q)?;
    Ok(QSide {
        scale,
        symmetric: is_symmetric(&q),
        max_abs: extent.scaled(scale).max_abs,
    })
}

/// Solves A·X + X·Aᵀ = Q (scipy's `solve_continuous_lyapunov(a, q)`) for stable A, with at
/// most `refine_steps` refinement steps in f64. A and Q may have any scale: both are scaled by
/// powers of two first ([`power_of_two_scale`](super::sign::power_of_two_scale)), and X back, exactly.
pub fn solve_continuous_lyapunov(
    inv: &Inverter,
    a: &Matrix<f64>,
    q: &Matrix<f64>,
    refine_steps: usize,
) -> Result<Lyapunov> {
    let extent = check_general_input("A", a)?;
    let n = a.rows();
    if q.shape() != (n, n) {
        return Err(Error::shape(format!(
            "A is {n}x{n} but Q is {}x{}; Q must have A's shape",
            q.rows(),
            q.cols()
        )));
    }
    // A and Q scaled by powers of two (exact) to largest entries in [1, 2): the f32 iteration
    // then neither overflows nor underflows, and X = (sa/sq)·X' of the scaled equation, exactly.
    let sa = scale_for_largest(extent.max_abs);
    let a = &*a.scaled(sa);
    let extent = extent.scaled(sa);
    let options = super::SignOptions::default();
    let start = std::time::Instant::now();
    // All f64 squares first (kept ones where an earlier call of the order left them), and A
    // up once: the Newton iteration's f32 A is narrowed from the f64 one on the device.
    // A in m, Q in r, X in x and its residual in t; the next X and residual beside them.
    let mut work = DoubleWork::new(inv, n)?;
    let mut x_next = DoubleSquare::new(inv, "the next Lyapunov iterate", n)?;
    let mut r_next = DoubleSquare::new(inv, "the next Lyapunov residual", n)?;
    work.m.write(a)?;
    phase(inv, start, "A up");
    let x0 = inv.single_square("the Newton iterate", n)?;
    inv.narrow(x0.op(View::row_major(n, n)), work.m.op(false), 1.0)?;
    let norm_a = extent.norm;
    let a_start = newton::Start {
        norm: norm_a,
        max_abs: extent.max_abs,
    };
    // Q checked, scaled and up, and its host passes, while the GPU takes the first inverse.
    let mut q_side = None;
    let hooks = newton::Hooks {
        handover: &mut |_, _| Ok(false),
        meanwhile: Some(Box::new(|| {
            q_side = Some(q_up(&work.r, q)?);
            Ok(())
        })),
    };
    let run = newton::iterate_until(inv, x0, a_start, options.max_iterations, true, true, hooks)?;
    let QSide {
        scale: sq,
        symmetric,
        max_abs: q_max,
    } = match q_side {
        Some(side) => side,
        None => q_up(&work.r, q)?,
    };
    phase(inv, start, "Newton iteration, Q up beside it");
    let (trace, off) = newton::trace_and_distance_from_minus_identity(inv, &run.x)?;
    // A NaN sum must not pass as stable (the iteration refuses non-finite iterates already).
    if off.is_nan() || off > 0.1 * (n as f64).sqrt() {
        let unstable = ((n as f64 + trace) / 2.0).round().clamp(0.0, n as f64) as usize;
        return Err(NumericalError::NotStable {
            order: n,
            unstable,
            trace,
        }
        .into());
    }
    inv.recycle_single(run.x);
    // Every square below comes from those earlier calls of the order handed back, where
    // there are any (no allocation or first touch in a repeated solve), and goes back at the end.
    let square = |what: &str| inv.single_square(what, n);
    // A symmetric Q has a symmetric X: kept exactly symmetric.
    let op = Operator {
        inv,
        steps: run.inverses,
        w: square("the Lyapunov iterate")?,
        u: square("a product of the Lyapunov iteration")?,
        symmetric,
    };
    phase(inv, start, "stability test");
    let relative = |norm: f64, norm_x: f64| norm / (norm_a * norm_x).max(f64::MIN_POSITIVE);
    if q_max == 0.0 {
        return Ok(Lyapunov {
            x: Matrix::from_fn(n, n, |_, _| 0.0),
            iterations: run.iterations,
            residuals: vec![0.0],
        });
    }
    let mut norm_x = op.apply(&work.r, q_max, &work.x, None)?;
    if symmetric {
        inv.symmetrize(&work.x)?;
    }
    phase(inv, start, "X₀");
    // A symmetric Q and X: the residual from one f64 product.
    let residual = |w: &DoubleWork, x: &DoubleSquare, r: &DoubleSquare| {
        if symmetric {
            w.symmetric_lyapunov_residual_of(inv, x, r)
        } else {
            w.lyapunov_residual_of(inv, x, r)
        }
    };
    let mut norm = residual(&work, &work.x, &work.t)?;
    phase(inv, start, "residual");
    let mut residuals = vec![relative(norm, norm_x)];
    for _ in 0..refine_steps {
        // At the unit roundoff another step cannot gain (LAPACK's refinement stops there).
        if norm == 0.0 || relative(norm, norm_x) <= f64::EPSILON / 2.0 {
            break;
        }
        // ‖R‖_F ≥ max |R|: R/‖R‖_F fits f32.
        let norm_x_next = op.apply(&work.t, norm, &x_next, Some(&work.x))?;
        if symmetric {
            inv.symmetrize(&x_next)?;
        }
        phase(inv, start, "refinement step");
        let norm_next = residual(&work, &x_next, &r_next)?;
        phase(inv, start, "residual");
        if norm_next.is_nan() || norm_next >= norm {
            break;
        }
        std::mem::swap(&mut work.x, &mut x_next);
        std::mem::swap(&mut work.t, &mut r_next);
        norm = norm_next;
        norm_x = norm_x_next;
        residuals.push(relative(norm, norm_x));
    }
    let x = work.x.download()?;
    phase(inv, start, "X down");
    op.recycle();
    work.recycle(inv);
    inv.recycle_double(x_next);
    inv.recycle_double(r_next);
    let unscale = sa / sq;
    Ok(Lyapunov {
        x: if unscale == 1.0 {
            x
        } else {
            x.par_map(|v| v * unscale)
        },
        iterations: run.iterations,
        residuals,
    })
}
