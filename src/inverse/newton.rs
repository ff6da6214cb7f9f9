//! The scaled Newton iteration X_{k+1} = (μ_k·X_k + X_k⁻¹/μ_k)/2 (Benner et al. eq. 1) with
//! the iterate kept on the GPU in f32: per step a device copy of X_k, the general Gauss-Jordan
//! inverse in place (f32), one pass putting its columns back (with Σ y² for the scaling) and
//! one pass forming X_{k+1} (with ‖X_{k+1} − X_k‖ and ‖X_{k+1}‖). Only the pivots (n values),
//! the status word and per-work-group partial sums come back to the CPU per step; the
//! scaling μ_k = (‖X_k⁻¹‖_F/‖X_k‖_F)^½ and the stopping test run there on those sums in f64.
//! The inverses can be kept on the device (the Lyapunov solver reapplies them).
//! [`NewtonSync::Once`] (the default) moves that bookkeeping onto the device
//! (glsl/inverse/newton_report.comp: the column order, μ_k from the same sums by the same
//! formula in f64, the sums) so a step waits for the GPU once, reading one small report.

use super::gje::PivotWork;
use super::kernels::NewtonSync;
use super::kernels::{DeviceSquare, Inverter, NEWTON_REPORT_WORDS, NewtonPass, NewtonReportBuffers};
use crate::error::{Error, NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;
use crate::tiled::View;

/// What a step's one read-back holds ([`NewtonSync::Once`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// The status word: the first column without a usable pivot and that pivot.
    pub failure: Option<(usize, f32)>,
    /// μ_k as the step applied it (its f32 coefficients (0.5μ_k, 0.5/μ_k) in `coefficients`).
    pub mu: f64,
    /// The step's coefficients as f32.
    pub coefficients: [f32; 2],
    /// Σ y² of the inverse (‖X_k⁻¹‖_F²).
    pub yy: f64,
    /// (Σ (X_{k+1} − X_k)², Σ X_{k+1}², max |X_{k+1}|).
    pub sums: (f64, f64, f64),
}

impl StepReport {
    /// Decodes the report's words (glsl/inverse/newton_report.comp's layout).
    pub fn decode(w: &[u32]) -> Self {
        let f = |at: usize| f64::from_bits(u64::from(w[at]) | (u64::from(w[at + 1]) << 32));
        Self {
            failure: (w[6] != crate::tiled::status::NO_FAILURE)
                .then(|| (w[6] as usize, f32::from_bits(w[7]))),
            mu: f(2),
            coefficients: [f32::from_bits(w[0]), f32::from_bits(w[1])],
            yy: f(4),
            sums: (f(8), f(10), f(12)),
        }
    }
}

/// μ_k = (‖X_k⁻¹‖_F/‖X_k‖_F)^½ from Σ y² (Higham's Frobenius-norm scaling), as both
/// [`NewtonSync`] choices form it.
pub fn norm_scaling(yy: f64, norm_x: f64) -> f64 {
    (yy.sqrt() / norm_x).sqrt()
}

/// Relative change below which the norm scaling is switched off.
pub const STOP_SCALING: f64 = 1e-2;

/// The finished iteration.
pub struct NewtonRun {
    /// The last iterate X_k (≈ sign(A)), on the device.
    pub x: DeviceSquare,
    /// Iterations taken (GPU inverses).
    pub iterations: usize,
    /// (μ_k, X_k⁻¹) of every step, when asked to keep them.
    pub inverses: Vec<(f64, DeviceSquare)>,
    /// ‖X_k‖_F and max |X_k| of the last iterate (where a resumed iteration starts).
    pub last: Start,
    /// Whether the handover test of [`iterate_until`] ended the iteration.
    pub handed_over: bool,
}

/// Sums of the per-work-group partials: (Σ first, Σ second, max third) in f64.
pub(crate) fn sums(partial: &Buffer<[f32; 4]>, groups: usize) -> Result<(f64, f64, f64)> {
    let p = partial.download_range(0, groups)?;
    Ok(p.iter().fold((0.0, 0.0, 0.0f64), |(s, t, m), v| {
        (
            s + f64::from(v[0]),
            t + f64::from(v[1]),
            m.max(f64::from(v[2])),
        )
    }))
}

/// A with pivots in `piv` (row p swapped with piv\[p\] at step p): the column order putting
/// (PA)⁻¹'s columns back, y(:, j) = w(:, perm\[j\]) (the swaps in reverse order).
pub fn column_order(piv: &[u32]) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..piv.len() as u32).collect();
    for p in (0..piv.len()).rev() {
        perm.swap(p, piv[p] as usize);
    }
    perm
}

/// Runs the iteration from X₀ = `a` until the relative change is small (or stalls), at most
/// `max_iterations` steps, with norm scaling while `scaling` and the change is above
/// [`STOP_SCALING`]; keeps every (μ_k, X_k⁻¹) when `keep_inverses`.
///
/// Errors: [`NumericalError::SignNotConverged`] for a singular iterate, a non-finite one, or
/// no convergence within `max_iterations` (eigenvalues on or too near the imaginary axis).
pub fn iterate(
    inv: &Inverter,
    a: &Matrix<f64>,
    max_iterations: usize,
    scaling: bool,
    keep_inverses: bool,
) -> Result<NewtonRun> {
    let (x, start) = upload(inv, a)?;
    iterate_from(inv, x, start, max_iterations, scaling, keep_inverses)
}

