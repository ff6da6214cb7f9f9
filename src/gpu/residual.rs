//! Algorithm 1's residual on the GPU in double precision: rᵏ = AD²b − A·D²·Aᵀ·xᵏ from A, d
//! and b themselves (never from the single-precision C), with A, d and AD²b kept on the device
//! so that each iteration moves only vectors of length m. The same upload of A feeds the
//! single-precision assembly ([`DeviceResidual::single_precision_a`]), so A crosses the bus once.

use super::Gpu;
use super::residual_kernels as table;
use super::spd_direct::StepResidual;
use crate::double::kernels::DoubleKernels;
use crate::error::{DeviceError, Error, Result};
use crate::gl::Pod;
use crate::gl::{
    Buffer, BufferTarget, BufferUsage, ComputeKernel, ComputeProgram, Context, LOOP_BUDGET,
    LazyProgram, Uniform,
};
use crate::inverse::kernels::double::{DoubleOperand, DoubleProduct};
use crate::least_squares::design::{Design, design_of};
use crate::matrix::{Element, MatrixView, all_finite};
use crate::scaling::times_power_of_two;
use crate::tiled::View;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Invocations per work group in the product, residual and gather kernels (`local_size_x`).
const GROUP: usize = 64;
/// Invocations per work group of the conversion kernel.
const CONVERT_GROUP: usize = 256;
/// The most work groups one dispatch uses (rows or entries beyond loop within a group).
const MAX_GROUPS: usize = 65_535;

/// Invocations the transposed product aims for (columns x row chunks), enough to keep a large
/// GPU's memory system busy.
const TRANSPOSE_INVOCATIONS: usize = 1 << 18;

/// Row chunks of the transposed product for an m x n A: about [`TRANSPOSE_INVOCATIONS`]
/// invocations in all, at least one row per chunk.
fn row_chunks(m: usize, n: usize) -> usize {
    TRANSPOSE_INVOCATIONS
        .div_ceil(n.max(1))
        .clamp(1, m.clamp(1, MAX_GROUPS))
}

/// The least-squares compute kernels of one context, compiled once (see [`Gpu`]).
pub(crate) struct LeastSquaresKernels {
    // Each compiled on first use (LazyProgram): an SPD solve's pivot check uses `gather` alone.
    transpose_product: LazyProgram,
    sum_chunks: LazyProgram,
    residual: LazyProgram,
    to_single: LazyProgram,
    gather: LazyProgram,
    diagonal: LazyProgram,
    transpose: LazyProgram,
    /// For C in f32, and in f64.
    column_sums: [LazyProgram; 2],
    scale_columns: LazyProgram,
}

impl LeastSquaresKernels {
    fn new(ctx: &Context) -> Result<Self> {
        // The files carry their own version line.
        let program = |kernel: &'static ComputeKernel| {
            LazyProgram::new(ctx, kernel, "", kernel.source.to_string())
        };
        Ok(Self {
            transpose_product: program(&table::WEIGHTED_TRANSPOSE_PRODUCT),
            sum_chunks: program(&table::SUM_CHUNKS),
            residual: program(&table::RESIDUAL),
            to_single: program(&table::TO_SINGLE),
            gather: program(&table::GATHER),
            diagonal: program(&table::DIAGONAL_PARTS),
            transpose: program(&table::TRANSPOSE),
            column_sums: [false, true].map(|double| {
                let (variant, define) = match double {
                    true => ("f64 C", "#define DOUBLE_C\n"),
                    false => ("", ""),
                };
                let source = format!("#version 430\n{define}{}", table::COLUMN_SUMS.source);
                LazyProgram::new(ctx, &table::COLUMN_SUMS, variant, source)
            }),
            scale_columns: program(&table::SCALE_COLUMNS),
        })
    }

    /// `out[out_off + j]` ← Σ_i |C(i, j)| for the symmetric C of order n held as the lower
    /// triangle of the row-major square `c` (row stride `ld`; f32 or f64), queued and not read.
    pub(crate) fn column_sums<T: Element + Pod>(
        &self,
        c: &Buffer<T>,
        n: usize,
        ld: usize,
        (out, out_off): (&Buffer<T>, usize),
    ) -> Result<()> {
        let prog = self.column_sums[usize::from(T::DOUBLE)].get()?;
        c.bind_base(0);
        out.bind_base(1);
        let u = |x: usize| Uniform::U32(x as u32);
        prog.set_all(&[("n", u(n)), ("ld", u(ld)), ("out_off", u(out_off))])?;
        let mut col0 = 0;
        while col0 < n {
            let count = (n - col0).min(MAX_GROUPS);
            prog.set("col0", u(col0))?;
            prog.dispatch([count as u32, 1, 1])?;
            col0 += count;
        }
        Ok(())
    }

    /// `src[index[k]]` for every k into a new buffer, queued and not read (a factor's
    /// diagonal without the rest, read with other values).
    pub(crate) fn gather(
        &self,
        ctx: &Context,
        src: &Buffer<f32>,
        index: &[u32],
    ) -> Result<Buffer<f32>> {
        let out = Buffer::<f32>::uninitialized(
            ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            index.len().max(1),
        )?;
        if index.is_empty() {
            return Ok(out);
        }
        let index_buffer = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Stream, index)?;
        let gather = self.gather.get()?;
        gather.set("count", Uniform::U32(index.len() as u32))?;
        src.bind_base(0);
        index_buffer.bind_base(1);
        out.bind_base(2);
        gather.dispatch([index.len().div_ceil(GROUP) as u32, 1, 1])?;
        Ok(out)
    }
}

