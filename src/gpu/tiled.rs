//! The tiled method behind the `Gpu` API: assembly, Cholesky and solves through the compute
//! kernels of [`crate::tiled`], sized by the storage-buffer limits instead of textures, and
//! the factor that stays on the GPU for device-side solves (inside [`super::Cholesky`]).

use super::cholesky::{
    check_factor_entries, check_factor_range, product_diagonal, restate_failure, unscale_in_place,
};
use super::{Cholesky, Gpu};
use crate::error::NumericalError;
use crate::error::{Error, InputError, Result};
use crate::layout::{Format, rfp};
use crate::matrix::{Matrix, check_finite, check_finite_lower, check_square};
use crate::scaling::{scale_exponent, times_power_of_two};
use crate::symmetric::SymmetricView;
use crate::tiled::storage::{check_order, device_memory, max_buffer_bytes, max_order, part_bytes};
use crate::tiled::{
    DeviceProduct, DeviceRhs, Storage, TiledKernels, TiledMatrix, assembly, cholesky, solve,
};
use std::rc::Rc;
use std::time::Instant;

/// The tiled storage for a format: the paper's packed format becomes LAPACK's RFP.
pub fn storage_of(format: Format) -> Storage {
    match format {
        Format::Full => Storage::Full,
        Format::Packed => Storage::Rfp,
    }
}

/// A factor of C kept on the GPU, its diagonal, and where they were formed, C's column sums of
/// absolute values.
pub(crate) type Factored = (DeviceFactor, Vec<f32>, Option<Vec<f32>>);

/// A Cholesky factor kept on the GPU (full or RFP storage) with solves run there.
pub(crate) struct DeviceFactor {
    kernels: Rc<TiledKernels>,
    l: TiledMatrix,
    // The most bytes of one buffer (right-hand sides).
    max_bytes: u64,
    // k: the storage holds the factor L' = 2^k·L of 4^k·C (see `Gpu::cholesky_tiled`).
    shift: i32,
    // The solves' inverted diagonal blocks, made by the first solve.
    solves: solve::SolveCache,
}

impl DeviceFactor {
    /// The order m.
    pub(crate) fn order(&self) -> usize {
        self.l.order()
    }

    /// The factor's storage on the GPU: L' = 2^k·L, the factor of 4^k·C, k =
    /// [`DeviceFactor::shift`] (0 unless C was scaled into range).
    pub(crate) fn matrix(&self) -> &TiledMatrix {
        &self.l
    }

    /// k of [`DeviceFactor::matrix`]: the power of four C was scaled by before factoring.
    pub(crate) fn shift(&self) -> i32 {
        self.shift
    }

    /// Solves L·Lᵀ·X = B on the GPU for the columns of B (m x r).
    /// B must be finite ([`InputError::NonFinite`] otherwise).
    pub(crate) fn solve_many(&self, b: &Matrix<f32>) -> Result<Matrix<f32>> {
        check_finite("B (the right sides)", b)?;
        let mut x = DeviceRhs::upload(&self.kernels, b, self.max_bytes)?;
        solve::solve_in_place_cached(&self.kernels, &self.l, &self.solves, &mut x)?;
        self.unshifted(x.download()?)
    }

    /// L·Lᵀ·x = b on the GPU for each b of `bs`, each to the values it would get alone (their
    /// chained solves side by side in one launch each way), all brought back in one read.
    pub(crate) fn solve_each(&self, bs: &[&[f32]]) -> Result<Vec<Vec<f32>>> {
        let m = self.order();
        let mut xs = Vec::with_capacity(bs.len());
        for b in bs {
            if b.len() != m {
                return Err(Error::shape(format!(
                    "the factor is {m}x{m}, so the right side needs {m} entries, but has {}",
                    b.len()
                )));
            }
            crate::matrix::check_finite_vec("b (the right side)", b)?;
            let b = Matrix::from_row_major(m, 1, b.to_vec())?;
            xs.push(DeviceRhs::upload(&self.kernels, &b, self.max_bytes)?);
        }
        solve::solve_each_read_back(&self.kernels, &self.l, &self.solves, &mut xs)?
            .into_iter()
            .map(|x| Ok(self.unshifted(x)?.into_vec()))
            .collect()
    }

