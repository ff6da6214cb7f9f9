//! C = L·Lᵀ on the GPU (Algorithm 5), full or packed, reading only C's lower triangle.

use super::{Cholesky, Gpu, Method, Options};
use crate::draw::Plan;
use crate::draw::execution::{Execution, Operands};
use crate::error::{Error, InputError, NumericalError, Result};
use crate::faithful;
use crate::gl::PingPong;
use crate::layout::{Format, Layout, PackedMatrix};
use crate::least_squares::DoubleFactor;
use crate::matrix::{
    Element, Matrix, check_finite, check_finite_lower, check_finite_vec, check_square,
};
use crate::scaling::scale_exponent;
use crate::scaling::{equilibration_exponents, pivot_in_units, times_power_of_two};
use crate::symmetric::SymmetricView;

impl Gpu {
    /// The Cholesky factor of the symmetric positive definite `c` (Algorithm 5, or the blocked
    /// or tiled Cholesky as `options` choose). Only the lower triangle of `c` is read. An f64 C
    /// is scaled in f64 before it is rounded to f32 once, so C of any finite scale factors
    /// wherever L fits in f32. L carries f32's accuracy; the tiled method keeps it on the GPU.
    ///
    /// C is scaled by an even power of two 4^k (exact) so that its largest diagonal entry is
    /// near 1 and L' is scaled back by 2^-k (exact): tiny or huge SPD matrices (1e-39·I,
    /// 1e30·I) factor as well as unit-scale ones, on every method and format; an L outside
    /// f32's range is [`NumericalError::OutOfRange`].
    ///
    /// A pivot ≤ 0 or NaN gives [`NumericalError::NotPositiveDefinite`] with its column
    /// (0-based, LAPACK's INFO − 1) and the pivot in C's own units.
    ///
    /// ```
    /// use symraster::{Gpu, Matrix, Options};
    /// let gpu = Gpu::new()?;
    /// let c = Matrix::from_row_major(2, 2, vec![4.0f64, 2.0, 2.0, 3.0])?;
    /// let l = gpu.cholesky(&c, Options::default())?;
    /// let x = l.solve(&[6.0f64, 5.0])?; // C·x = b (f32-accurate)
    /// assert!((x[0] - 1.0).abs() < 1e-5 && (x[1] - 1.0).abs() < 1e-5);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky<T: Element>(
        &self,
        c: &Matrix<T>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        let factored = match T::as_double(c) {
            Some(c) => self.cholesky_f64("C", c, options),
            None => self.cholesky_single(&*T::single("C", c)?, options),
        };
        diagnosed(factored, || c.lower_triangle().map(Into::into))
    }

    /// [`Gpu::cholesky`] of an f32 C borrowed where it lies, by the triangle `c` names (as
    /// LAPACK's UPLO): the other triangle is never read, and for the tiled method the stored
    /// triangle goes from `c` straight into the GPU's upload (scaled by 4^k there), with no
    /// copy of C on the host. Errors are [`Gpu::cholesky`]'s, positions in `c`'s storage.
    ///
    /// ```
    /// use symraster::{Gpu, Options, SymmetricView, Triangle};
    /// let gpu = Gpu::new()?;
    /// // C = [[4, 2], [2, 3]] by its upper triangle; the lower one is garbage.
    /// let data = [4.0f32, 2.0, f32::NAN, 3.0];
    /// let c = SymmetricView::new(&data, 2, 2, Triangle::Upper)?;
    /// let l = gpu.cholesky_view(c, Options::default())?.into_l()?;
    /// assert_eq!((l[(0, 0)], l[(1, 0)], l[(0, 1)]), (2.0, 1.0, 0.0));
    /// assert!((l[(1, 1)] - 2f32.sqrt()).abs() < 1e-6);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn cholesky_view(
        &self,
        c: SymmetricView<'_, f32>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        diagnosed(self.cholesky_single_view(&c, None, options), || {
            c.to_lower()
        })
    }

    /// [`Gpu::cholesky`] of an f32 C.
    pub(crate) fn cholesky_single(
        &self,
        c: &Matrix<f32>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        check_square("C", c, "(a symmetric matrix)")?;
        self.cholesky_single_view(&SymmetricView::lower(c), Some(c), options)
    }

    /// [`Gpu::cholesky_view`] without the diagnosis of a failure; `matrix` is C itself where
    /// the caller holds it as a matrix (the paths that need C as a matrix use it rather than a
    /// copy of the triangle).
    fn cholesky_single_view(
        &self,
        c: &SymmetricView<'_, f32>,
        matrix: Option<&Matrix<f32>>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        let m = c.order();
        if m == 0 || (0..m).any(|j| !c.get(j, j).is_finite()) {
            c.check("C")?;
        }
        if needs_equilibration((0..m).map(|j| c.get(j, j))) {
            c.check("C")?;
            return self.cholesky_equilibrated("C", &c.to_lower(), options);
        }
        let options = options.into();
        if self.check_problem_size(m, 0, options)? == Method::Tiled {
            // The tiled Cholesky checks C as it scales it by 4^k and rounds it into its upload
            // (the shift kept with the factor): no pass of its own, no scaled copy of C.
            return self.cholesky_tiled_host(c, options.format);
        }
        c.check("C")?;
        let lower;
        let c = match matrix {
            Some(c) => c,
            None => {
                lower = lower_single(c);
                &lower
            }
        };
        let (k, scaled) = scaled_by_four(c, (0..m).map(|j| f64::from(c[(j, j)])))?;
        let l = self
            .cholesky_unscaled(&scaled, options)
            .map_err(|e| unscale_pivot(e, k))?;
        unscale_cholesky(l, k)
    }

    /// [`Gpu::cholesky`] of an f64 C (as the command line reads it): scaled by 4^k in f64
    /// before rounding to f32, so that C of any finite scale factors wherever L fits in f32;
    /// an L outside f32's range is [`NumericalError::OutOfRange`].
    pub(crate) fn cholesky_f64(
        &self,
        input: &str,
        c: &Matrix<f64>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        check_square(input, c, "(a symmetric matrix)")?;
        let lower = c.lower_triangle();
        check_finite(input, &lower)?;
        if needs_equilibration((0..c.rows()).map(|j| c[(j, j)])) {
            return self.cholesky_equilibrated(input, &lower, options);
        }
        let k = scale_exponent((0..c.rows()).map(|j| c[(j, j)]));
        let factor = times_power_of_two(1.0, 2 * k);
        let scaled = crate::matrix::to_single_precision(input, &lower.map(|v| v * factor))?;
        let l = self
            .cholesky_unscaled(&scaled, options)
            .map_err(|e| unscale_pivot(e, k))?;
        unscale_cholesky(l, k)
    }

    /// [`Gpu::cholesky_f64`] of a C whose diagonal spans more than one power of four can bring
    /// into f32's range (diag(1, 1e-50, 2), whose L fits f32): each row and column scaled by
    /// its own power of two (LAPACK's dpoequ, exact), L' = chol(S·C·S), L = S⁻¹·L' in f64,
    /// then rounded; L is kept on the host.
    fn cholesky_equilibrated(
        &self,
        input: &str,
        lower: &Matrix<f64>,
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        let m = lower.rows();
        let k = equilibration_exponents((0..m).map(|j| lower[(j, j)]));
        let scaled = Matrix::from_fn(m, m, |i, j| times_power_of_two(lower[(i, j)], k[i] + k[j]));
        let scaled = crate::matrix::to_single_precision(input, &scaled)?;
        let l = self
            .cholesky_unscaled(&scaled, options)
            .map_err(|e| pivot_in_units(e, |j| k[j]))?;
        let (method, format) = (l.method(), l.format());
        let l = l.into_l()?;
        check_factor_range((0..m).map(|j| (l[(j, j)], k[j])))?;
        let l = Matrix::from_fn(m, m, |i, j| {
            times_power_of_two(f64::from(l[(i, j)]), -k[i]) as f32
        });
        Ok(Cholesky::host(l, method, format))
    }

    /// Algorithm 5 (or the blocked or tiled Cholesky) on `c` as given.
    fn cholesky_unscaled(&self, c: &Matrix<f32>, options: impl Into<Options>) -> Result<Cholesky> {
        let options = options.into();
        match self.check_problem_size(c.rows(), 0, options)? {
            Method::Tiled => {
                return self.cholesky_tiled_host(&SymmetricView::lower(c), options.format);
            }
            Method::Blocked => return self.cholesky_blocked(c, self.blocks(options, c.rows())),
            _ => {}
        }
        let mut run = self.start_cholesky(c, options)?;
        run.finish()?;
        let l = run.into_lower()?;
        check_lower_factor(&l, |j| f64::from(c[(j, j)]))?;
        Ok(Cholesky::host(l, Method::Faithful, options.format))
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The Cholesky factor of a packed C, left packed (half the storage of the full format).
    /// A pivot ≤ 0 or NaN gives [`NumericalError::NotPositiveDefinite`] with its column. C is
    /// scaled by 4^k into range first, as [`Gpu::cholesky`] does.
    pub(crate) fn cholesky_packed_raw(&self, c: &PackedMatrix) -> Result<PackedMatrix> {
        check_finite_vec("C (packed)", c.as_slice())?;
        let m = c.order();
        let k = scale_exponent((0..m).map(|j| c.get(j, j).map_or(0.0, f64::from)));
        let factor = times_power_of_two(1.0, 2 * k);
        let data: Vec<f32> = c
            .as_slice()
            .iter()
            .map(|&v| (f64::from(v) * factor) as f32)
            .collect();
        if k == 0 || data.iter().any(|v| !v.is_finite()) {
            return self.cholesky_packed_unscaled(c);
        }
        let scaled = PackedMatrix::from_raw(m, data)?;
        let l = self
            .cholesky_packed_unscaled(&scaled)
            .map_err(|e| unscale_pivot(e, k))?;
        // Every entry back by 2^-k; the diagonal checked against f32's range.
        check_factor_range((0..m).map(|j| (l.get(j, j).unwrap_or(f32::NAN), k)))?;
        let data = l
            .as_slice()
            .iter()
            .map(|&v| times_power_of_two(f64::from(v), -k) as f32)
            .collect();
        PackedMatrix::from_raw(m, data)
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// [`Gpu::cholesky_packed_raw`] of C as given.
    fn cholesky_packed_unscaled(&self, c: &PackedMatrix) -> Result<PackedMatrix> {
        let mut run = self.start_cholesky_packed(c)?;
        run.finish()?;
        let l = run.download_packed()?;
        check_factor_entries(
            l.order(),
            |i, j| l.get(i, j).unwrap_or(f32::NAN),
            |j| c.get(j, j).map_or(f64::NAN, f64::from),
        )?;
        Ok(l)
    }

    /// The Cholesky factor of C = A·diag(d)·Aᵀ with C kept on the GPU: assembly, then the
    /// factorization on the same textures or buffers, so only A and d go up (the GPU part of
    /// section 5.3's least-squares solve). f64 A and d are rounded to f32 once (range checked);
    /// L carries f32's accuracy and stays on the GPU for the tiled method.
    pub fn factor_product<T: Element>(
        &self,
        a: &Matrix<T>,
        d: &[T],
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        self.factor_product_single(&*T::single("A", a)?, &T::single_vec("d", d)?, options)
    }

    /// [`Gpu::factor_product`] of f32 A and d.
    pub(crate) fn factor_product_single(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Cholesky> {
        let options = options.into();
        let method = self.check_problem_size(a.rows(), a.cols(), options)?;
        if a.cols() > self.raster_a_columns(method, options) {
            // A wider than its texture: C from A's column blocks, then factored.
            let c = self.assemble_wide(a, d, options.method(method))?;
            return self.cholesky_single(&c, options.method(method));
        }
        match method {
            Method::Tiled => return self.factor_product_tiled_host(a, d, options.format),
            Method::Blocked => {
                return self.factor_product_blocked(a, d, self.blocks(options, a.rows()));
            }
            _ => {}
        }
        let mut run = self.start_assembly(a, d, options)?;
        let layout = run.layout();
        run.finish()?;
        let method = self.resolve_raster(options.method)?;
        let mut run = self.cholesky_on(layout, method, run.into_pair())?;
        run.finish()?;
        let l = run.into_lower()?;
        let diagonal = product_diagonal(a, d);
        check_lower_factor(&l, |j| diagonal[j])?;
        Ok(Cholesky::host(l, method, options.format))
    }

    /// Uploads C into L_S and prepares Algorithm 5 without running it.
    pub(crate) fn start_cholesky(
        &self,
        c: &Matrix<f32>,
        options: impl Into<Options>,
    ) -> Result<Execution<'_>> {
        let options = options.into();
        check_square("C", c, "(a symmetric matrix)")?;
        let m = c.rows();
        check_finite_lower("C (lower triangle)", c)?;
        let layout = self.check_order(m, options.format)?;
        let method = self.resolve_raster(options.method)?;
        self.start_cholesky_texels(layout, method, &layout.pack(c, 0.0))
    }

    /// Uploads a packed C into L_S and prepares Algorithm 5 in packed format (Figs 6 and 7)
    /// without running it; the host never holds the m x m matrix.
    pub(crate) fn start_cholesky_packed(&self, c: &PackedMatrix) -> Result<Execution<'_>> {
        let m = c.order();
        if m == 0 {
            return Err(InputError::Empty {
                input: "C".into(),
                rows: 0,
                cols: 0,
            }
            .into());
        }
        let layout = self.check_order(m, Format::Packed)?;
        check_finite_vec("C (packed)", c.as_slice())?;
        self.start_cholesky_texels(layout, Method::Faithful, c.as_slice())
    }

    /// Uploads texture contents already in `layout` into L_S and prepares Algorithm 5.
    fn start_cholesky_texels(
        &self,
        layout: Layout,
        method: Method,
        texels: &[f32],
    ) -> Result<Execution<'_>> {
        let (w, h) = layout.texture_size();
        let pair = PingPong::new(self.context(), w, h)?;
        pair.source().texture().upload(texels)?;
        self.cholesky_on(layout, method, pair)
    }

    /// Prepares Algorithm 5 on a pair whose source holds C: the target starts at zero.
    fn cholesky_on(&self, layout: Layout, method: Method, pair: PingPong) -> Result<Execution<'_>> {
        let plan = cholesky_plan(layout, method)?;
        pair.target().clear(self.context(), 0.0)?;
        Execution::new(
            self.context(),
            self.kernels(),
            plan,
            layout,
            pair,
            Operands::PairOnly,
        )
    }
}

