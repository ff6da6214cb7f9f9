//! The user-facing entry point: a GPU context with the operations as methods, one file per
//! operation (`assembly.rs`, `cholesky.rs`, `lu.rs`, `least_squares.rs`; `tiled.rs` routes them
//! to the tiled compute path; `factor.rs` holds [`Cholesky`], what every Cholesky returns), and the method and format choice
//! ([`Options`]) that picks how each runs.

mod assembly;
mod batched;
mod blocked;
mod builder;
mod cholesky;
#[cfg(test)]
mod column_sums_tests;
mod double;
#[cfg(test)]
mod double_product_tests;
mod estimate;
mod factor;
mod inverse;
mod least_squares;
mod least_squares_direct;
mod limits;
mod lu;
mod range;
mod residual;
pub(crate) mod residual_kernels;
mod spd_device;
mod spd_direct;
mod spd_solve;
mod step;
mod tiled;

pub use crate::options::{Method, Options};
pub use batched::Batched;
pub use builder::{DEVICE_VAR, GpuBuilder};
pub use factor::Cholesky;
pub use limits::{Limits, TiledLimits};
pub use lu::LuFactors;
pub use step::{Operation, Run};
// Not API: the plans, the factor check, the device residual and the tiled storage of a format,
// for the debugger and the tests of the internals.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use {
    assembly::assembly_plan,
    cholesky::{check_factor, cholesky_plan},
    residual::DeviceResidual,
    tiled::storage_of,
};

use crate::draw::kernels::Kernels;
use crate::error::{DeviceError, InputError, Result};
use crate::gl::{Context, DeviceInfo, HeadlessContext};
use crate::layout::{BlockColumn, BlockLayout, Format, Layout};
use crate::timing::Preheat;

impl Options {
    /// The concrete method these options run on `gpu` for an m x m matrix, with A m x n for
    /// the operations that take one (n = 0 for the others): [`Method::Auto`] becomes the
    /// fastest method that holds the problem. The error is the one the operation would give
    /// before any work: a method the device lacks ([`DeviceError::Unsupported`]), a problem
    /// beyond its limits ([`InputError::TooLarge`], [`InputError::TooWide`]; see
    /// [`Gpu::limits`]).
    ///
    /// ```
    /// use symraster::{Format, Gpu, Method, Options};
    /// let gpu = Gpu::new()?;
    /// let method = Options::default().method_on(&gpu, 100, 200)?;
    /// assert!(gpu.methods().contains(&method));
    /// for method in [Method::Auto, Method::Tiled, Method::Blocked, Method::Faithful] {
    ///     for format in [Format::Full, Format::Packed] {
    ///         let options = Options::new(format).method(method);
    ///         assert!(options.method_on(&gpu, usize::MAX / 2, usize::MAX).is_err());
    ///     }
    /// }
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn method_on(&self, gpu: &Gpu, m: usize, n: usize) -> Result<Method> {
        gpu.check_problem_size(m, n, *self)
    }
}

/// A headless OpenGL context with the kernels compiled, current on this thread.
///
/// Not `Send`: make one `Gpu` per thread that needs one.
pub struct Gpu {
    kernels: Kernels,
    context: Context,
    info: DeviceInfo,
    limits: Limits,
    // The tiled method's compute kernels, compiled on first use.
    tiled: std::cell::RefCell<Option<std::rc::Rc<crate::tiled::TiledKernels>>>,
    // The inversion kernels, compiled on first use.
    inverter: std::cell::RefCell<Option<std::rc::Rc<crate::inverse::Inverter>>>,
    // The least-squares kernels (residuals in f64), compiled on first use.
    least_squares: std::cell::RefCell<Option<std::rc::Rc<residual::LeastSquaresKernels>>>,
    // The batched kernels (issue 28), compiled on first use.
    batched: std::cell::RefCell<Option<std::rc::Rc<crate::batched::kernels::BatchedKernels>>>,
    // The f64 factorizations' kernels, compiled on first use.
    double: std::cell::RefCell<Option<std::rc::Rc<crate::double::kernels::DoubleKernels>>>,
    // The busy work run before timed stretches (nothing compiled on software renderers); the
    // timings reach it through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    preheat: Preheat,
    // The methods' tuning, checked against the device.
    tuning: crate::tuning::Tuning,
    // The EGL context when this Gpu made its own; declared last so it outlives the kernels.
    _headless: Option<HeadlessContext>,
}

impl Gpu {
    /// Opens the first hardware device, else Mesa's software rasterizer, with the device's
    /// own tuning ([`Gpu::builder`] chooses the device and the tuning).
    pub fn new() -> Result<Self> {
        Self::builder().build()
    }

    /// How to open a `Gpu`: the device (`Gpu::builder().device(1).build()`) and the tuning
    /// of its methods.
    pub fn builder() -> GpuBuilder {
        GpuBuilder::default()
    }

    /// Compiles the kernels (the tuning checked against the device already).
    fn compile(
        context: Context,
        info: DeviceInfo,
        limits: Limits,
        tuning: crate::tuning::Tuning,
    ) -> Result<Self> {
        let kernels = Kernels::new(&context)?;
        let preheat = Preheat::new(&context)?;
        Ok(Self {
            kernels,
            context,
            info,
            limits,
            tiled: Default::default(),
            inverter: Default::default(),
            least_squares: Default::default(),
            batched: Default::default(),
            double: Default::default(),
            preheat,
            tuning,
            _headless: None,
        })
    }