/// The problem's data on the GPU in f64, ready to evaluate residuals.
pub struct DeviceResidual {
    m: usize,
    n: usize,
    ctx: Context,
    a: Buffer<f64>,
    d: Buffer<f64>,
    f: Buffer<f64>,
    zero: Buffer<f64>,
    x: Buffer<f64>,
    partial: Buffer<f64>,
    y: Buffer<f64>,
    r: Buffer<f64>,
    kernels: Rc<LeastSquaresKernels>,
    rhs: Vec<f64>,
    /// Whether A's entries were checked as they went up (all but whole rows), and were all
    /// finite.
    a_checked: bool,
}

impl DeviceResidual {
    /// Uploads A (m x n), d and b in double precision and forms AD²b there. A goes up as it
    /// lies: rows straight into place, columns (Aᵀ's rows) in blocks that a kernel puts in
    /// place on the GPU; only A's entries are read, never the gaps a stride leaves. Needs
    /// compute shaders with GLSL doubles (OpenGL 4.3) and A within one storage buffer;
    /// otherwise [`DeviceError::Unsupported`], and the caller evaluates residuals on the CPU.
    fn new(
        ctx: &Context,
        kernels: Rc<LeastSquaresKernels>,
        max_bytes: u64,
        a: Design<'_>,
        d: &[f64],
        b: &[f64],
    ) -> Result<Self> {
        let (m, n) = a.shape();
        assert_eq!((d.len(), b.len()), (n, n), "checked by the caller");
        let bytes = (m as u64).saturating_mul(n as u64).saturating_mul(8);
        if bytes > max_bytes {
            return Err(DeviceError::Unsupported {
                what: "evaluate residuals on the GPU".into(),
                why: format!(
                    "A in double precision takes {bytes} bytes, more than one storage buffer \
                     holds here ({max_bytes})"
                ),
            }
            .into());
        }
        let storage =
            |data: &[f64]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, data);
        let scratch = |len: usize| {
            Buffer::<f64>::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len.max(1),
            )
        };
        let (a, a_checked) = upload(ctx, &kernels, a)?;
        let mut device = Self {
            m,
            n,
            ctx: ctx.clone(),
            a,
            d: storage(d)?,
            f: Buffer::zeroed(ctx, BufferTarget::Storage, BufferUsage::Static, m)?,
            zero: Buffer::zeroed(ctx, BufferTarget::Storage, BufferUsage::Static, m)?,
            x: scratch(m)?,
            partial: scratch(row_chunks(m, n) * n)?,
            y: scratch(n)?,
            r: scratch(m)?,
            kernels,
            rhs: Vec::new(),
            a_checked,
        };
        // AD²b = −(0 − A·(d∘b)): the residual kernel with f = 0 and y = d∘b.
        let db: Vec<f64> = d.iter().zip(b).map(|(d, b)| d * b).collect();
        device.y.write(0, &db)?;
        device.run_residual(&device.zero)?;
        let rhs: Vec<f64> = device
            .r
            .download_range(0, m)?
            .into_iter()
            .map(|v| -v)
            .collect();
        device.f.write(0, &rhs)?;
        device.rhs = rhs;
        Ok(device)
    }

    /// Whether A's entries were checked as they went up (all but whole rows), and were all
    /// finite.
    pub(crate) fn a_checked(&self) -> bool {
        self.a_checked
    }

    /// AD²b, formed on the GPU in double precision.
    pub fn rhs(&self) -> &[f64] {
        &self.rhs
    }

    /// C's diagonal from the copy of A and d on the GPU, row j as (v_j, k_j, max_k |A(j,k)|)
    /// with C(j,j) = v_j·2^k_j (glsl/least_squares/diagonal.comp; `q` the binary exponent of
    /// max |d|), or `None` where a row is too long for one launch's loop budget.
    pub(crate) fn diagonal_parts(&self, q: i32) -> Result<Option<Vec<(f64, i32, f64)>>> {
        if 2 * self.n.div_ceil(256) > LOOP_BUDGET {
            return Ok(None);
        }
        let parts = Buffer::<f64>::uninitialized(
            &self.ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            3 * self.m,
        )?;
        let k = self.kernels.diagonal.get()?;
        k.set_all(&[("n", Uniform::U32(self.n as u32)), ("q", Uniform::I32(q))])?;
        self.a.bind_base(0);
        self.d.bind_base(1);
        parts.bind_base(2);
        k.dispatch_rows(1, self.m, "row_base")?;
        let raw = parts.download()?;
        Ok(Some(
            raw.chunks_exact(3)
                .map(|p| (p[0], p[1] as i32, p[2]))
                .collect(),
        ))
    }

    /// rᵏ = AD²b − A·D²·Aᵀ·x for an x of length m.
    pub fn residual(&self, x: &[f64]) -> Result<Vec<f64>> {
        Ok(self.product_each("the residual", &[x], &self.f)?.remove(0))
    }

    /// C·v = A·D²·Aᵀ·v in double precision, one product alone (the tests' reference for
    /// [`DeviceResidual::apply_each`]).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn apply(&self, v: &[f64]) -> Result<Vec<f64>> {
        Ok(self.apply_each(&[v])?.remove(0))
    }

    /// [`DeviceResidual::apply`] of each of `vs`, with the same values, all queued before one
    /// read brings them back.
    pub fn apply_each(&self, vs: &[&[f64]]) -> Result<Vec<Vec<f64>>> {
        let products = self.product_each("the product with C", vs, &self.zero)?;
        Ok(products
            .into_iter()
            .map(|p| p.into_iter().map(|r| -r).collect())
            .collect())
    }

    /// 2^exponent·A rounded to single precision, row-major, formed on the GPU from the f64
    /// copy (an exact scaling: the same values as the CPU's `(v·2^e) as f32` wherever those
    /// are normal numbers). The caller checks that 2^exponent·max|A| fits f32's range.
    pub fn single_precision_a(&self, exponent: i32) -> Result<Buffer<f32>> {
        let len = self.m * self.n;
        let out = Buffer::<f32>::uninitialized(
            &self.ctx,
            BufferTarget::Storage,
            BufferUsage::Static,
            len,
        )?;
        let k = self.kernels.to_single.get()?;
        k.set_all(&[
            ("len", Uniform::U32(len as u32)),
            ("exponent", Uniform::I32(exponent)),
        ])?;
        self.a.bind_base(0);
        out.bind_base(1);
        k.dispatch([len.div_ceil(CONVERT_GROUP).min(MAX_GROUPS) as u32, 1, 1])?;
        self.ctx
            .check(|| "converting A to single precision on the GPU".into())?;
        Ok(out)
    }

    /// `square` (order m, row-major) ← C' = 2^(2·a_exp + d_exp)·A·D²·Aᵀ in f64 in its lower
    /// triangle (the tiles wholly above it left as they were), from the f64 copies of A and d:
    /// A's columns scaled by 2^d_exp·d and A by 2^a_exp into a copy, then one f64 product with
    /// Aᵀ and 2^a_exp. Queued, not waited on.
    pub(crate) fn double_product_into(
        &self,
        kernels: &DoubleKernels,
        square: &Buffer<f64>,
        (a_exp, d_exp): (i32, i32),
    ) -> Result<()> {
        let (m, n) = (self.m, self.n);
        kernels.check_fits("A·D² in f64", m * n)?;
        let scaled = Buffer::<f64>::uninitialized(
            &self.ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            m * n,
        )?;
        let k = self.kernels.scale_columns.get()?;
        k.set_all(&[
            ("m", Uniform::U32(m as u32)),
            ("n", Uniform::U32(n as u32)),
            ("a_exp", Uniform::I32(a_exp)),
            ("d_exp", Uniform::I32(d_exp)),
        ])?;
        self.a.bind_base(0);
        self.d.bind_base(1);
        scaled.bind_base(2);
        k.dispatch([(m * n).div_ceil(CONVERT_GROUP).min(MAX_GROUPS) as u32, 1, 1])?;
        let transposed = View {
            offset: 0,
            rs: 1,
            cs: n,
            rows: n,
            cols: m,
        };
        let operand = |buffer, view| DoubleOperand { buffer, view };
        kernels.dgemm(
            DoubleProduct::new(
                operand(square, View::row_major(m, m)),
                operand(&scaled, View::row_major(m, n)),
                operand(&self.a, transposed),
            )
            .alpha(times_power_of_two(1.0, a_exp))
            .lower(),
        )
    }

    /// f − A·D²·Aᵀ·x for each x of `xs` (of length m), one after the other through the same
    /// buffers (the same launches as for one): each result is copied aside on the GPU, and all
    /// come back in one read.
    fn product_each(&self, what: &str, xs: &[&[f64]], f: &Buffer<f64>) -> Result<Vec<Vec<f64>>> {
        let m = self.m;
        if let Some(x) = xs.iter().find(|x| x.len() != m) {
            return Err(Error::shape(format!(
                "{what} needs a vector of length {m}, but it has {}",
                x.len()
            )));
        }
        match xs {
            [] => return Ok(Vec::new()),
            [x] => {
                self.x.write(0, x)?;
                self.product_into_r(f)?;
                return Ok(vec![self.r.download_range(0, m)?]);
            }
            _ => {}
        }
        // The xs go up together and are copied into place on the GPU, one per product.
        let count = xs.len();
        let inputs = Buffer::new(
            &self.ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            &xs.concat(),
        )?;
        let outputs = Buffer::<f64>::uninitialized(
            &self.ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            count * m,
        )?;
        for i in 0..count {
            self.x.copy_range_from(&inputs, i * m, 0, m)?;
            self.product_into_r(f)?;
            outputs.copy_range_from(&self.r, 0, i * m, m)?;
        }
        let values = outputs.download_range(0, count * m)?;
        Ok((0..count)
            .map(|i| values[i * m..(i + 1) * m].to_vec())
            .collect())
    }

    /// `r`'s m entries from its offset ← AD²b − A·D²·Aᵀ·x, x as the x buffer holds it; queued,
    /// not read.
    fn residual_into(&self, (r, r_off): (&Buffer<f64>, usize)) -> Result<()> {
        self.product_into_r(&self.f)?;
        r.copy_range_from(&self.r, 0, r_off, self.m)
    }

    /// r = f − A·D²·Aᵀ·x on the GPU, x as the x buffer holds it; nothing read back.
    fn product_into_r(&self, f: &Buffer<f64>) -> Result<()> {
        let chunks = row_chunks(self.m, self.n);
        let k = self.kernels.transpose_product.get()?;
        k.set_all(&[
            ("m", Uniform::U32(self.m as u32)),
            ("n", Uniform::U32(self.n as u32)),
            (
                "rows_per_chunk",
                Uniform::U32(self.m.div_ceil(chunks) as u32),
            ),
        ])?;
        self.a.bind_base(0);
        self.x.bind_base(2);
        self.partial.bind_base(3);
        self.over_columns(k, chunks as u32)?;
        let k = self.kernels.sum_chunks.get()?;
        k.set_all(&[
            ("n", Uniform::U32(self.n as u32)),
            ("chunks", Uniform::U32(chunks as u32)),
        ])?;
        self.d.bind_base(1);
        self.partial.bind_base(2);
        self.y.bind_base(3);
        self.over_columns(k, 1)?;
        self.run_residual(f)
    }

    /// Runs `k`, one invocation per column of A (`col_base` its first), over all n columns in
    /// launches of at most [`MAX_GROUPS`] groups along x, `y` groups along y.
    fn over_columns(&self, k: &ComputeProgram, y: u32) -> Result<()> {
        let per_launch = MAX_GROUPS * GROUP;
        for col in (0..self.n).step_by(per_launch) {
            k.set("col_base", Uniform::U32(col as u32))?;
            let groups = (self.n - col).min(per_launch).div_ceil(GROUP);
            k.dispatch([groups as u32, y, 1])?;
        }
        Ok(())
    }

    /// r = f − A·y with the buffers as they are (GL errors surface at the checked read-back
    /// that follows every call). The columns go in launches whose invocations loop at most
    /// [`LOOP_BUDGET`] times (rows per group times columns per invocation), each later one
    /// subtracting from the r of the one before.
    fn run_residual(&self, f: &Buffer<f64>) -> Result<()> {
        let k = self.kernels.residual.get()?;
        k.set_all(&self.sizes())?;
        self.a.bind_base(0);
        self.y.bind_base(2);
        self.r.bind_base(3);
        let groups = self.m.min(MAX_GROUPS);
        let rows_per_group = self.m.div_ceil(groups);
        let per_launch = (LOOP_BUDGET / rows_per_group).max(1) * GROUP;
        for col0 in (0..self.n).step_by(per_launch) {
            let source = if col0 == 0 { f } else { &self.r };
            source.bind_base(1);
            k.set_all(&[
                ("col0", Uniform::U32(col0 as u32)),
                ("col1", Uniform::U32((col0 + per_launch).min(self.n) as u32)),
            ])?;
            k.dispatch([groups as u32, 1, 1])?;
        }
        Ok(())
    }

    fn sizes(&self) -> [(&'static str, Uniform); 2] {
        [
            ("m", Uniform::U32(self.m as u32)),
            ("n", Uniform::U32(self.n as u32)),
        ]
    }
}

