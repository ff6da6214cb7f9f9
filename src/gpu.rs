//! The user-facing entry point: a GPU context with the paper's operations as methods.

use crate::error::{Error, Result};
use crate::execution::{AssemblyInputs, Execution};
use crate::geometry::{self, Plan};
use crate::gl::{Context, DeviceInfo, HeadlessContext, PingPong, RenderTexture, Texture};
use crate::kernels::Kernels;
use crate::layout::{Format, Layout, max_packed_order};
use crate::matrix::{Matrix, check_finite, check_finite_vec, check_non_empty, check_square};

/// How a GPU operation is carried out. The paper's method is the default; faster methods past
/// the paper will sit beside it here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// The paper's rasterized passes, one rank-1 update per draw (Algorithms 3 and 5).
    #[default]
    Faithful,
}

/// Options of an operation: storage format and method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Full or rectangular packed storage.
    pub format: Format,
    /// How to compute.
    pub method: Method,
}

impl Options {
    /// Options with this format and the default method.
    pub fn new(format: Format) -> Self {
        Self {
            format,
            method: Method::default(),
        }
    }

    /// The same options with another method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }
}

impl From<Format> for Options {
    fn from(format: Format) -> Self {
        Options::new(format)
    }
}

/// A headless OpenGL context with the paper's kernels compiled, current on this thread.
///
/// Not `Send`: make one `Gpu` per thread that needs one.
pub struct Gpu {
    kernels: Kernels,
    context: Context,
    info: DeviceInfo,
    // The EGL context when this Gpu made its own; declared last so it outlives the kernels.
    _headless: Option<HeadlessContext>,
}

impl Gpu {
    /// Opens the device named by `SYMRASTER_EGL_DEVICE`, else the first hardware device, else
    /// Mesa's software rasterizer.
    pub fn new() -> Result<Self> {
        Self::from_headless(HeadlessContext::new()?)
    }

    /// Opens EGL device `index` (as enumerated by EGL).
    pub fn with_device(index: usize) -> Result<Self> {
        Self::from_headless(HeadlessContext::with_device_index(Some(index))?)
    }

    fn from_headless(headless: HeadlessContext) -> Result<Self> {
        let mut gpu = Self::from_context(headless.context().clone(), headless.info().clone())?;
        gpu._headless = Some(headless);
        Ok(gpu)
    }

    /// Compiles the kernels on an existing context (a window's, for the viewer), which must be
    /// current on this thread and stay alive as long as this `Gpu`.
    pub fn from_context(context: Context, info: DeviceInfo) -> Result<Self> {
        let kernels = Kernels::new(&context)?;
        Ok(Self {
            kernels,
            context,
            info,
            _headless: None,
        })
    }

    /// What the driver reported: vendor, renderer, version, texture limit.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The GL handle, for callers that drive textures themselves.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The compiled kernels.
    pub(crate) fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// The largest m in each format: (full, packed).
    pub fn max_order(&self) -> (usize, usize) {
        let limit = self.info().max_texture_size;
        (limit, max_packed_order(limit))
    }