    /// X as solved against the stored L' = 2^k·L, scaled back to C⁻¹·B = 4^k·(4^k·C)⁻¹·B; an
    /// entry that leaves f32's range then is [`NumericalError::OutOfRange`].
    fn unshifted(&self, x: Matrix<f32>) -> Result<Matrix<f32>> {
        if self.shift == 0 {
            return Ok(x);
        }
        let x = x.map(|v| times_power_of_two(f64::from(v), 2 * self.shift) as f32);
        if let Some(p) = x.as_slice().iter().position(|v| !v.is_finite()) {
            return Err(NumericalError::OutOfRange {
                what: "X = C⁻¹·B",
                row: p / x.cols(),
                col: p % x.cols(),
                value: f64::INFINITY,
                why: format!("above float32's largest value {:.3e}", f32::MAX),
                fix: "divide B by a power of two",
            }
            .into());
        }
        Ok(x)
    }

    /// L' = 2^k·L as stored, read back.
    pub(crate) fn download_scaled(&self) -> Result<Matrix<f32>> {
        self.l.download_lower()
    }

    /// Records a further scaling: the storage now holds the factor of 4^`shift`·C.
    pub(crate) fn set_shift(&mut self, shift: i32) {
        self.shift = shift;
    }

    /// L read back to the host.
    pub(crate) fn download(&self) -> Result<Matrix<f32>> {
        Ok(self.download_checked()?.0)
    }

    /// L read back to the host and unscaled, with whether every entry is finite and the
    /// diagonal positive: one pass from the staging mapping where the storage allows.
    pub(crate) fn download_checked(&self) -> Result<(Matrix<f32>, bool)> {
        let scale = times_power_of_two(1.0, -self.shift) as f32;
        if scale.is_normal()
            && let Some(r) = self.l.download_lower_scaled(scale)?
        {
            check_factor_range(r.diagonal.iter().map(|&d| (d, self.shift)))?;
            return Ok((r.l, r.sound));
        }
        let mut l = self.l.download_lower()?;
        check_factor_range((0..l.rows()).map(|j| (l[(j, j)], self.shift)))?;
        unscale_in_place(&mut l, self.shift);
        let sound = {
            use rayon::prelude::*;
            (0..l.rows()).into_par_iter().all(|i| {
                let row = &l.row(i)[..=i];
                row[i] > 0.0 && row.iter().all(|v| v.is_finite())
            })
        };
        Ok((l, sound))
    }

    /// L read back as LAPACK's RFP array (RFP storage as is; full storage converted).
    pub(crate) fn download_rfp(&self) -> Result<Vec<f32>> {
        match self.l.storage() {
            Storage::Rfp if self.shift == 0 => self.l.download_raw(),
            Storage::Rfp => rfp::from_lower(&self.download()?),
            Storage::Full => rfp::from_lower(&self.l.download_lower()?),
        }
    }
}

impl Gpu {
    /// The tiled kernels of this context, compiled on first use.
    pub(crate) fn tiled_kernels(&self) -> Result<Rc<TiledKernels>> {
        if let Some(k) = self.tiled.borrow().as_ref() {
            return Ok(k.clone());
        }
        let k = Rc::new(TiledKernels::tuned(
            self.context(),
            self.tuning().kernel.config(self.info()),
            self.tuning(),
        )?);
        *self.tiled.borrow_mut() = Some(k.clone());
        if self.tuning().tiles_tuned()
            && let Err(e) = self_check(self)
        {
            // Tuned kernels that compute wrong are not kept.
            *self.tiled.borrow_mut() = None;
            return Err(e);
        }
        Ok(k)
    }

    /// The most bytes one storage buffer may hold on this device (the tiled method's size
    /// limit: GL_MAX_SHADER_STORAGE_BLOCK_SIZE, within GL's 32-bit sizes).
    pub(crate) fn max_storage_bytes(&self) -> Result<u64> {
        Ok(max_buffer_bytes(
            self.tiled_kernels()?.limits().max_storage_block_bytes,
        ))
    }

