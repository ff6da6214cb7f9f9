//! C = A·D²·Aᵀ on the GPU (Algorithm 3): the lower triangle only, full or packed.

use super::{Gpu, Method, Options};
use crate::draw::Plan;
use crate::draw::execution::{Execution, Operands};
use crate::error::{Error, InputError, NumericalError, Result};
use crate::faithful;
use crate::gl::{PingPong, RenderTexture, Texture};
use crate::layout::blocked::ASSEMBLY_RANK;
use crate::layout::{Format, Layout, PackedMatrix};
use crate::matrix::{Element, Matrix, check_finite, check_finite_vec, check_non_empty};

impl Gpu {
    /// The lower triangle (with diagonal) of C = A·diag(d)·Aᵀ, the upper triangle zero
    /// (Algorithm 3, or the blocked or tiled assembly as `options` choose). `a` is m x n, `d`
    /// holds the n diagonal entries of D². f64 A and d are rounded to f32 once (a value beyond
    /// f32's range is [`InputError::OutOfSinglePrecision`]); C is summed and returned in f32,
    /// and a C beyond f32's range is [`NumericalError::OutOfRange`].
    ///
    /// ```
    /// use symraster::{Format, Gpu, Matrix};
    /// let gpu = Gpu::new()?;
    /// let a = Matrix::from_fn(3, 6, |i, j| ((i * 6 + j) % 5) as f64 + 1.0);
    /// let c = gpu.assemble(&a, &[1.0; 6], Format::Full)?; // lower triangle of A·Aᵀ
    /// let want = a.matmul(&a.transpose())?;
    /// assert!((f64::from(c[(2, 1)]) - want[(2, 1)]).abs() < 1e-4 * want.max_abs());
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn assemble<T: Element>(
        &self,
        a: &Matrix<T>,
        d: &[T],
        options: impl Into<Options>,
    ) -> Result<Matrix<f32>> {
        self.assemble_single(&*T::single("A", a)?, &T::single_vec("d", d)?, options)
    }

