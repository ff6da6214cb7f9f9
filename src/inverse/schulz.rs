//! Newton-Schulz steps X ← X(3I − X²)/2 on the sign function's f32 iterate on the device
//! (Higham, *Functions of Matrices* §5.8): where the f32 Newton iteration hands over
//! ([`SignOptions::handover`](super::SignOptions::handover)), these take ‖I − X²‖_F from the
//! hand-over down to f32's rounding at two f32 products a step, so the f64 polish starts where
//! one f64 product a step suffices. From ‖I − X²‖ < 1 (any submultiplicative norm, the
//! Frobenius norm tested here) every eigenvalue stays on its side of the imaginary axis and
//! ‖E'‖ ≤ ¾‖E‖² + ¼‖E‖³ with E' the next step's I − X².

use super::kernels::{DeviceSquare, Inverter, NewtonPass};
use super::kernels::double::QUADRATIC_BELOW;
use super::newton::{Start, sums};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::tiled::{Product, Update, View};

/// The most f32 Newton-Schulz steps after a hand-over: from ‖I − X²‖_F = ½ exact arithmetic
/// needs five to pass f32's rounding.
pub const MAX_STEPS: usize = 8;

/// Room for the steps of order n: −X² (`e`), the next iterate (`t`) and the passes' sums.
pub struct Schulz {
    e: DeviceSquare,
    t: DeviceSquare,
    partial: Buffer<[f32; 4]>,
    perm: Buffer<u32>,
}

impl Schulz {
    /// Room for order `n` (the squares kept ones of the order where an earlier call left
    /// them).
    pub fn new(inv: &Inverter, n: usize) -> Result<Self> {
        let ctx = inv.context();
        let groups = Inverter::newton_groups(n);
        Ok(Self {
            e: inv.single_square("the Newton-Schulz square", n)?,
            t: inv.single_square("the next Newton-Schulz iterate", n)?,
            partial: Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, groups)?,
            perm: Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, 1)?,
        })
    }

    /// Hands the squares back for the next call of the order.
    pub fn recycle(self, inv: &Inverter) {
        inv.recycle_single(self.e);
        inv.recycle_single(self.t);
    }

    /// An elementwise pass of order n whose second operand is `y`, its sums into `partial`.
    fn pass<'a>(&'a self, y: &'a Buffer<f32>) -> NewtonPass<'a> {
        NewtonPass {
            n: self.e.n,
            perm: &self.perm,
            y,
            partial: &self.partial,
        }
    }

    /// ‖I − X²‖_F of `x` in f32, −X² left in `e`: one f32 product and one pass that writes
    /// nothing; only per-work-group sums come back.
    pub fn involution(&self, inv: &Inverter, x: &DeviceSquare) -> Result<f64> {
        let n = x.n;
        let v = View::row_major(n, n);
        inv.tiled()
            .gemm(Product::new(self.e.op(v), x.op(v), x.op(v.t())).update(Update::Negate))?;
        // Σ (−X² + I)² per group.
        inv.newton_distance_from_minus_identity(&self.e.buffer, &self.pass(&self.e.buffer))?;
        let (squares, _, _) = sums(&self.partial, Inverter::newton_groups(n))?;
        Ok(squares.sqrt())
    }

    /// Steps from ‖I − X²‖_F = `r` (just given by [`Schulz::involution`] of `x`, −X² in `e`)
    /// while it falls, at most `max_steps`: each step forms T = X·(−X²) and X' = (3X + T)/2,
    /// and is kept only where ‖I − X'²‖_F is below the last; the steps stop at f32's rounding
    /// (√n·ε₃₂), or after the first that no longer halves it once below
    /// [`QUADRATIC_BELOW`]. `x` becomes the last kept iterate; returns the steps kept and its
    /// ‖I − X²‖_F.
    pub fn steps(
        &mut self,
        inv: &Inverter,
        x: &mut DeviceSquare,
        r: f64,
        max_steps: usize,
    ) -> Result<(usize, f64)> {
        let n = x.n;
        let v = View::row_major(n, n);
        let floor = (n as f64).sqrt() * f64::from(f32::EPSILON);
        let (mut r, mut steps) = (r, 0);
        while steps < max_steps && r < 1.0 && r > floor {
            inv.tiled()
                .gemm(Product::new(self.t.op(v), x.op(v), self.e.op(v.t())))?;
            // T ← T/2 + 3X/2.
            inv.newton_step(&self.t.buffer, &self.pass(&x.buffer), 0.5, 1.5)?;
            let next = self.involution(inv, &self.t)?;
            log::debug!(target: "symraster::inverse", "sign: f32 Newton-Schulz step, ‖I − X²‖_F {r:.3e} → {next:.3e}");
            if next.is_nan() || next >= r {
                break;
            }
            std::mem::swap(x, &mut self.t);
            let halves = next <= 0.5 * r;
            r = next;
            steps += 1;
            if !halves && r < QUADRATIC_BELOW {
                break;
            }
        }
        Ok((steps, r))
    }

    /// ‖X‖_F and max |X| of `x`: where a Newton iteration resumed from it starts (one pass
    /// that rewrites x as it is).
    pub fn start(&self, inv: &Inverter, x: &DeviceSquare) -> Result<Start> {
        inv.newton_step(&x.buffer, &self.pass(&x.buffer), 1.0, 0.0)?;
        let (_, squares, max_abs) = sums(&self.partial, Inverter::newton_groups(x.n))?;
        Ok(Start {
            norm: squares.sqrt(),
            max_abs,
        })
    }
}