    /// The most bytes of one buffer of a tiled matrix split over several: the one-buffer
    /// limit, lowered where the tuning says ([`Tuning::max_buffer_bytes`](crate::Tuning::max_buffer_bytes)).
    pub(crate) fn tiled_part_bytes(&self) -> Result<u64> {
        Ok(part_bytes(
            self.tiled_kernels()?.limits().max_storage_block_bytes,
            self.tuning().max_buffer_bytes,
        ))
    }

    /// The tiled Cholesky of the order-m C that `fill` writes on the GPU into full storage in
    /// one buffer (lower triangle in f32, scaled as the caller wants: the factor carries no
    /// shift), factored and kept there, with L's diagonal (for the caller's pivot test) read
    /// back in the one read that brings the factor's status word; `None` where full storage of
    /// order m takes several buffers. `original(i, j)` is C's entry for the messages of a
    /// failure.
    pub(crate) fn cholesky_tiled_filled(
        &self,
        m: usize,
        fill: impl FnOnce(&crate::gl::Buffer<f32>) -> Result<()>,
        original: impl Fn(usize, usize) -> f64,
    ) -> Result<Option<(DeviceFactor, Vec<f32>)>> {
        let mut phase = crate::phases::Phases::named("SPD factor", Instant::now());
        let k = self.tiled_kernels()?;
        let part = self.tiled_part_bytes()?;
        let l = TiledMatrix::uninitialized(self.context(), m, Storage::Full, part)?;
        let Some(single) = l.single_full_part() else {
            return Ok(None);
        };
        fill(single)?;
        phase.mark_finished(self.context(), "f32 copy made on the GPU");
        let f = self
            .factor_with_diagonal(k, l)
            .map_err(|e| restate_failure(e, original));
        phase.mark_finished(self.context(), "Cholesky, its status and diagonal read");
        f.map(Some)
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The largest orders the tiled method holds here, in full storage and in RFP, and where
    /// the bound comes from (the GPU's memory, or a number of storage buffers where the driver
    /// does not report it).
    pub(crate) fn max_tiled_order(&self) -> Result<(usize, usize, String)> {
        let (memory, source) = device_memory(&self.tiled_kernels()?.limits());
        Ok((
            max_order(Storage::Full, memory),
            max_order(Storage::Rfp, memory),
            source,
        ))
    }

    /// Refuses, before allocation, an order-m matrix in `storage` beyond what the GPU holds
    /// (its memory, or 16 buffers where the driver does not say: see
    /// [`crate::tiled::storage::device_memory`]).
    pub(crate) fn check_tiled_order(&self, m: usize, storage: Storage) -> Result<()> {
        let k = self.tiled_kernels()?;
        check_order(m, storage, self.tiled_part_bytes()?, &k.limits())
    }

    /// The lower triangle of A·diag(d)·Aᵀ by the tiled method, in `storage` on the GPU (split
    /// over several storage buffers where one cannot hold it, A's columns likewise).
    pub(crate) fn assemble_tiled_device(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        storage: Storage,
    ) -> Result<TiledMatrix> {
        super::assembly::check_assembly_inputs(a, d)?;
        let k = self.tiled_kernels()?;
        k.start_products();
        self.check_tiled_order(a.rows(), storage)?;
        let p = DeviceProduct::upload(&k, a, d, self.tiled_part_bytes()?)?;
        assembly::assemble_new(&k, &p, storage, self.tiled_part_bytes()?)
    }

    /// [`Gpu::assemble`] by the tiled method.
    pub(crate) fn assemble_tiled(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        format: Format,
    ) -> Result<Matrix<f32>> {
        let c = self
            .assemble_tiled_device(a, d, storage_of(format))?
            .download_lower()?;
        super::assembly::check_finite_result(c.as_slice(), c.cols())?;
        Ok(c)
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The lower triangle of A·diag(d)·Aᵀ as LAPACK's RFP array (TRANSR = 'N', UPLO = 'L'),
    /// assembled straight into RFP by the tiled method.
    pub(crate) fn assemble_rfp(&self, a: &Matrix<f32>, d: &[f32]) -> Result<Vec<f32>> {
        let c = self
            .assemble_tiled_device(a, d, Storage::Rfp)?
            .download_raw()?;
        if c.iter().any(|v| !v.is_finite()) {
            let lower = rfp::to_lower(&c)?;
            super::assembly::check_finite_result(lower.as_slice(), lower.cols())?;
        }
        Ok(c)
    }

    /// The Cholesky factor of `c` (lower triangle read) by the tiled method, kept on the GPU.
    /// C is scaled by 4^k (exact) so that its largest diagonal entry is near 1, as
    /// [`Gpu::cholesky`] does; the factor's solves and downloads undo it.
    pub(crate) fn cholesky_tiled(&self, c: &Matrix<f32>, format: Format) -> Result<DeviceFactor> {
        check_square("C", c, "(a symmetric matrix)")?;
        check_finite_lower("C (lower triangle)", c)?;
        self.cholesky_tiled_view(&SymmetricView::lower(c), format)
    }

    /// [`Gpu::cholesky_tiled`] of a C that is not empty, its stored triangle scaled and
    /// rounded straight from `c` into the upload's staging rows, which checks it on the way: a
    /// non-finite entry is [`SymmetricView::check`]'s error.
    pub(crate) fn cholesky_tiled_view(
        &self,
        c: &SymmetricView<'_, f32>,
        format: Format,
    ) -> Result<DeviceFactor> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let m = c.order();
        let kernels = self.tiled_kernels()?;
        let part = self.tiled_part_bytes()?;
        // 4^k·C rounded into the upload over all cores, with whether every value is finite.
        let upload = |factor: f64| -> Result<(TiledMatrix, bool)> {
            let finite = AtomicBool::new(true);
            let l = TiledMatrix::from_row_blocks(
                self.context(),
                m,
                storage_of(format),
                part,
                |rows, ld, out| {
                    if !c.lower_rows_into(rows, ld, out, |v| (v * factor) as f32) {
                        finite.store(false, Ordering::Relaxed);
                    }
                },
            )?;
            Ok((l, finite.into_inner()))
        };
        // With its largest diagonal entry near 1 (exact); k = 0 where that leaves f32's range
        // (C as given then names its failing column).
        let k = scale_exponent((0..m).map(|j| c.get(j, j)));
        let (mut l, finite) = upload(times_power_of_two(1.0, 2 * k))?;
        let mut shift = k;
        if !finite {
            // A non-finite entry of C is named; else 4^k·C only left f32's range.
            c.check("C")?;
            if k != 0 {
                (l, _) = upload(1.0)?;
                shift = 0;
            }
        }
        let mut f = self
            .factor_on_gpu(kernels, l)
            .map_err(|e| restate_failure(e, |i, j| c.get(i, j)))?;
        f.shift = shift;
        Ok(f)
    }

    /// The tiled Cholesky of the order-m C whose lower triangle `rows` writes in f32 a block
    /// of rows at a time (in range, scaled as the caller wants: the factor carries no shift),
    /// in `format`'s storage straight from the rows ([`TiledMatrix::from_row_blocks`]),
    /// factored and kept on the GPU, with L's diagonal as [`Gpu::cholesky_tiled_filled`] reads
    /// it. `original(i, j)` is C's entry for the messages of a failure.
    pub(crate) fn cholesky_tiled_rows(
        &self,
        m: usize,
        format: Format,
        rows: impl Fn((usize, usize), usize, &mut [f32]) + Sync,
        original: impl Fn(usize, usize) -> f64,
    ) -> Result<(DeviceFactor, Vec<f32>)> {
        let mut phase = crate::phases::Phases::named("SPD factor", Instant::now());
        let k = self.tiled_kernels()?;
        let part = self.tiled_part_bytes()?;
        let l = TiledMatrix::from_row_blocks(self.context(), m, storage_of(format), part, rows)?;
        phase.mark_finished(self.context(), "rows rounded, up");
        let f = self
            .factor_with_diagonal(k, l)
            .map_err(|e| restate_failure(e, original));
        phase.mark_finished(self.context(), "Cholesky, its status and diagonal read");
        f
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The Cholesky factor of an RFP array (TRANSR = 'N', UPLO = 'L') of order m, factored in
    /// RFP on the GPU as LAPACK's spftrf does, kept on the GPU.
    pub(crate) fn cholesky_rfp_tiled(&self, m: usize, arf: &[f32]) -> Result<DeviceFactor> {
        if m == 0 {
            return Err(InputError::Empty {
                input: "C".into(),
                rows: 0,
                cols: 0,
            }
            .into());
        }
        crate::matrix::check_finite_vec("C (RFP)", arf)?;
        if arf.len() != rfp::len(m) {
            return Err(InputError::Length {
                what: "an RFP array".into(),
                n: m,
                expected: rfp::len(m),
                actual: arf.len(),
            }
            .into());
        }
        let diagonal = (0..m).map(|j| f64::from(arf[rfp::index(m, j, j)]));
        let shift = scale_exponent(diagonal);
        let factor = times_power_of_two(1.0, 2 * shift);
        let scaled: Vec<f32> = arf
            .iter()
            .map(|&v| (f64::from(v) * factor) as f32)
            .collect();
        let (shift, scaled) = if scaled.iter().all(|v| v.is_finite()) {
            (shift, scaled)
        } else {
            (0, arf.to_vec())
        };
        let k = self.tiled_kernels()?;
        let l = TiledMatrix::from_rfp(self.context(), m, &scaled, self.tiled_part_bytes()?)?;
        let mut f = self
            .factor_on_gpu(k, l)
            .map_err(|e| restate_failure(e, |i, j| f64::from(arf[rfp::index(m, i, j)])))?;
        f.shift = shift;
        Ok(f)
    }

    /// The factor of C = A·diag(d)·Aᵀ with C never leaving the GPU, kept there.
    /// Its diagonal and, where C is full storage in one buffer, C's column sums of absolute
    /// values (as [`Gpu::factor_with_sums`]) come back with it.
    pub(crate) fn factor_product_tiled(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        format: Format,
    ) -> Result<Factored> {
        let c = self.assemble_tiled_device(a, d, storage_of(format))?;
        self.factor_with_sums(self.tiled_kernels()?, c, true)
    }

    /// [`Gpu::factor_product_tiled`] with A (m x n, row-major) already on the GPU, as the
    /// least-squares solve makes it from its f64 copy: A crosses the bus once.
    pub(crate) fn factor_product_tiled_on_device(
        &self,
        a: crate::gl::Buffer<f32>,
        (m, n): (usize, usize),
        d: &[f32],
        format: Format,
    ) -> Result<Factored> {
        let mut phase = crate::phases::Phases::named("factor of A·D²·Aᵀ", Instant::now());
        let k = self.tiled_kernels()?;
        let storage = storage_of(format);
        self.check_tiled_order(m, storage)?;
        let p = DeviceProduct::on_device(&k, a, d, (m, n))?;
        phase.mark_finished(self.context(), "A in f32, d up");
        let c = assembly::assemble_new(&k, &p, storage, self.tiled_part_bytes()?)?;
        phase.mark_finished(self.context(), "assembly");
        let f = self.factor_with_sums(k, c, true);
        phase.mark_finished(
            self.context(),
            "C's column sums, Cholesky, its status and diagonal read",
        );
        f
    }

    /// Factors `l` in place on the GPU and keeps it there, with its diagonal (the pivot
    /// tests') gathered on the GPU and read back with the factor's status word in one read:
    /// m values and two words, not L.
    fn factor_with_diagonal(
        &self,
        k: Rc<TiledKernels>,
        l: TiledMatrix,
    ) -> Result<(DeviceFactor, Vec<f32>)> {
        self.factor_with_sums(k, l, false)
            .map(|(f, diagonal, _)| (f, diagonal))
    }

    /// [`Gpu::factor_with_diagonal`], and with `sums`, where C is full storage in one buffer,
    /// Σ_i |C(i, j)| for each column j (‖C‖₁ their largest) formed before the factor
    /// overwrites C and read back in the same read.
    fn factor_with_sums(
        &self,
        k: Rc<TiledKernels>,
        mut l: TiledMatrix,
        sums: bool,
    ) -> Result<(DeviceFactor, Vec<f32>, Option<Vec<f32>>)> {
        let m = l.order();
        let ctx = self.context();
        let kernels = self.least_squares_kernels()?;
        let ld = match l.triangle() {
            crate::tiled::Triangle::Square(v) if sums && l.part_count() == 1 => Some(v.rs),
            _ => None,
        };
        let all = crate::gl::Buffer::<f32>::uninitialized(
            ctx,
            crate::gl::BufferTarget::Storage,
            crate::gl::BufferUsage::Stream,
            m + 2 + ld.map_or(0, |_| m),
        )?;
        if let Some(ld) = ld {
            kernels.column_sums(l.buffer(), m, ld, (&all, m + 2))?;
        }
        cholesky::factor_status_unread(&k, &mut l)?;
        let mut columns = Vec::with_capacity(m);
        for (start, buffer) in l.buffers() {
            let end = start + buffer.len();
            let (part, index): (Vec<usize>, Vec<u32>) = (0..m)
                .map(|j| (j, l.index(j, j)))
                .filter(|&(_, at)| (start..end).contains(&at))
                .map(|(j, at)| (j, (at - start) as u32))
                .unzip();
            if index.is_empty() {
                continue;
            }
            let values = kernels.gather(ctx, buffer, &index)?;
            all.copy_range_from(&values, 0, columns.len(), index.len())?;
            columns.extend(part);
        }
        debug_assert_eq!(columns.len(), m, "each diagonal entry in one buffer");
        k.copy_status(&all, m)?;
        let values = all.download()?;
        k.check_status_words([values[m].to_bits(), values[m + 1].to_bits()])?;
        let sums = ld.map(|_| values[m + 2..].to_vec());
        let mut diagonal = vec![f32::NAN; m];
        for (j, v) in columns.into_iter().zip(values) {
            diagonal[j] = v;
        }
        Ok((self.kept(k, l)?, diagonal, sums))
    }

    fn factor_on_gpu(&self, k: Rc<TiledKernels>, mut l: TiledMatrix) -> Result<DeviceFactor> {
        cholesky::factor(&k, &mut l)?;
        self.kept(k, l)
    }

    /// The factor `l`, factored on the GPU, kept there for solves (unscaled).
    fn kept(&self, k: Rc<TiledKernels>, l: TiledMatrix) -> Result<DeviceFactor> {
        Ok(DeviceFactor {
            kernels: k,
            l,
            max_bytes: self.max_storage_bytes()?,
            shift: 0,
            solves: Default::default(),
        })
    }

    /// [`Gpu::cholesky`] by the tiled method: factored on the GPU, read back and checked.
    /// L is read back once, for the entry check and the caller, and kept on the GPU for the
    /// solves.
    pub(crate) fn cholesky_tiled_host(
        &self,
        c: &SymmetricView<'_, f32>,
        format: Format,
    ) -> Result<Cholesky> {
        let f = self.cholesky_tiled_view(c, format)?;
        let (l, sound) = f.download_checked()?;
        // The column-ordered check that names the failure runs only where one was seen.
        if !sound {
            check_factor_entries(l.rows(), |i, j| l[(i, j)], |j| c.get(j, j))?;
        }
        Ok(Cholesky::device_read_back(f, format, l))
    }

    /// [`Gpu::factor_product`] by the tiled method (L read back once for the check, kept on
    /// the GPU).
    pub(crate) fn factor_product_tiled_host(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        format: Format,
    ) -> Result<Cholesky> {
        let (f, _, _) = self.factor_product_tiled(a, d, format)?;
        let l = f.download()?;
        let diagonal = product_diagonal(a, d);
        check_factor_entries(l.rows(), |i, j| l[(i, j)], |j| diagonal[j])?;
        Ok(Cholesky::device(f, format))
    }
}

/// Runs a small assembly and Cholesky factorization with the tuned tiled kernels and compares
/// them with the f64 reference: a tiling that compiles but computes wrong (registers the
/// compiler cannot hold, a work group the driver runs wrongly) is refused here, before it
/// touches the caller's data.
fn self_check(gpu: &Gpu) -> Result<()> {
    use crate::error::DeviceError;
    use crate::{Format, Method, Options, reference};
    let k = gpu.tiled_kernels()?;
    let config = k.config();
    // Several product tiles each way, and several diagonal blocks.
    let m = (2 * config.bm().max(config.bn()) + 5)
        .max(3 * config.nb.max(k.diag()).max(k.chain_tile()) + 5);
    let n = 4 * config.bk + 3;
    let a = crate::Matrix::from_fn(m, n, |i, j| (((i * 7 + j * 13) % 17) as f32 - 8.0) / 8.0);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 5) as f32 / 4.0).collect();
    let options = Options::new(Format::Full).method(Method::Tiled);
    let wrong = |what: &str, error: f64| -> Result<()> {
        Err(DeviceError::BadTuning {
            what: format!(
                "the tiled kernels' tuning (kernel {:?}, diagonal blocks {}, outer blocks {}, \
                 chained tiles {})",
                gpu.tuning().kernel,
                k.diag(),
                k.outer(),
                k.chain_tile()
            ),
            why: format!(
                "a check {what} of order {m} came out wrong (relative error {error:.1e} against the f64 reference)"
            ),
        }
        .into())
    };
    let c = gpu.assemble(&a, &d, options)?;
    let reference = reference::assemble(
        &a.to_f64(),
        &d.iter().map(|&x| x as f64).collect::<Vec<_>>(),
    );
    let error = crate::relative_error(&c.lower_triangle(), &reference.lower_triangle());
    if error.is_nan() || error >= 1e-5 {
        return wrong("assembly", error);
    }
    // A well-conditioned SPD matrix: C plus m on the diagonal.
    let spd = crate::Matrix::from_fn(m, m, |i, j| {
        let v = if i >= j { c[(i, j)] } else { c[(j, i)] };
        if i == j { v + m as f32 } else { v }
    });
    let l = gpu.cholesky_tiled(&spd, Format::Full)?.download()?;
    let product = reference::multiply_lower_by_transpose(&l.to_f64());
    let error = crate::relative_error(&product.lower_triangle(), &spd.to_f64().lower_triangle());
    if error.is_nan() || error >= 1e-5 {
        return wrong("Cholesky factorization", error);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::problems::{rng, well_conditioned_spd};
    use crate::symmetric::SymmetricView;
    use crate::{Error, Format, Gpu, NumericalError};

    /// The diagonal read back with the factor's status is L's own, bit for bit, in full
    /// storage and RFP, one buffer or several; a pivot that fails is the status word's error.
    #[test]
    fn the_factors_diagonal_comes_back_with_its_status() {
        let one = Gpu::new().unwrap();
        if !one.info().has_compute() {
            return;
        }
        let tuning = crate::Tuning {
            max_buffer_bytes: Some(120 * 1024),
            ..crate::Tuning::default()
        };
        let split = Gpu::builder().tuning(tuning).build().unwrap();
        for (gpu, m, format) in [
            (&one, 1, Format::Full),
            (&one, 65, Format::Full),
            (&one, 300, Format::Packed),
            (&split, 301, Format::Full),
        ] {
            let c = well_conditioned_spd(&mut rng(7 + m as u64), m);
            let view = SymmetricView::lower(&c);
            let rows = |r, ld, out: &mut [f32]| {
                view.lower_rows_into(r, ld, out, |v| v as f32);
            };
            let (f, diagonal) = gpu
                .cholesky_tiled_rows(m, format, rows, |i, j| view.get(i, j))
                .unwrap();
            let parts = f.l.buffers().count();
            assert_eq!(
                parts > 1,
                std::ptr::eq(gpu, &split),
                "m {m} {format:?}: {parts} buffers"
            );
            let l = f.download().unwrap();
            let want: Vec<u32> = (0..m).map(|j| l[(j, j)].to_bits()).collect();
            let got: Vec<u32> = diagonal.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "m {m} {format:?}");
            let mut bad = c.clone();
            bad[(m - 1, m - 1)] = -1.0;
            let view = SymmetricView::lower(&bad);
            let rows = |r, ld, out: &mut [f32]| {
                view.lower_rows_into(r, ld, out, |v| v as f32);
            };
            match gpu.cholesky_tiled_rows(m, format, rows, |i, j| view.get(i, j)) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                    assert_eq!(column, m - 1, "m {m} {format:?}")
                }
                Err(e) => panic!("m {m} {format:?}: {e}"),
                Ok(_) => panic!("m {m} {format:?}: an indefinite C factored"),
            }
        }
    }
}