/// 4^k·C with k from [`scale_exponent`] of C's diagonal, or (0, C) (borrowed: no copy) where
/// k is 0 or the scaled C would not be finite (off-diagonal entries beyond the diagonal's
/// reach: not SPD, and C as given names its failing column). No memory for the scaled copy
/// is [`Error::OutOfMemory`].
pub(crate) fn scaled_by_four(
    c: &Matrix<f32>,
    diagonal: impl Iterator<Item = f64>,
) -> Result<(i32, std::borrow::Cow<'_, Matrix<f32>>)> {
    use std::borrow::Cow;
    let k = scale_exponent(diagonal);
    if k == 0 {
        return Ok((0, Cow::Borrowed(c)));
    }
    let factor = times_power_of_two(1.0, 2 * k);
    let scaled = c.try_map(|v| (f64::from(v) * factor) as f32, || "C scaled".into())?;
    Ok(if scaled.as_slice().iter().all(|v| v.is_finite()) {
        (k, Cow::Owned(scaled))
    } else {
        (0, Cow::Borrowed(c))
    })
}

/// C's lower triangle as an f32 matrix, zeros above (for the methods that read a matrix).
fn lower_single(c: &SymmetricView<'_, f32>) -> Matrix<f32> {
    Matrix::from_fn(c.order(), c.order(), |i, j| {
        if j <= i { c.get(i, j) as f32 } else { 0.0 }
    })
}

