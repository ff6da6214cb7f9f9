//! Which EGL device this process's GPU opens. The Python package chooses it
//! (`symraster.use_device`, or the `SYMRASTER_EGL_DEVICE` variable it reads at import); the
//! library itself never reads the environment. The choice takes effect at the GPU's open (the
//! first GPU call of the process), so it must come before it.

use std::sync::Mutex;

use pyo3::prelude::*;
use symraster::Gpu;

/// The device the next open uses (`None`: the library's default, the first hardware device,
/// else Mesa's software rasterizer).
static CHOSEN: Mutex<Option<usize>> = Mutex::new(None);

/// The open GPU of this process: (process id, the device asked for, the device opened).
static OPENED: Mutex<Option<(u32, Option<usize>, usize)>> = Mutex::new(None);

/// Opens the GPU with `build` on the device chosen (`None`: the default) and records it. The
/// record's lock is held through the open, so a choice made meanwhile waits and sees it.
pub fn open<F>(build: F) -> symraster::Result<Gpu>
where
    F: FnOnce(Option<usize>) -> symraster::Result<Gpu>,
{
    let mut opened = OPENED.lock().unwrap_or_else(|e| e.into_inner());
    let asked = *CHOSEN.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = build(asked)?;
    *opened = Some((std::process::id(), asked, gpu.info().egl_device_index));
    Ok(gpu)
}

/// Chooses EGL device `index` (`None`: the default) for this process's GPU. Returns `None`
/// where the choice holds (the GPU is not open yet, or is open on that device), else the
/// index of the device this process's GPU is open on already (nothing changes).
#[pyfunction]
pub fn select_device(py: Python<'_>, index: Option<usize>) -> Option<usize> {
    // Without the GIL: an open in progress on the worker holds the record's lock.
    py.detach(|| {
        let opened = OPENED.lock().unwrap_or_else(|e| e.into_inner());
        match *opened {
            Some((pid, asked, open)) if pid == std::process::id() => {
                if index == asked || index == Some(open) {
                    None
                } else {
                    Some(open)
                }
            }
            _ => {
                *CHOSEN.lock().unwrap_or_else(|e| e.into_inner()) = index;
                None
            }
        }
    })
}