/// X₀ = `a` in f32 on the device, and what [`iterate_from`] needs to know of it.
pub fn upload(inv: &Inverter, a: &Matrix<f64>) -> Result<(DeviceSquare, Start)> {
    let x = inv.single_square("the Newton iterate", a.rows())?;
    x.buffer.write(0, a.to_f32().as_slice())?;
    let start = Start {
        norm: a.frobenius_norm(),
        max_abs: a.max_abs(),
    };
    Ok((x, start))
}

/// What [`iterate_from`] needs to know of X₀ before its first step.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// ‖X₀‖_F.
    pub norm: f64,
    /// max |X₀|.
    pub max_abs: f64,
}

/// [`iterate`] from an X₀ already on the device (the Lyapunov solver narrows it from its f64
/// A there instead of uploading A twice); `x` becomes the iterate.
pub fn iterate_from(
    inv: &Inverter,
    x: DeviceSquare,
    start: Start,
    max_iterations: usize,
    scaling: bool,
    keep_inverses: bool,
) -> Result<NewtonRun> {
    let hooks = Hooks {
        handover: &mut |_, _| Ok(false),
        meanwhile: None,
    };
    iterate_until(inv, x, start, max_iterations, scaling, keep_inverses, hooks)
}

/// What a caller of [`iterate_until`] runs inside the iteration.
pub struct Hooks<'h> {
    /// Called with X_{k+1} and the relative change after each step that has not converged:
    /// true ends the iteration ([`NewtonRun::handed_over`]: the sign function's hand-over to
    /// Newton-Schulz, [`SignOptions::handover`](super::SignOptions::handover)).
    pub handover: &'h mut dyn FnMut(&DeviceSquare, f64) -> Result<bool>,
    /// Host work run once, while the GPU takes the first step's inverse (the CPU waits for it
    /// otherwise); its error ends the iteration.
    pub meanwhile: Option<Box<dyn FnOnce() -> Result<()> + 'h>>,
}

/// [`iterate_from`], with the caller's [`Hooks`].
pub fn iterate_until(
    inv: &Inverter,
    x: DeviceSquare,
    start: Start,
    max_iterations: usize,
    scaling: bool,
    keep_inverses: bool,
    hooks: Hooks<'_>,
) -> Result<NewtonRun> {
    let Hooks {
        handover,
        mut meanwhile,
    } = hooks;
    let n = x.n;
    let w = inv.single_square("the Newton step's inverse", n)?;
    let pivots = PivotWork::new(inv, n, inv.general_block(n))?;
    let groups = Inverter::newton_groups(n);
    let ctx = inv.context();
    let partial: Buffer<[f32; 4]> =
        Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, groups)?;
    let perm: Buffer<u32> =
        Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, n)?;
    let mut norm_x = start.norm;
    let mut max_x = start.max_abs;
    let mut scale = scaling;
    let mut previous = f64::INFINITY;
    let mut inverses = Vec::new();
    let mut spare: Option<DeviceSquare> = None;
    let mut iterations = 0;
    let mut handed_over = false;
    let sync = inv.newton_sync();
    let on_device_order = n <= inv.newton_max_order();
    let report: Buffer<u32> = Buffer::uninitialized(
        ctx,
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        NEWTON_REPORT_WORDS,
    )?;
    // A singular iterate: the sign iteration's error, naming the step.
    let singular = |iterations: usize, e: Error| match e {
        Error::Numerical(e) => NumericalError::SignNotConverged {
            iterations,
            why: format!("Newton iterate {iterations} cannot be inverted ({e})"),
        }
        .into(),
        e => e,
    };
    loop {
        if iterations == max_iterations {
            return Err(not_converged(iterations, previous));
        }
        // W = X_k, inverted in place: (P·X_k)⁻¹.
        let v = View::row_major(n, n);
        inv.copy(w.op(v), x.op(v), super::kernels::CopyMode::Copy, 1.0)?;
        let tol = (n as f64 * f64::from(f32::EPSILON) * max_x) as f32;
        inv.reset_status()?;
        super::gje::invert_in_place(inv, &w, &pivots, tol)?;
        if let Some(work) = meanwhile.take() {
            ctx.flush();
            work()?;
        }
        let y = match spare.take() {
            Some(y) => y,
            None => inv.single_square("an inverse of the Newton iteration", n)?,
        };
        let pass = NewtonPass {
            n,
            perm: &perm,
            y: &y.buffer,
            partial: &partial,
        };
        let (mu, (dd, xx, mx)) = if sync == NewtonSync::Once {
            let buffers = NewtonReportBuffers {
                piv: &pivots.piv,
                report: &report,
                partial: &partial,
                perm: &perm,
            };
            if on_device_order {
                inv.newton_column_order(n, buffers)?;
            } else {
                inv.check_status(tol).map_err(|e| singular(iterations, e))?;
                perm.write(0, &column_order(&pivots.piv.download_range(0, n)?))?;
            }
            inv.newton_unscramble(&w.buffer, &pass)?;
            inv.newton_scale(groups, buffers, scale.then_some(norm_x))?;
            inv.newton_step_from_report(&x.buffer, &pass, &report)?;
            inv.newton_sums(groups, buffers)?;
            let r = StepReport::decode(&report.download_range(0, NEWTON_REPORT_WORDS)?);
            if let Some((column, pivot)) = r.failure {
                let e = NumericalError::SingularMatrix {
                    column,
                    pivot: f64::from(pivot),
                    tolerance: f64::from(tol),
                };
                return Err(singular(iterations, e.into()));
            }
            (r.mu, r.sums)
        } else {
            inv.check_status(tol).map_err(|e| singular(iterations, e))?;
            // Written into the buffer's storage (an upload would re-specify it: a new
            // allocation every iteration).
            perm.write(0, &column_order(&pivots.piv.download_range(0, n)?))?;
            inv.newton_unscramble(&w.buffer, &pass)?;
            let (yy, _, _) = sums(&partial, groups)?;
            let mu = if scale { norm_scaling(yy, norm_x) } else { 1.0 };
            inv.newton_step(&x.buffer, &pass, (0.5 * mu) as f32, (0.5 / mu) as f32)?;
            (mu, sums(&partial, groups)?)
        };
        iterations += 1;
        let delta = dd.sqrt() / xx.sqrt().max(f64::MIN_POSITIVE);
        log::trace!(target: "symraster::inverse", "newton: step {iterations}, change {delta:.3e}, μ {mu:.4}");
        if !delta.is_finite() || !mu.is_finite() {
            return Err(NumericalError::SignNotConverged {
                iterations,
                why: "an iterate is not finite".into(),
            }
            .into());
        }
        if keep_inverses {
            inverses.push((mu, y));
        } else {
            spare = Some(y);
        }
        norm_x = xx.sqrt();
        max_x = mx;
        if delta < STOP_SCALING {
            scale = false;
        }
        if converged(delta, previous) {
            break;
        }
        if handover(&x, delta)? {
            handed_over = true;
            break;
        }
        previous = delta;
    }
    // Kept for the next call of the order (the buffers' first touch is not free).
    inv.recycle_single(w);
    if let Some(y) = spare {
        inv.recycle_single(y);
    }
    Ok(NewtonRun {
        x,
        iterations,
        inverses,
        last: Start {
            norm: norm_x,
            max_abs: max_x,
        },
        handed_over,
    })
}