/// Whether C's diagonal spans more than one power of four can bring into f32's normal range:
/// scaled so that its largest entry is near 1, the smallest would fall below 2⁻¹⁰⁰.
fn needs_equilibration(diagonal: impl Iterator<Item = f64> + Clone) -> bool {
    let k = scale_exponent(diagonal.clone());
    let smallest = diagonal.filter(|&d| d > 0.0).fold(f64::INFINITY, f64::min);
    smallest.is_finite() && times_power_of_two(smallest, 2 * k) < times_power_of_two(1.0, -100)
}

/// `factored`, or where it failed at a column, why ([`diagnose_in_double`] of C's lower
/// triangle, made by `lower` on failure only).
fn diagnosed(factored: Result<Cholesky>, lower: impl FnOnce() -> Matrix<f64>) -> Result<Cholesky> {
    match factored {
        Err(Error::Numerical(
            NumericalError::NotPositiveDefinite { column, .. }
            | NumericalError::NonFiniteResult { col: column, .. },
        )) => Err(diagnose_in_double(&lower(), column)),
        other => other,
    }
}

/// Why the f32 factor of C failed, decided by an f64 Cholesky of C on the CPU: C is not
/// positive definite there either (the f64 factor's column and pivot), singular to double
/// precision, or positive definite but too ill-conditioned for f32
/// ([`NumericalError::IllConditionedForSingle`]). `single_column` is where the f32 factor
/// failed.
fn diagnose_in_double(c: &Matrix<f64>, single_column: usize) -> Error {
    let m = c.rows();
    let s = scale_exponent((0..m).map(|j| c[(j, j)]));
    let scale = times_power_of_two(1.0, 2 * s);
    let factor = match DoubleFactor::of_symmetric(&SymmetricView::lower(c), scale) {
        Ok(factor) => factor,
        Err(e) => return unscale_pivot(e, s),
    };
    let diagonal: Vec<f64> = (0..m).map(|j| c[(j, j)] * scale).collect();
    if let Err(e) = factor.check_singular(&diagonal) {
        return e;
    }
    NumericalError::IllConditionedForSingle {
        column: single_column,
        condition: factor.equilibrated_condition(&diagonal),
    }
    .into()
}