    /// The lower triangle (with diagonal) of C = A·diag(d)·Aᵀ, the upper triangle zero
    /// (Algorithm 3). `a` is m x n, `d` holds the n diagonal entries of D².
    pub fn assemble(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Matrix<f32>> {
        let mut run = self.start_assembly(a, d, options)?;
        run.finish()?;
        self.download_lower(&run)
    }

    /// The Cholesky factor L of the symmetric positive definite `c`, lower triangular with the
    /// upper triangle zero (Algorithm 5). Only the lower triangle of `c` is read.
    ///
    /// A pivot ≤ 0 or NaN gives [`Error::NotPositiveDefinite`] with its column (0-based).
    pub fn cholesky(&self, c: &Matrix<f32>, options: impl Into<Options>) -> Result<Matrix<f32>> {
        let mut run = self.start_cholesky(c, options)?;
        run.finish()?;
        let l = self.download_lower(&run)?;
        check_factor(&l)?;
        Ok(l)
    }

    /// Uploads A and d and prepares Algorithm 3 without running it; step it or finish it.
    pub fn start_assembly(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Execution<'_>> {
        let options = options.into();
        check_non_empty("A", a)?;
        let (m, n) = a.shape();
        if d.len() != n {
            return Err(Error::Shape(format!(
                "A is {m}x{n}, so d needs {n} entries (one per column of A), but has {}",
                d.len()
            )));
        }
        check_finite("A", a)?;
        check_finite_vec("d", d)?;
        let limit = self.info().max_texture_size;
        let layout = Layout::checked(m, options.format, limit)?;
        if n > limit {
            return Err(Error::Shape(format!(
                "A has {n} columns, but A is stored as an {n}x{m} texture and this GPU's \
                 GL_MAX_TEXTURE_SIZE is {limit}: at most {limit} columns"
            )));
        }
        let plan = assembly_plan(layout, n, options.method)?;
        let ctx = self.context();
        let (w, h) = layout.texture_size();
        let pair = PingPong::new(ctx, w, h)?;
        // Algorithm 3 clears both textures.
        pair.source().texture().fill(0.0)?;
        pair.target().texture().fill(0.0)?;
        let inputs = AssemblyInputs {
            a: Texture::from_data(ctx, n, m, a.as_slice())?,
            d: Texture::from_data(ctx, n, 1, d)?,
            b: RenderTexture::new(ctx, m, 1)?,
        };
        Execution::new(ctx, &self.kernels, plan, layout, pair, Some(inputs))
    }

    /// Uploads C into L_S and prepares Algorithm 5 without running it.
    pub fn start_cholesky(
        &self,
        c: &Matrix<f32>,
        options: impl Into<Options>,
    ) -> Result<Execution<'_>> {
        let options = options.into();
        check_square("C", c, "(a symmetric matrix)")?;
        let m = c.rows();
        check_finite("C (lower triangle)", &c.lower_triangle())?;
        let layout = Layout::checked(m, options.format, self.info().max_texture_size)?;
        self.start_cholesky_texels(layout, options.method, &layout.pack(c, 0.0))
    }

    /// Uploads texture contents already in `layout` into L_S and prepares Algorithm 5.
    pub(crate) fn start_cholesky_texels(
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
        pair.target().texture().fill(0.0)?;
        Execution::new(self.context(), &self.kernels, plan, layout, pair, None)
    }

    /// The Cholesky factor L of C = A·diag(d)·Aᵀ with C kept on the GPU: Algorithm 3, then
    /// Algorithm 5 on the same textures, so only A and d go up and only L comes back (the GPU
    /// part of section 5.3's least-squares solve).
    pub fn factor_product(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: impl Into<Options>,
    ) -> Result<Matrix<f32>> {
        let options = options.into();
        let mut run = self.start_assembly(a, d, options)?;
        let layout = run.layout();
        run.finish()?;
        let mut run = self.cholesky_on(layout, options.method, run.into_pair())?;
        run.finish()?;
        let l = self.download_lower(&run)?;
        check_factor(&l)?;
        Ok(l)
    }

    /// Reads the current state (the pair's source) back as a lower-triangular matrix.
    pub fn download_lower(&self, run: &Execution<'_>) -> Result<Matrix<f32>> {
        let data = run.pair().source().texture().download()?;
        Ok(run.layout().unpack(&data))
    }
}

/// The plan of Algorithm 3 for this layout.
pub fn assembly_plan(layout: Layout, n: usize, method: Method) -> Result<Plan> {
    match (layout.format(), method) {
        (Format::Full, Method::Faithful) => Ok(geometry::assembly::full_plan(layout.order(), n)),
        (Format::Packed, Method::Faithful) => {
            Ok(geometry::packed::assembly_plan(layout.order(), n))
        }
    }
}

/// The plan of Algorithm 5 for this layout.
pub fn cholesky_plan(layout: Layout, method: Method) -> Result<Plan> {
    match (layout.format(), method) {
        (Format::Full, Method::Faithful) => Ok(geometry::cholesky::full_plan(layout.order())),
        (Format::Packed, Method::Faithful) => Ok(geometry::packed::cholesky_plan(layout.order())),
    }
}

/// Finds the first column whose pivot is not positive (like LAPACK's potrf INFO, but 0-based)
/// or, failing that, the first non-finite entry.
pub fn check_factor(l: &Matrix<f32>) -> Result<()> {
    check_factor_entries(l.rows(), |i, j| l[(i, j)])
}

/// [`check_factor`] on any storage of an m x m lower-triangular factor, read through `entry`.
pub(crate) fn check_factor_entries(m: usize, entry: impl Fn(usize, usize) -> f32) -> Result<()> {
    for j in 0..m {
        let pivot = entry(j, j);
        if pivot.is_nan() || pivot <= 0.0 || pivot.is_infinite() {
            return Err(Error::NotPositiveDefinite { column: j, pivot });
        }
        if let Some(i) = (j + 1..m).find(|&i| !entry(i, j).is_finite()) {
            return Err(Error::NonFiniteResult { row: i, col: j });
        }
    }
    Ok(())
}