    /// [`Gpu::assemble`] of f32 A and d.
    pub(crate) fn assemble_single(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Matrix<f32>> {
        let options = options.into();
        let method = self.check_problem_size(a.rows(), a.cols(), options)?;
        if a.cols() > self.raster_a_columns(method, options) {
            return self.assemble_wide(a, d, options.method(method));
        }
        match method {
            Method::Tiled => return self.assemble_tiled(a, d, options.format),
            Method::Blocked => {
                return self.assemble_blocked(a, d, self.blocks(options, a.rows()));
            }
            _ => {}
        }
        let mut run = self.start_assembly(a, d, options)?;
        run.finish()?;
        let c = run.into_lower()?;
        check_finite_result(c.as_slice(), c.cols())?;
        Ok(c)
    }

    /// The most columns of A one assembly by `method` takes: A is a texture for the methods
    /// that draw (GL_MAX_TEXTURE_SIZE texels a side; the blocked method packs its columns
    /// into rank-K texel rows), unbounded for the tiled method (it splits A itself).
    pub(crate) fn raster_a_columns(&self, method: Method, options: Options) -> usize {
        let limit = self.info().max_texture_size;
        match method {
            Method::Faithful => limit,
            Method::Blocked => {
                let per_texel = options.blocking.a_columns_per_texel();
                limit / (ASSEMBLY_RANK / per_texel) * ASSEMBLY_RANK
            }
            _ => usize::MAX,
        }
    }

    /// [`Gpu::assemble`] of an A wider than one texture holds (`options` name a concrete
    /// method): C of each block of at most [`Gpu::raster_a_columns`] columns, each block's
    /// passes as for a narrow A, summed in f64 and rounded to f32 once.
    pub(crate) fn assemble_wide(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: Options,
    ) -> Result<Matrix<f32>> {
        check_assembly_inputs(a, d)?;
        let (m, n) = a.shape();
        let width = self.raster_a_columns(options.method, options).max(1);
        let mut sum = vec![0.0f64; m * m];
        for c0 in (0..n).step_by(width) {
            let c1 = (c0 + width).min(n);
            let block = Matrix::from_fn(m, c1 - c0, |i, j| a[(i, c0 + j)]);
            let c = self.assemble_single(&block, &d[c0..c1], options)?;
            for (s, v) in sum.iter_mut().zip(c.as_slice()) {
                *s += f64::from(*v);
            }
        }
        let c = Matrix::from_row_major(m, m, sum.into_iter().map(|v| v as f32).collect())?;
        check_finite_result(c.as_slice(), m)?;
        Ok(c)
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// Algorithm 3 in packed format, the result left packed: the lower triangle of
    /// A·diag(d)·Aᵀ as a w x h [`PackedMatrix`].
    pub(crate) fn assemble_packed_raw(&self, a: &Matrix<f32>, d: &[f32]) -> Result<PackedMatrix> {
        let mut run = self.start_assembly(a, d, Format::Packed)?;
        run.finish()?;
        let c = run.download_packed()?;
        if c.as_slice().iter().any(|v| !v.is_finite()) {
            let lower = c.to_lower();
            check_finite_result(lower.as_slice(), lower.cols())?;
        }
        Ok(c)
    }

    /// Uploads A and d and prepares Algorithm 3 without running it; step it or finish it.
    pub(crate) fn start_assembly(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Execution<'_>> {
        let options = options.into();
        let layout = self.check_assembly(a, d, options.format)?;
        let (m, n) = a.shape();
        let plan = assembly_plan(layout, n, self.resolve_raster(options.method)?)?;
        let ctx = self.context();
        let (w, h) = layout.texture_size();
        let pair = PingPong::new(ctx, w, h)?;
        // Algorithm 3 clears both textures.
        pair.source().clear(ctx, 0.0)?;
        pair.target().clear(ctx, 0.0)?;
        let operands = Operands::Assembly {
            a: Texture::from_data(ctx, n, m, a.as_slice())?,
            d: Texture::from_data(ctx, n, 1, d)?,
            b: RenderTexture::new(ctx, m, 1)?,
        };
        Execution::new(ctx, self.kernels(), plan, layout, pair, operands)
    }

    /// Checks assembly's inputs (shapes, finite values, texture limits) and gives C's layout.
    pub(super) fn check_assembly(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        format: Format,
    ) -> Result<Layout> {
        check_assembly_inputs(a, d)?;
        let m = a.rows();
        let n = a.cols();
        let layout = self.check_order(m, format)?;
        let limit = self.info().max_texture_size;
        if n > limit {
            return Err(InputError::TooWide { n, m, limit }.into());
        }
        Ok(layout)
    }
}

/// Checks assembly's inputs whatever the method: shapes, finite values, and a product within
/// f32's range.
pub(crate) fn check_assembly_inputs(a: &Matrix<f32>, d: &[f32]) -> Result<()> {
    check_non_empty("A", a)?;
    let (m, n) = a.shape();
    if d.len() != n {
        return Err(Error::shape(format!(
            "A is {m}x{n}, so d needs {n} entries (one per column of A), but has {}",
            d.len()
        )));
    }
    check_finite("A", a)?;
    check_finite_vec("d", d)?;
    check_product_range(a, d)
}

/// The plan of Algorithm 3 for this layout (Fig 2 full, Fig 4 packed) and raster method.
pub fn assembly_plan(layout: Layout, n: usize, method: Method) -> Result<Plan> {
    match (layout.format(), method) {
        (Format::Full, Method::Faithful) => Ok(faithful::assembly::full_plan(layout.order(), n)),
        (Format::Packed, Method::Faithful) => {
            Ok(faithful::packed::assembly_plan(layout.order(), n))
        }
        (_, m) => Err(no_plan(m)),
    }
}

/// The error for a method that has no draw plan.
pub(crate) fn no_plan(method: Method) -> Error {
    let why = match method {
        Method::Blocked => {
            "its passes draw RGBA32F blocks: step them with Gpu::start_blocked_assembly or \
             Gpu::start_blocked_cholesky"
        }
        _ => "it draws no triangles",
    };
    InputError::Unsupported(format!("the {method} method has no R32F draw plan: {why}")).into()
}

/// Refuses an A·diag(d)·Aᵀ whose diagonal (computed in f64, O(mn)) leaves f32's range: an
/// entry above f32::MAX would come out infinite, one below the smallest normal f32 would lose
/// its digits or flush to zero. Off-diagonal entries are bounded by the diagonal
/// (|C(i,j)| ≤ √(C(i,i)·C(j,j)) when d ≥ 0), so the diagonal decides.
pub(crate) fn check_product_range(a: &Matrix<f32>, d: &[f32]) -> Result<()> {
    let rows = (0..a.rows()).map(|i| a.row(i));
    match crate::scaling::product_out_of_range(rows, d) {
        Some((row, value, why, fix)) => Err(NumericalError::OutOfRange {
            what: crate::scaling::PRODUCT,
            row,
            col: row,
            value,
            why,
            fix,
        }
        .into()),
        None => Ok(()),
    }
}

/// A non-finite entry of a row-major result with `cols` columns (possible only when some d is
/// negative, where the diagonal does not bound the rest): [`NumericalError::NonFiniteResult`].
pub(crate) fn check_finite_result(data: &[f32], cols: usize) -> Result<()> {
    match data.iter().position(|v| !v.is_finite()) {
        Some(p) => Err(NumericalError::NonFiniteResult {
            row: p / cols,
            col: p % cols,
        }
        .into()),
        None => Ok(()),
    }
}