/// A failing pivot of 4^k·C reported in C's units.
fn unscale_pivot(e: Error, k: i32) -> Error {
    pivot_in_units(e, |_| k)
}

/// L = 2^-k·L', L' the factor of 4^k·C, in f32; a diagonal entry that leaves f32's range is
/// [`NumericalError::OutOfRange`] ([`check_factor_range`]).
pub(crate) fn unscale_factor(scaled: &Matrix<f32>, k: i32) -> Result<Matrix<f32>> {
    check_factor_range((0..scaled.rows()).map(|j| (scaled[(j, j)], k)))?;
    let mut l = scaled.try_clone(|| "L".into())?;
    unscale_in_place(&mut l, k);
    Ok(l)
}

/// L·2^-k in place over all cores (exact where it stays normal in f32).
pub(crate) fn unscale_in_place(l: &mut Matrix<f32>, k: i32) {
    use rayon::prelude::*;
    if k == 0 {
        return;
    }
    let cols = l.cols().max(1);
    // 2^−k as a normal f32 multiplies exactly (one rounding, where the product leaves the
    // normal range), as the product in f64 rounded to f32 does.
    let scale = times_power_of_two(1.0, -k) as f32;
    if scale.is_normal() {
        l.as_mut_slice().par_chunks_mut(cols * 64).for_each(|rows| {
            rows.iter_mut().for_each(|v| *v *= scale);
        });
        return;
    }
    l.as_mut_slice().par_chunks_mut(cols * 64).for_each(|rows| {
        for v in rows {
            *v = times_power_of_two(f64::from(*v), -k) as f32;
        }
    });
}

