//! `symraster info`: the device, its limits and the methods it runs.

use crate::reproduce::cpu_model;
use anyhow::Result;
use symraster::internal::GpuInternals;
use symraster::tuning::MAX_TEXTURE_SIZE;

/// Prints the GL device, version, texture limits (the driver's and the effective one), the
/// largest m per format and the methods this device runs.
pub fn info() -> Result<()> {
    let gpu = super::open_gpu()?;
    let i = gpu.info();
    let (full, packed) = gpu.max_order();
    say!("GL_VENDOR            {}", i.vendor);
    say!("GL_RENDERER          {}", i.renderer);
    say!("GL_VERSION           {}", i.version);
    say!(
        "GL_MAX_TEXTURE_SIZE  {} (driver)",
        i.driver_max_texture_size
    );
    say!(
        "texture limit        {}{}",
        i.max_texture_size,
        if i.max_texture_size < i.driver_max_texture_size {
            format!(" (lowered by {})", MAX_TEXTURE_SIZE.name)
        } else {
            String::new()
        }
    );
    say!(
        "EGL device           {} of {}{}",
        i.egl_device_index,
        i.egl_device_count,
        if i.software { " (software)" } else { "" }
    );
    say!("largest m            {full} (full), {packed} (packed)");
    if i.has_compute() {
        let (full, rfp, source) = gpu.max_tiled_order()?;
        say!("largest m, tiled     {full} (full), {rfp} (RFP): {source}");
    }
    let methods: Vec<&str> = gpu.methods().into_iter().map(|m| m.name()).collect();
    say!(
        "methods              {} (auto: {})",
        methods.join(", "),
        gpu.resolve(symraster::Method::Auto)?
    );
    say!("CPU                  {}", cpu_model());
    say!(
        "CPU threads          {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}
