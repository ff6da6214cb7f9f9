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
//! applied to the f64 residual Q − AX − XAᵀ (formed on the CPU) it refines X to double
//! accuracy when the f32 operator is accurate enough (κ·u₃₂ well below 1). Its products
//! (two per step, tiled GEMM) run on the GPU in f32, the residual's two in f64 on the GPU
//! ([`double`](super::double)): no product runs on the CPU.

use super::double::DoubleWork;
use super::kernels::{DeviceSquare, Inverter};
use super::sign::power_of_two_scale;
use super::{Kind, check_input, newton};
use crate::baseline::{from_faer, to_faer};
use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;
use crate::tiled::View;
use crate::tiled::{Product, Update};
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

/// The recorded iteration on the device: (μ_k, A_k⁻¹) in order, and room for the iterate
/// (W = Cᵀ, written from the host each application: a Static buffer, as a Dynamic one so
/// written may be placed in host memory) and a product.
struct Operator<'a> {
    inv: &'a Inverter,
    steps: Vec<(f64, DeviceSquare)>,
    c: DeviceSquare,
    t: DeviceSquare,
}

impl Operator<'_> {
    /// X solving A·X + X·Aᵀ = R approximately: C₀ = R through the recorded steps
    /// C ← (μC + A_k⁻¹·C·A_k⁻ᵀ/μ)/2 on the GPU in f32, X = −C/2. R is scaled to a largest
    /// entry of 1 for the trip through f32. The device holds W = Cᵀ, so both products of a
    /// step read their operands along rows, as the tiled product (C ← A·Bᵀ) is fastest:
    /// U = Y·C = Y·Wᵀ, then W ← (μW + Y·Uᵀ/μ)/2 (the transpose of C's update).
    fn apply(&self, r: &Mat<f64>) -> Result<Mat<f64>> {
        let n = r.nrows();
        let scale = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .fold(0.0f64, |m, (i, j)| m.max(r[(i, j)].abs()));
        if scale == 0.0 {
            return Ok(Mat::zeros(n, n));
        }
        // W₀ = Rᵀ, row-major.
        let w32: Vec<f32> = (0..n * n)
            .map(|k| (r[(k % n, k / n)] / scale) as f32)
            .collect();
        self.c.buffer.write(0, &w32)?;
        let c = &self.c;
        let k = self.inv.tiled();
        let v = View::row_major(n, n);
        for (mu, y) in &self.steps {
            // U = Y·Wᵀ (= Y·C), then W = Y·Uᵀ/(2μ) + (μ/2)·W.
            k.gemm(Product::new(self.t.op(v), y.op(v), c.op(v)))?;
            k.gemm(
                Product::new(c.op(v), y.op(v), self.t.op(v)).update(Update::Scaled {
                    alpha: (0.5 / mu) as f32,
                    beta: (0.5 * mu) as f32,
                }),
            )?;
        }
        // C = Wᵀ.
        let c = c.download()?.transpose();
        if let Some(at) = c.as_slice().iter().position(|x| !x.is_finite()) {
            return Err(NumericalError::NonFiniteResult {
                row: at / n,
                col: at % n,
            }
            .into());
        }
        Ok(Mat::from_fn(n, n, |i, j| {
            -0.5 * scale * f64::from(c[(i, j)])
        }))
    }
}

/// ‖Q − AX − XAᵀ‖_F / (‖A‖_F‖X‖_F) and the residual itself, its products in f64 on the GPU
/// (A and Q already in `work`).
fn residual(
    inv: &Inverter,
    work: &mut DoubleWork,
    norm_a: f64,
    x: &Mat<f64>,
) -> Result<(Mat<f64>, f64)> {
    let (r, norm) = work.lyapunov_residual(inv, &from_faer(x))?;
    let scale = (norm_a * x.norm_l2()).max(f64::MIN_POSITIVE);
    Ok((to_faer(&r), norm / scale))
}

/// Solves A·X + X·Aᵀ = Q (scipy's `solve_continuous_lyapunov(a, q)`) for stable A, with at
/// most `refine_steps` refinement steps in f64. A and Q may have any scale: both are scaled by
/// powers of two first ([`power_of_two_scale`]), and X back, exactly.
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
    // A and Q scaled by powers of two (exact) to largest entries in [1, 2): the f32 iteration
    // then neither overflows nor underflows, and X = (sa/sq)·X' of the scaled equation, exactly.
    let (sa, sq) = (power_of_two_scale(a), power_of_two_scale(q));
    let (a, q) = (&a.map(|v| v * sa), &q.map(|v| v * sq));
    let options = super::SignOptions::default();
    let run = newton::iterate(inv, a, options.max_iterations, true, true)?;
    let ak = run.x.download()?.to_f64();
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
    let square = |what: &str| -> Result<DeviceSquare> {
        Ok(DeviceSquare {
            buffer: inv.buffer(what, n * n)?,
            n,
        })
    };
    let op = Operator {
        inv,
        steps: run.inverses,
        c: DeviceSquare {
            buffer: crate::gl::Buffer::uninitialized(
                inv.context(),
                crate::gl::BufferTarget::Storage,
                crate::gl::BufferUsage::Static,
                (n * n).max(1),
            )?,
            n,
        },
        t: square("a product of the Lyapunov iteration")?,
    };
    let (fa, fq) = (to_faer(a), to_faer(q));
    // A symmetric Q has a symmetric X: kept exactly symmetric, its residual takes one product.
    let symmetric = (0..n).all(|i| (0..i).all(|j| q[(i, j)] == q[(j, i)]));
    let symmetrize = |x: Mat<f64>| {
        if symmetric {
            (&x + x.transpose()) * 0.5
        } else {
            x
        }
    };
    let mut work = DoubleWork::new(inv, n)?;
    work.m.write(a)?;
    work.r.write(q)?;
    let norm_a = fa.norm_l2();
    let mut x = symmetrize(op.apply(&fq)?);
    let (mut r, mut norm) = residual(inv, &mut work, norm_a, &x)?;
    let mut residuals = vec![norm];
    for _ in 0..refine_steps {
        let next = symmetrize(&x + op.apply(&r)?);
        let (r_next, norm_next) = residual(inv, &mut work, norm_a, &next)?;
        if norm_next.is_nan() || norm_next >= norm {
            break;
        }
        x = next;
        r = r_next;
        norm = norm_next;
        residuals.push(norm);
    }
    let unscale = sa / sq;
    Ok(Lyapunov {
        x: from_faer(&x).map(|v| v * unscale),
        iterations: run.iterations,
        residuals,
    })
}