/// [`unscale_factor`] of a factor wherever it is: on the GPU the shift is recorded (and the
/// range checked) and undone by its solves and downloads.
fn unscale_cholesky(l: Cholesky, k: i32) -> Result<Cholesky> {
    if k == 0 {
        return Ok(l);
    }
    let (method, format) = (l.method(), l.format());
    match l.into_place() {
        Ok(host) => Ok(Cholesky::host(unscale_factor(&host, k)?, method, format)),
        Err(mut device) => {
            let scaled = device.download_scaled()?;
            check_factor_range((0..scaled.rows()).map(|j| (scaled[(j, j)], k)))?;
            device.set_shift(device.shift() + k);
            Ok(Cholesky::device(device, format))
        }
    }
}

/// Refuses a factor whose diagonal, L'(j,j)·2^-k_j (given as pairs of L'(j,j) and k_j), is
/// infinite or below f32's smallest normal number: [`NumericalError::OutOfRange`], as
/// `assemble` refuses a C out of range.
pub(crate) fn check_factor_range(diagonal: impl Iterator<Item = (f32, i32)>) -> Result<()> {
    for (j, (scaled, k)) in diagonal.enumerate() {
        let value = times_power_of_two(f64::from(scaled), -k);
        let (why, fix) = if value > f64::from(f32::MAX) {
            (
                format!("above float32's largest value {:.3e}", f32::MAX),
                "divide C by a power of four",
            )
        } else if value < f64::from(f32::MIN_POSITIVE) {
            (
                format!(
                    "below float32's smallest normal value {:.3e}",
                    f32::MIN_POSITIVE
                ),
                "multiply C by a power of four",
            )
        } else {
            continue;
        };
        return Err(NumericalError::OutOfRange {
            what: "L (C = L·Lᵀ)",
            row: j,
            col: j,
            value,
            why,
            fix,
        }
        .into());
    }
    Ok(())
}

