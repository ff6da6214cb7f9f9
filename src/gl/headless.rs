//! A windowless OpenGL context through EGL's device platform (no X, no Wayland).

use super::context::{Context, DeviceInfo, MakeCurrent};
use crate::error::{DeviceError, Error, Result};
use glutin::api::egl::{context::PossiblyCurrentContext, device::Device, display::Display};
use glutin::config::{ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::*;
use std::ffi::CString;

/// The GL versions asked for, newest first: llvmpipe refuses 4.6 and gives 4.5.
const VERSIONS: [(u8, u8); 5] = [(4, 6), (4, 5), (4, 3), (4, 1), (3, 3)];

/// An EGL context current on this thread with no surface; rendering goes to our own framebuffers.
///
/// The EGL context itself is owned by the [`Context`] handle, so it lives as long as the last
/// GL object made from it, and is made current again whenever one of them is used.
pub struct HeadlessContext {
    context: Context,
    info: DeviceInfo,
}

impl HeadlessContext {
    /// Creates a context on the first hardware device, or else on Mesa's software device.
    pub fn new() -> Result<Self> {
        Self::with_device_index(None)
    }

    /// Creates a context on EGL device `index`, or on the preferred device when `None`.
    pub fn with_device_index(index: Option<usize>) -> Result<Self> {
        let devices: Vec<Device> = Device::query_devices()
            .map_err(|e| {
                Error::from(DeviceError::NoDevice {
                    detail: format!("EGL could not enumerate devices ({e})"),
                })
            })?
            .collect();
        if devices.is_empty() {
            return Err(Error::from(DeviceError::NoDevice {
                detail: "EGL found no devices".into(),
            }));
        }
        let is_software = |d: &Device| d.extensions().contains("EGL_MESA_device_software");
        let order: Vec<usize> = match index {
            Some(i) if i >= devices.len() => {
                return Err(Error::from(DeviceError::NoSuchDevice {
                    index: i,
                    count: devices.len(),
                }));
            }
            Some(i) => vec![i],
            None => {
                // Hardware devices first, then software, each in EGL's order.
                let mut o: Vec<usize> = (0..devices.len()).collect();
                o.sort_by_key(|&i| is_software(&devices[i]));
                o
            }
        };
        let mut failures = Vec::new();
        for i in order {
            match Self::create_on(&devices[i]) {
                Ok((_display, egl_context, gl)) => {
                    // The EGL context keeps its display.
                    let make_current: MakeCurrent = Box::new(move || {
                        egl_context
                            .make_current_surfaceless()
                            .map_err(|e| e.to_string())
                    });
                    let context = Context::with_make_current(gl, Some(make_current));
                    let info = DeviceInfo {
                        egl_device_index: i,
                        egl_device_count: devices.len(),
                        software: is_software(&devices[i]),
                        ..DeviceInfo::query(&context)?
                    };
                    log::info!(
                        "GL device {i}: {} / {} / {} (max texture {})",
                        info.vendor,
                        info.renderer,
                        info.version,
                        info.max_texture_size
                    );
                    return Ok(Self { context, info });
                }
                Err(e) => failures.push(format!("device {i}: {e}")),
            }
        }
        Err(Error::from(DeviceError::NoDevice {
            detail: failures.join("; "),
        }))
    }

    fn create_on(
        device: &Device,
    ) -> Result<(Display, PossiblyCurrentContext, glow::Context), String> {
        let display = unsafe { Display::with_device(device, None) }.map_err(|e| e.to_string())?;
        // No surface types: the default template asks for window surfaces, and a device display
        // (Mesa's in particular) offers no such config.
        let template = ConfigTemplateBuilder::new()
            .with_surface_type(ConfigSurfaceTypes::empty())
            .build();
        let config = unsafe { display.find_configs(template) }
            .map_err(|e| format!("no EGL config: {e}"))?
            .next()
            .ok_or("no EGL config without surfaces")?;
        let mut last_error = String::from("no version tried");
        for (major, minor) in VERSIONS {
            let attributes = ContextAttributesBuilder::new()
                .with_profile(GlProfile::Core)
                .with_context_api(ContextApi::OpenGl(Some(Version::new(major, minor))))
                .build(None);
            match unsafe { display.create_context(&config, &attributes) } {
                Ok(not_current) => {
                    let current = not_current
                        .make_current_surfaceless()
                        .map_err(|e| format!("cannot make the context current: {e}"))?;
                    let gl = unsafe {
                        glow::Context::from_loader_function(|name| {
                            let name = CString::new(name).expect("GL symbol names have no NUL");
                            display.get_proc_address(&name)
                        })
                    };
                    return Ok((display, current, gl));
                }
                Err(e) => last_error = format!("OpenGL {major}.{minor} core refused: {e}"),
            }
        }
        Err(last_error)
    }

    /// The GL handle.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// What the driver reported.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}
