//! `symraster info`: the device, its limits and the methods it runs.

use crate::reproduce::cpu_model;
use anyhow::Result;
use symraster::tuning::MAX_TEXTURE_SIZE;

/// Prints the GL device, version, texture limits (the driver's and the effective one), the
/// largest m per format and the methods this device runs.
pub fn info() -> Result<()> {
    let gpu = super::open_gpu()?;
    let i = gpu.info();
    let limits = gpu.limits();
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
    say!(
        "largest m            {} (full), {} (packed)",
        limits.full,
        limits.packed
    );
    if let Some(tiled) = &limits.tiled {
        say!(
            "largest m, tiled     {} (full), {} (RFP): {}",
            tiled.full,
            tiled.rfp,
            tiled.bound
        );
    }
    let methods = gpu.methods();
    let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
    // Method::Auto is the fastest method the device runs: the first of the list.
    say!(
        "methods              {} (auto: {})",
        names.join(", "),
        methods[0]
    );
    say!("CPU                  {}", cpu_model());
    say!(
        "CPU threads          {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}