/// A [`NumericalError::NotPositiveDefinite`] from the tiled kernels (whose status word can
/// name a later column, or a NaN pivot, when a pivot underflows f32) restated from an f64
/// Cholesky of C's leading j + 1 columns on the CPU (O(j³), on failure only): the first column
/// whose f64 pivot is not positive, or else the first whose pivot is below f32's smallest
/// normal number, or else the GPU's column; each with its f64 pivot. `lower(i, j)` reads C
/// (i ≥ j). Other errors pass through.
pub(crate) fn restate_failure(e: Error, lower: impl Fn(usize, usize) -> f64) -> Error {
    let Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }) = e else {
        return e;
    };
    let leading = Matrix::from_fn(column + 1, column + 1, |i, j| {
        if i >= j { lower(i, j) } else { 0.0 }
    });
    let mut c = crate::cpu::to_faer(&leading);
    if let Err(e) = crate::cpu::cholesky_in_place(&mut c, faer::Par::Seq) {
        return e;
    }
    let pivot = |j: usize| c[(j, j)].powi(2);
    let column = (0..=column)
        .find(|&j| pivot(j) < f64::from(f32::MIN_POSITIVE))
        .unwrap_or(column);
    NumericalError::NotPositiveDefinite {
        column,
        pivot: pivot(column),
    }
    .into()
}

/// The plan of Algorithm 5 for this layout (Fig 5 full, Figs 6-7 packed).
pub fn cholesky_plan(layout: Layout, method: Method) -> Result<Plan> {
    match (layout.format(), method) {
        (Format::Full, Method::Faithful) => Ok(faithful::cholesky::full_plan(layout.order())),
        (Format::Packed, Method::Faithful) => Ok(faithful::packed::cholesky_plan(layout.order())),
        (_, m) => Err(super::assembly::no_plan(m)),
    }
}

// The debugger's check (the `internals` feature).
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
/// Finds the first column whose pivot is not positive (like LAPACK's potrf INFO, but 0-based)
/// or, failing that, the first non-finite entry. Without C at hand, the error's pivot is the
/// value on the factor's diagonal (NaN where the GPU took the square root of a negative).
pub fn check_factor(l: &Matrix<f32>) -> Result<()> {
    check_lower_factor(l, |j| f64::from(l[(j, j)]).powi(2))
}

/// The C(j,j), in f64, of C = A·diag(d)·Aᵀ.
pub(crate) fn product_diagonal(a: &Matrix<f32>, d: &[f32]) -> Vec<f64> {
    (0..a.rows())
        .map(|i| {
            a.row(i)
                .iter()
                .zip(d)
                .map(|(&a, &d)| f64::from(a) * f64::from(a) * f64::from(d))
                .sum()
        })
        .collect()
}

/// [`check_factor`] with C's diagonal known, so a failing pivot is reported as LAPACK's potrf
/// sees it: C(j,j) − Σₖ L(j,k)², before the square root.
pub(super) fn check_lower_factor(l: &Matrix<f32>, c_diagonal: impl Fn(usize) -> f64) -> Result<()> {
    check_factor_entries(l.rows(), |i, j| l[(i, j)], c_diagonal)
}

/// The check on any storage of an m x m lower-triangular factor, read through `entry`.
pub(crate) fn check_factor_entries(
    m: usize,
    entry: impl Fn(usize, usize) -> f32,
    c_diagonal: impl Fn(usize) -> f64,
) -> Result<()> {
    for j in 0..m {
        let diagonal = entry(j, j);
        if diagonal.is_nan() || diagonal <= 0.0 || diagonal.is_infinite() {
            let row_squares: f64 = (0..j).map(|k| f64::from(entry(j, k)).powi(2)).sum();
            let pivot = c_diagonal(j) - row_squares;
            return Err(NumericalError::NotPositiveDefinite { column: j, pivot }.into());
        }
        if let Some(i) = (j + 1..m).find(|&i| !entry(i, j).is_finite()) {
            return Err(Error::from(NumericalError::NonFiniteResult {
                row: i,
                col: j,
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_check_names_the_column_and_the_pivot_before_its_square_root() {
        let mut l = Matrix::<f32>::zeros(3, 3);
        l[(0, 0)] = 1.0;
        l[(1, 1)] = -1.0;
        l[(2, 2)] = 1.0;
        let p = PackedMatrix::from_lower(&l).unwrap();
        let check = check_factor_entries(3, |i, j| p.get(i, j).unwrap(), |j| [1.0, -1.0, 1.0][j]);
        match check {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                assert_eq!((column, pivot), (1, -1.0))
            }
            other => panic!("expected column 1, got {other:?}"),
        }
    }
}