impl StepResidual for DeviceResidual {
    fn residual_at(
        &self,
        (x, x_off): (&Buffer<f64>, usize),
        r: (&Buffer<f64>, usize),
    ) -> Result<()> {
        self.x.copy_range_from(x, x_off, 0, self.m)?;
        self.residual_into(r)
    }

    fn residual_of(&self, x: &[f64], r: (&Buffer<f64>, usize)) -> Result<()> {
        if x.len() != self.m {
            return Err(Error::shape(format!(
                "the residual needs a vector of length {}, but it has {}",
                self.m,
                x.len()
            )));
        }
        self.x.write(0, x)?;
        self.residual_into(r)
    }
}

/// Values of Aᵀ's rows sent up per block where A lies by columns: the GPU holds one such block
/// beside A while the transpose kernel puts it in place (small in unit tests, so that their
/// small problems take many blocks).
const LINES_BLOCK: usize = if cfg!(test) { 1 << 8 } else { 1 << 23 };

/// A in f64 on the GPU, row-major: whole rows copied as they lie by the driver; strided rows
/// and columns (the rows of Aᵀ, sent up in blocks and put in place by
/// glsl/least_squares/transpose.comp) piece by piece, each piece checked as it is copied
/// (true where that was done and every entry is finite).
fn upload(
    ctx: &Context,
    kernels: &LeastSquaresKernels,
    a: Design<'_>,
) -> Result<(Buffer<f64>, bool)> {
    let (m, n) = a.shape();
    let bad = AtomicBool::new(false);
    let lines = match a {
        Design::Rows(a) => {
            return match a.as_row_major() {
                // Whole rows go up through the driver's copy, unchecked.
                Some(values) => Ok((
                    Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, values)?,
                    false,
                )),
                None => {
                    let buffer = Buffer::filled(
                        ctx,
                        BufferTarget::Storage,
                        BufferUsage::Static,
                        m * n,
                        |first, out| {
                            if !fill_lines(a, first, out) {
                                bad.store(true, Ordering::Relaxed);
                            }
                        },
                    )?;
                    Ok((buffer, !bad.into_inner()))
                }
            };
        }
        Design::Columns(t) => t,
    };
    let out = Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, m * n)?;
    // At most 32 x 65535 lines per block: the kernel's groups along y.
    let per_block = (LINES_BLOCK / m.max(1)).clamp(1, 32 * MAX_GROUPS);
    let k = kernels.transpose.get()?;
    for col0 in (0..n).step_by(per_block) {
        let count = per_block.min(n - col0);
        let block = Buffer::filled(
            ctx,
            BufferTarget::Storage,
            BufferUsage::Stream,
            count * m,
            |first, values| {
                if !fill_lines(lines, col0 * m + first, values) {
                    bad.store(true, Ordering::Relaxed);
                }
            },
        )?;
        k.set_all(&[
            ("m", Uniform::U32(m as u32)),
            ("n", Uniform::U32(n as u32)),
            ("col0", Uniform::U32(col0 as u32)),
            ("count", Uniform::U32(count as u32)),
        ])?;
        block.bind_base(0);
        out.bind_base(1);
        k.dispatch([m.div_ceil(32) as u32, count.div_ceil(32) as u32, 1])?;
    }
    ctx.check(|| "putting A's columns in place on the GPU".into())?;
    Ok((out, !bad.into_inner()))
}