    /// The methods' tuning.
    pub(crate) fn tuning(&self) -> &crate::tuning::Tuning {
        &self.tuning
    }

    /// What the driver reported (vendor, renderer, version, texture limit).
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The largest problem each method holds here, with this `Gpu`'s tuning.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The GL handle, for callers that drive textures themselves.
    pub(crate) fn context(&self) -> &Context {
        &self.context
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The busy work that brings the GPU's clocks up before a timed stretch
    /// ([`time_finish`](crate::timing::time_finish)).
    pub(crate) fn preheat(&self) -> &Preheat {
        &self.preheat
    }

    /// The compiled fragment kernels.
    pub(crate) fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// The blocked method's Cholesky block column on this device when the options name none.
    pub(crate) fn block_column(&self) -> BlockColumn {
        BlockColumn::for_device(self.info.software)
    }

    /// The blocked method's layout of an m x m matrix under `options` here.
    pub(crate) fn blocks(&self, options: Options, m: usize) -> BlockLayout {
        BlockLayout::with(m, options.format, options.blocking)
            .with_column(options.block_column.unwrap_or(self.block_column()))
    }

    /// The methods this device runs, fastest first: tiled, blocked, faithful. (On Mesa's
    /// llvmpipe too, since the tiled kernels read through buffer textures there; measured in
    /// docs/results.md.)
    pub fn methods(&self) -> Vec<Method> {
        Method::CONCRETE
            .into_iter()
            .filter(|m| m.missing(&self.info).is_none())
            .collect()
    }

    /// The concrete method `method` stands for here: [`Method::Auto`] becomes the fastest one
    /// the device runs; a concrete method the device cannot run is
    /// [`DeviceError::Unsupported`] saying what it lacks.
    pub(crate) fn resolve(&self, method: Method) -> Result<Method> {
        match method {
            Method::Auto => Ok(self.methods()[0]),
            m => match m.missing(&self.info) {
                None => Ok(m),
                Some(why) => Err(DeviceError::Unsupported {
                    what: format!("run the {m} method"),
                    why,
                }
                .into()),
            },
        }
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// `Gpu::resolve` for an operation in `format`: [`Method::Auto`] becomes the fastest
    /// method the device runs that has that format.
    pub(crate) fn resolve_for(&self, options: Options) -> Result<Method> {
        match options.method {
            Method::Auto => Ok(*self
                .methods()
                .iter()
                .find(|m| m.supports(options.format))
                .expect("the faithful method runs everywhere")),
            m => self.resolve(m),
        }
    }

    /// `Gpu::resolve` among the methods that draw triangles (for runs stepped pass by pass
    /// over R32F textures: [`Method::Auto`] is the faithful method here; blocked runs step
    /// over RGBA32F blocks through [`Gpu::step`] too).
    pub(crate) fn resolve_raster(&self, method: Method) -> Result<Method> {
        match method {
            Method::Auto => Ok(Method::Faithful),
            m if !m.rasterizes() => Err(InputError::Unsupported(format!(
                "the {m} method draws no triangles, so it has no passes to step through"
            ))
            .into()),
            m => self.resolve(m),
        }
    }

    /// Checks, before anything is allocated, that an m x m problem with n columns of A (n = 0
    /// when there is no A) fits the device for `options`, and gives the method that will run:
    /// textures bound the methods that draw (GL_MAX_TEXTURE_SIZE: [`InputError::TooLarge`],
    /// [`InputError::TooWide`]), storage buffers bound the tiled method.
    ///
    /// [`Method::Auto`] takes the fastest method that can hold the problem (on llvmpipe, whose
    /// storage buffers are small, a large matrix goes to the texture-based methods); when none
    /// can, the error is the fastest method's.
    pub(crate) fn check_problem_size(
        &self,
        m: usize,
        n: usize,
        options: Options,
    ) -> Result<Method> {
        if options.method != Method::Auto {
            let method = self.resolve(options.method)?;
            return self.check_size_for(method, m, n, options).map(|()| method);
        }
        let mut first_error = None;
        for method in self
            .methods()
            .into_iter()
            .filter(|m| m.supports(options.format))
        {
            match self.check_size_for(method, m, n, options) {
                Ok(()) => return Ok(method),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.expect("the faithful method supports every format"))
    }

    /// Whether an m x m problem with n columns of A fits `method`'s storage here.
    fn check_size_for(&self, method: Method, m: usize, n: usize, options: Options) -> Result<()> {
        if method == Method::Tiled {
            // A's columns split over as many buffers as they need (n is bounded by memory).
            self.check_tiled_order(m, tiled::storage_of(options.format))?;
        } else if method == Method::Blocked {
            // A wider than its texture is assembled in column blocks (Gpu::assemble_wide).
            let n = n.min(self.raster_a_columns(method, options));
            self.check_blocked_order(self.blocks(options, m), n)?;
        } else {
            self.check_order(m, options.format)?;
        }
        Ok(())
    }

    // Reached only through `internal::GpuInternals` (the `internals` feature).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// The largest m in each format: (full, packed).
    pub(crate) fn max_order(&self) -> (usize, usize) {
        (self.limits.full, self.limits.packed)
    }

    /// The layout of an m x m matrix in `format` if it fits this GPU's textures, else
    /// [`InputError::TooLarge`](crate::InputError::TooLarge) naming GL_MAX_TEXTURE_SIZE and the
    /// largest m in each format.
    pub(crate) fn check_order(&self, m: usize, format: Format) -> Result<Layout> {
        Layout::checked(m, format, self.info().max_texture_size)
    }
}
