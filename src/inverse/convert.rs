//! The hand-over between the f32 iterations and the f64 refinement on the device
//! (glsl/inverse/convert.comp): a residual narrowed to f32 for the Lyapunov operator, its f32
//! result widened and added onto the f64 iterate, the sign iterate widened for the polish, an
//! f64 square made exactly symmetric, the Lyapunov residual of symmetric Q and X finished
//! from one product, and f64 squares combined (the refined sign iteration's step). Nothing
//! crosses to the host but per-group sums.

use super::kernels::double::{DoubleOperand, DoubleSquare, halves};
use super::kernels::Inverter;
use crate::error::Result;
use crate::gl::{Buffer, Uniform};
use crate::tiled::{Operand, View};

/// Work-group edge of the conversions.
const GROUP: usize = 16;

impl Inverter {
    /// Runs the conversion kernel in `mode` over `d`'s shape.
    fn convert(
        &self,
        mode: i32,
        d: DoubleOperand<'_>,
        s: Option<Operand<'_>>,
        input: Option<&Buffer<f64>>,
        (alpha, beta): (f64, f64),
    ) -> Result<Option<f64>> {
        let dv = d.view;
        if dv.rows == 0 || dv.cols == 0 {
            return Ok(Some(0.0));
        }
        let groups = [dv.cols.div_ceil(GROUP), dv.rows.div_ceil(GROUP)];
        let sv = s.map_or(dv, |s| s.view);
        debug_assert!(sv.rows == dv.rows && sv.cols == dv.cols);
        let prog = self.dgemm_programs().convert(self.context())?;
        d.buffer.bind_base(0);
        // Unused bindings get a valid buffer all the same.
        let single = match s {
            Some(s) => s.buffer,
            None => self.dgemm_programs().unused(self.context())?,
        };
        single.bind_base(1);
        input.unwrap_or(d.buffer).bind_base(2);
        let partial = self.dgemm_programs().partial(self.context(), groups[0] * groups[1])?;
        partial.bind_base(3);
        let u = |v: usize| Uniform::U32(v as u32);
        let (al, ah) = halves(alpha);
        let (bl, bh) = halves(beta);
        prog.set_all(&[
            ("rows", u(dv.rows)),
            ("cols", u(dv.cols)),
            ("d_off", u(dv.offset)),
            ("d_rs", u(dv.rs)),
            ("d_cs", u(dv.cs)),
            ("s_off", u(sv.offset)),
            ("s_rs", u(sv.rs)),
            ("s_cs", u(sv.cs)),
            ("mode", Uniform::I32(mode)),
            ("alpha_lo", al),
            ("alpha_hi", ah),
            ("beta_lo", bl),
            ("beta_hi", bh),
        ])?;
        prog.dispatch([groups[0] as u32, groups[1] as u32, 1])?;
        if !matches!(mode, 1 | 3 | 4) {
            return Ok(None);
        }
        let sum = partial
            .download_range(0, groups[0] * groups[1])?
            .iter()
            .sum();
        Ok(Some(sum))
    }

    /// single ← f32(α·double) over the two views (of one shape).
    pub fn narrow(&self, single: Operand<'_>, double: DoubleOperand<'_>, alpha: f64) -> Result<()> {
        self.convert(0, double, Some(single), None, (alpha, 0.0))
            .map(|_| ())
    }

    /// out ← β·input + α·f64(single) (input, a buffer holding out's view, unread for β = 0;
    /// it may be out's buffer); returns ‖out‖_F².
    pub fn widen(
        &self,
        out: DoubleOperand<'_>,
        single: Operand<'_>,
        alpha: f64,
        input: Option<(f64, &Buffer<f64>)>,
    ) -> Result<f64> {
        let (beta, buffer) = input.map_or((0.0, None), |(b, buf)| (b, Some(buf)));
        Ok(self
            .convert(1, out, Some(single), buffer, (alpha, beta))?
            .unwrap_or(0.0))
    }

    /// R ← R + Rᵀ − Q in place, for R = Q − A·X with Q and X symmetric: the Lyapunov residual
    /// Q − A·X − X·Aᵀ from one product (X·Aᵀ = (A·X)ᵀ = Q − Rᵀ), exactly symmetric; returns
    /// ‖R‖_F².
    pub fn symmetric_residual(&self, r: &DoubleSquare, q: &DoubleSquare) -> Result<f64> {
        debug_assert_eq!(r.n, q.n);
        let op = DoubleOperand {
            buffer: &r.buffer,
            view: View::row_major(r.n, r.n),
        };
        Ok(self
            .convert(3, op, None, Some(&q.buffer), (1.0, 0.0))?
            .unwrap_or(0.0))
    }

    /// out ← α·out + β·input over two f64 squares of one order (input unread for β = 0; it
    /// may be out); returns ‖out‖_F².
    pub fn combine(
        &self,
        out: &DoubleSquare,
        alpha: f64,
        input: &DoubleSquare,
        beta: f64,
    ) -> Result<f64> {
        debug_assert_eq!(out.n, input.n);
        let op = DoubleOperand {
            buffer: &out.buffer,
            view: View::row_major(out.n, out.n),
        };
        Ok(self
            .convert(4, op, None, Some(&input.buffer), (alpha, beta))?
            .unwrap_or(0.0))
    }

    /// X ← (X + Xᵀ)/2 in place: exactly symmetric.
    pub fn symmetrize(&self, x: &DoubleSquare) -> Result<()> {
        let op = DoubleOperand {
            buffer: &x.buffer,
            view: View::row_major(x.n, x.n),
        };
        self.convert(2, op, None, None, (1.0, 0.0)).map(|_| ())
    }
}