/// tr(X) and ‖X + I‖_F of an order-n iterate on the device (−I and 0 for the sign of a
/// stable matrix), from per-work-group sums: nothing but the sums comes back.
pub fn trace_and_distance_from_minus_identity(inv: &Inverter, x: &DeviceSquare) -> Result<(f64, f64)> {
    let n = x.n;
    let groups = Inverter::newton_groups(n);
    let ctx = inv.context();
    let partial: Buffer<[f32; 4]> =
        Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, groups)?;
    let perm: Buffer<u32> = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, 1)?;
    let pass = NewtonPass {
        n,
        perm: &perm,
        y: &x.buffer,
        partial: &partial,
    };
    inv.newton_distance_from_minus_identity(&x.buffer, &pass)?;
    let (squares, trace, _) = sums(&partial, groups)?;
    Ok((trace, squares.sqrt()))
}

/// The relative change below which the f32 Newton iteration has converged.
pub(crate) const CONVERGED: f64 = 1e-4;

/// The Newton iteration's error after `iterations` steps without converging (`previous`, the
/// last relative change), on the host and on the device alike.
pub(crate) fn not_converged(iterations: usize, previous: f64) -> Error {
    NumericalError::SignNotConverged {
        iterations,
        why: format!(
            "the Newton iteration did not converge in {iterations} iterations (last relative \
             change {previous:.2e}; an eigenvalue at relative distance d from the axis needs \
             about log2(1/d) + 5)"
        ),
    }
    .into()
}

/// Whether the Newton loop should stop at relative change `delta` after `previous`.
pub(crate) fn converged(delta: f64, previous: f64) -> bool {
    delta <= CONVERGED || (delta < STOP_SCALING && delta > 0.5 * previous)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column order equals applying the column swaps to the identity in reverse.
    #[test]
    fn column_order_undoes_the_row_pivots() {
        let piv = [2u32, 3, 2, 3, 4];
        let perm = column_order(&piv);
        let mut cols: Vec<u32> = (0..5).collect();
        for p in (0..5).rev() {
            cols.swap(p, piv[p] as usize);
        }
        assert_eq!(perm, cols);
        let mut x = Matrix::from_fn(5, 5, |i, j| (10 * i + j) as f32);
        let w = x.clone();
        super::super::gje::unscramble_columns(&mut x, &piv);
        for i in 0..5 {
            for j in 0..5 {
                assert_eq!(x[(i, j)], w[(i, perm[j] as usize)]);
            }
        }
    }
}
