//! [`GpuBuilder`]: which device to open and how to tune its methods, checked by one rule
//! before anything is compiled.

use super::Gpu;
use crate::error::{DeviceError, Result};
use crate::gl::{Context, DeviceInfo, HeadlessContext};
use crate::tuning::Tuning;

/// The variable the program maps onto [`GpuBuilder::device`].
pub const DEVICE_VAR: &str = "SYMRASTER_EGL_DEVICE";

/// How to open a [`Gpu`]: the EGL device (default: the first hardware device, else Mesa's
/// software rasterizer) and the [`Tuning`] of its methods (default: the device's choices).
///
/// ```
/// use symraster::{Gpu, Tuning};
/// let tuning = Tuning { max_buffer_bytes: Some(1 << 20), ..Tuning::default() };
/// let gpu = Gpu::builder().tuning(tuning).build()?;
/// # Ok::<(), symraster::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct GpuBuilder {
    device: Option<usize>,
    tuning: Tuning,
}

impl GpuBuilder {
    /// Opens EGL device `index` (as enumerated by EGL; `symraster info` lists them).
    pub fn device(mut self, index: usize) -> Self {
        self.device = Some(index);
        self
    }

    /// Tunes the methods.
    pub fn tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Takes the device and tuning values among `vars` (name, value pairs, such as
    /// `std::env::vars()`: the library never reads the environment itself):
    /// `SYMRASTER_EGL_DEVICE` and the names of [`crate::tuning::KNOBS`] and
    /// [`crate::tuning::TILED_CONFIG`]; any other `SYMRASTER_` name is an error (misspelt or
    /// retired), other names are ignored. An empty value leaves the default; a bad one is a
    /// one-line [`DeviceError::BadEnvironment`].
    pub fn vars<I, K, V>(mut self, vars: I) -> Result<Self>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (name, value) in vars {
            let (name, value) = (name.as_ref(), value.as_ref());
            if value.trim().is_empty() {
                continue;
            }
            if name == DEVICE_VAR {
                let index =
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| DeviceError::BadEnvironment {
                            name: DEVICE_VAR,
                            value: value.to_string(),
                            expected: "a device index (0, 1, ...)",
                        })?;
                self.device = Some(index);
            } else if Tuning::is_knob(name) || name.starts_with("SYMRASTER_") {
                // One rule for every name of ours: a misspelt or retired one is an error too,
                // not a setting silently ignored.
                self.tuning.set(name, value)?;
            }
        }
        Ok(self)
    }

    /// Opens the device, checks the tuning against it ([`Tuning::validate`]) and compiles the
    /// kernels.
    pub fn build(self) -> Result<Gpu> {
        let headless = HeadlessContext::with_device_index(self.device)?;
        let mut gpu = Self::on(
            self.tuning,
            headless.context().clone(),
            headless.info().clone(),
        )?;
        gpu._headless = Some(headless);
        Ok(gpu)
    }

    /// The same on an existing context (a window's, for the viewer), which must be current on
    /// this thread and stay alive as long as the `Gpu`.
    pub fn build_on(self, context: Context, info: DeviceInfo) -> Result<Gpu> {
        Self::on(self.tuning, context, info)
    }

    fn on(tuning: Tuning, context: Context, mut info: DeviceInfo) -> Result<Gpu> {
        tuning.validate(&context, &info)?;
        if let Some(limit) = tuning.max_texture_size {
            info.max_texture_size = info.driver_max_texture_size.min(limit);
        }
        let limits = super::Limits::query(&context, &info)?;
        context.set_mapped_uploads(tuning.mapped_upload());
        context.set_staged_from(tuning.staged_from_bytes());
        context.set_staging_chunk(tuning.staging_chunk_bytes.map(|b| b as usize));
        Gpu::compile(context, info, limits, tuning)
    }
}
