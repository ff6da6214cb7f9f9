//! The f32 general inverse (Gauss-Jordan or LU) of an f64 square on the device, widened back to
//! f64: the hand-over of the inverses refined in f64 there (the general inverse's, the refined
//! sign iteration's) without a trip through the host.

use super::InverseMethod;
use super::gje::{self, PivotWork};
use super::kernels::double::DoubleSquare;
use super::kernels::{DeviceSquare, Inverter, NewtonPass};
use super::lu;
use super::newton::{column_order, sums};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::tiled::View;

/// Room for the inverses of order n: the f32 square inverted in place (Gauss-Jordan) or
/// factored (LU), the inverse with its columns put back, LU's inverse before that, the pivots
/// and column order, the passes' sums.
pub struct WidenedInverse {
    w: DeviceSquare,
    y: DeviceSquare,
    /// LU's inverse in pivoted column order (`None` for Gauss-Jordan, which inverts in `w`).
    z: Option<DeviceSquare>,
    pivots: PivotWork,
    perm: Buffer<u32>,
    partial: Buffer<[f32; 4]>,
}

impl WidenedInverse {
    /// Room for order `n` by `method` (LU, [`InverseMethod::Auto`] as for a general matrix,
    /// Gauss-Jordan otherwise), blocks of `block` columns (the squares kept ones of the order
    /// where an earlier call left them).
    pub fn new(inv: &Inverter, n: usize, method: InverseMethod, block: usize) -> Result<Self> {
        let ctx = inv.context();
        let z = match method.resolve(super::Kind::General, n) {
            InverseMethod::Lu => Some(inv.single_square("the f32 LU inverse", n)?),
            _ => None,
        };
        Ok(Self {
            w: inv.single_square("the f32 inverse", n)?,
            y: inv.single_square("the f32 inverse with its columns put back", n)?,
            z,
            pivots: PivotWork::new(inv, n, block)?,
            perm: Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, n)?,
            partial: Buffer::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                Inverter::newton_groups(n),
            )?,
        })
    }

    /// Hands the squares back for the next call of the order.
    pub fn recycle(self, inv: &Inverter) {
        inv.recycle_single(self.w);
        inv.recycle_single(self.y);
        if let Some(z) = self.z {
            inv.recycle_single(z);
        }
    }

    /// An elementwise pass of order n whose second operand is `y`, its sums into `partial`.
    fn pass<'a>(&'a self, y: &'a Buffer<f32>) -> NewtonPass<'a> {
        NewtonPass {
            n: self.w.n,
            perm: &self.perm,
            y,
            partial: &self.partial,
        }
    }

    /// `x` ← M⁻¹ from the f32 inverse of s·M (s a power of two bringing M into f32's range,
    /// exact): s·M narrowed, inverted (Gauss-Jordan in place, or PA = LU then U⁻¹L⁻¹) with
    /// pivots at most n·ε₃₂·max |f32(s·M)| refused (as
    /// [`pivot_tolerance`](super::pivot_tolerance) on the host), its columns put back, widened
    /// times s into `x`. Only the largest entry's partials and the pivots come back. Errors: a
    /// failed pivot as the status word reports it
    /// ([`NumericalError::SingularMatrix`](crate::NumericalError::SingularMatrix)).
    pub fn invert(
        &self,
        inv: &Inverter,
        m: &DoubleSquare,
        s: f64,
        x: &DoubleSquare,
    ) -> Result<()> {
        let n = m.n;
        let v = View::row_major(n, n);
        inv.narrow(self.w.op(v), m.op(false), s)?;
        // max |f32(M)| from one pass that rewrites w as it is.
        inv.newton_step(&self.w.buffer, &self.pass(&self.w.buffer), 1.0, 0.0)?;
        let max = sums(&self.partial, Inverter::newton_groups(n))?.2 as f32;
        let tol = n as f32 * f32::EPSILON * max;
        inv.reset_status()?;
        let scrambled = match &self.z {
            None => {
                gje::invert_in_place(inv, &self.w, &self.pivots, tol)?;
                &self.w
            }
            Some(z) => {
                lu::factor_in_place(inv, &self.w, &self.pivots, tol)?;
                // y is L's workspace here; the inverse lands in z.
                lu::inverse_from_factors(inv, &self.w, &self.y, z)?;
                z
            }
        };
        inv.check_status(tol)?;
        self.perm
            .write(0, &column_order(&self.pivots.piv.download_range(0, n)?))?;
        inv.newton_unscramble(&scrambled.buffer, &self.pass(&self.y.buffer))?;
        inv.widen(x.op(false), self.y.op(v), s, None)?;
        Ok(())
    }
}