/// `out` = the entries of the row-major order of `v` (rows contiguous) from index `first` on;
/// whether they are all finite (each piece checked where it lies, then copied from cache).
fn fill_lines(v: MatrixView<'_, f64>, first: usize, out: &mut [f64]) -> bool {
    let cols = v.cols();
    let mut done = 0;
    let mut finite = true;
    while done < out.len() {
        let (i, j) = ((first + done) / cols, (first + done) % cols);
        let piece = (cols - j).min(out.len() - done);
        let source = &v.row(i)[j..j + piece];
        finite &= all_finite(source);
        out[done..done + piece].copy_from_slice(source);
        done += piece;
    }
    finite
}

impl Gpu {
    /// The least-squares problem's data on this GPU for residuals in f64
    /// ([`DeviceResidual`]), or why not (no compute shaders, A too large for one buffer). A
    /// is a `&Matrix` or any [`MatrixView`] (one with neither rows nor columns contiguous is
    /// copied row-major first).
    pub(crate) fn device_residual<'a>(
        &self,
        a: impl Into<MatrixView<'a, f64>>,
        d: &[f64],
        b: &[f64],
    ) -> Result<DeviceResidual> {
        if !self.info().has_compute() {
            return Err(DeviceError::Unsupported {
                what: "evaluate residuals on the GPU".into(),
                why: "it needs compute shaders with doubles (OpenGL 4.3)".into(),
            }
            .into());
        }
        let mut store = Vec::new();
        DeviceResidual::new(
            self.context(),
            self.least_squares_kernels()?,
            self.max_storage_bytes()?,
            design_of(a.into(), &mut store)?,
            d,
            b,
        )
    }

    /// The least-squares kernels of this context, compiled on first use.
    pub(crate) fn least_squares_kernels(&self) -> Result<Rc<LeastSquaresKernels>> {
        if let Some(k) = self.least_squares.borrow().as_ref() {
            return Ok(k.clone());
        }
        let k = Rc::new(LeastSquaresKernels::new(self.context())?);
        *self.least_squares.borrow_mut() = Some(k.clone());
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::super::range::DiagonalParts;
    use crate::gpu::Gpu;
    use crate::least_squares::design::Design;
    use crate::matrix::{Matrix, MatrixView};

    /// The GPU's diagonal parts equal the host's: rows from 1e-300 to 1e300 (subnormal entries
    /// among them), zeros, weights over many orders; the exponents exactly, the mantissas to
    /// rounding.
    #[test]
    fn diagonal_parts_on_the_gpu_match_the_host() {
        let gpu = Gpu::new().unwrap();
        if !gpu.info().has_compute() {
            return;
        }
        let (m, n) = (7, 300);
        let scale = [1e-300, 1e300, 1.0, 3e-310, 1e-20, 7.5, 1e150];
        let a = Matrix::from_fn(m, n, |i, j| {
            let v = ((i * 31 + j * 17) % 23) as f64 - 11.0;
            if (i + j) % 5 == 0 { 0.0 } else { v * scale[i] }
        });
        let d: Vec<f64> = (0..n).map(|j| 10f64.powi((j % 9) as i32 - 4)).collect();
        let b = vec![1.0; n];
        let device = gpu.device_residual(&a, &d, &b).unwrap();
        let rows = device
            .diagonal_parts(DiagonalParts::d_exponent(&d))
            .unwrap()
            .expect("a short row fits one launch");
        let gpu_parts = DiagonalParts::from_rows(rows.clone());
        let host = DiagonalParts::of(&Design::Rows((&a).into()), &d);
        assert_eq!(gpu_parts.largest_entry(), host.largest_entry());
        for (j, ((gv, gk), (hv, hk))) in gpu_parts.raw().iter().zip(host.raw()).enumerate() {
            assert_eq!(gk, hk, "row {j}: exponent");
            assert!(
                (gv - hv).abs() <= 1e-13 * hv.abs(),
                "row {j}: {gv} against {hv}"
            );
        }
    }

    /// A that arrives by columns (Aᵀ row by row, NaN in the gaps a stride leaves) is put in
    /// place on the GPU: the same AD²b, residuals, diagonal and f32 copy, bit for bit, as from
    /// A row-major, at sizes around the transpose kernel's tiles and in several blocks; its
    /// entries checked on the way up, a non-finite one found in any block.
    #[test]
    fn columns_go_up_as_rows_do() {
        let gpu = Gpu::new().unwrap();
        if !gpu.info().has_compute() {
            return;
        }
        for (m, n) in [(1, 1), (3, 6), (17, 17), (33, 66), (65, 130)] {
            let a = Matrix::from_fn(m, n, |i, j| ((i * 29 + j * 11) % 19) as f64 / 7.0 - 1.25);
            let stride = m + 3;
            let mut lines = vec![f64::NAN; n * stride];
            for k in 0..n {
                for i in 0..m {
                    lines[k * stride + i] = a[(i, k)];
                }
            }
            let by_columns = MatrixView::new(&lines, m, n, 1, stride).unwrap();
            let d: Vec<f64> = (0..n).map(|k| 0.5 + (k % 4) as f64).collect();
            let b: Vec<f64> = (0..n).map(|k| (k % 7) as f64 - 3.0).collect();
            let x: Vec<f64> = (0..m).map(|i| 1.0 / (i + 1) as f64).collect();
            let rows = gpu.device_residual(&a, &d, &b).unwrap();
            let columns = gpu.device_residual(by_columns, &d, &b).unwrap();
            assert_eq!(columns.rhs(), rows.rhs(), "{m}x{n}: AD²b");
            let host = crate::least_squares::NormalEquations::new(by_columns, &d, &b);
            for (g, h) in columns.rhs().iter().zip(host.rhs()) {
                assert!(
                    (g - h).abs() <= 1e-13 * h.abs().max(1.0),
                    "{m}x{n}: {g} against {h}"
                );
            }
            assert_eq!(columns.residual(&x).unwrap(), rows.residual(&x).unwrap());
            let q = DiagonalParts::d_exponent(&d);
            assert_eq!(
                columns.diagonal_parts(q).unwrap(),
                rows.diagonal_parts(q).unwrap()
            );
            let single = |r: &super::DeviceResidual| {
                let buffer = r.single_precision_a(-1).unwrap();
                buffer.download().unwrap()
            };
            assert_eq!(single(&columns), single(&rows), "{m}x{n}: A in f32");
            let by_lines = matches!(Design::of(by_columns).unwrap(), Design::Columns(_));
            assert_eq!(columns.a_checked(), by_lines, "{m}x{n}: checked going up");
            assert!(!rows.a_checked(), "{m}x{n}: rows go up unchecked");
            // One non-finite entry, in the first, a middle or the last block, the gaps' NaNs
            // never read: A by columns is then reported unchecked.
            for (i, k) in [(0, 0), (m / 2, n / 2), (m - 1, n - 1)] {
                for value in [f64::NAN, f64::INFINITY] {
                    let mut bad = lines.clone();
                    bad[k * stride + i] = value;
                    let view = MatrixView::new(&bad, m, n, 1, stride).unwrap();
                    let device = gpu.device_residual(view, &d, &b).unwrap();
                    assert!(!device.a_checked(), "{m}x{n}: {value} at ({i}, {k})");
                }
            }
            let host_rows = DiagonalParts::of(&Design::Rows((&a).into()), &d);
            let host_columns = DiagonalParts::of(&Design::of(by_columns).unwrap(), &d);
            for ((cv, ck), (rv, rk)) in host_columns.raw().iter().zip(host_rows.raw()) {
                assert_eq!(ck, rk, "{m}x{n}: the host's exponents");
                assert!(
                    (cv - rv).abs() <= 1e-14 * rv.abs(),
                    "{m}x{n}: {cv} against {rv}"
                );
            }
        }
    }
}
