//! `_native._bench_tiled`, with the cargo feature `bench` only (it needs the library's
//! internals): GPU times of the tiled kernels on this process's worker GPU, the one the
//! package's calls use, so `scripts/bench stability` times them after a Python call in the
//! same process and GL context (`python/benchmarks/stability.py`); `_native._log_init`: the
//! library's log on stderr as `RUST_LOG` asks (its phases at `symraster=debug`);
//! `_native._set_polls`: the GPU worker's and the callers' polling windows.

use pyo3::prelude::*;
use symraster::internal::GpuInternals;
use symraster::tiled::{Storage, bench};

use crate::errors::finish;
use crate::worker;

/// Rows (op, m, format, ms): at each order of `sizes`, in full then RFP storage, the
/// assembly (n = 2m), the Cholesky and the two solves with 1 and 16 right-hand sides (ops
/// `assembly`, `cholesky`, `solve-rhs1`, `solve-rhs16`), in that order as `tiled_bench --ops
/// a,c,s --formats full,rfp --rhs 1,16` runs them; GPU milliseconds by timer queries, the
/// median of `runs` after a warm-up (`symraster::tiled::bench`).
#[pyfunction]
pub fn _bench_tiled(
    py: Python<'_>,
    sizes: Vec<usize>,
    runs: usize,
) -> PyResult<Vec<(String, usize, String, f64)>> {
    let outcome = worker::run(py, move |state| {
        let k = state.gpu()?.tiled_kernels()?;
        let mut rows = Vec::new();
        for &m in &sizes {
            for storage in [Storage::Full, Storage::Rfp] {
                let format = storage.name().to_string();
                let a = bench::time_assembly(&k, m, 2 * m, storage, runs)?;
                rows.push(("assembly".to_string(), m, format.clone(), a.ms));
                let c = bench::time_cholesky(&k, m, storage, runs)?;
                rows.push(("cholesky".to_string(), m, format.clone(), c.ms));
                for rhs in [1, 16] {
                    let s = bench::time_solve(&k, m, rhs, storage, runs)?;
                    rows.push((format!("solve-rhs{rhs}"), m, format.clone(), s.ms));
                }
            }
        }
        Ok(rows)
    });
    Ok(finish(py, outcome)?.0)
}

/// Starts the library's log on stderr, filtered as `RUST_LOG` asks (nothing where it is
/// unset); a second call changes nothing.
#[pyfunction]
pub fn _log_init() {
    let _ = env_logger::try_init();
}

/// The worker's and the calling threads' polling windows in microseconds (0: asleep at
/// once), to time the package's calls with and without them.
#[pyfunction]
pub fn _set_polls(worker_us: u64, caller_us: u64) {
    worker::set_polls(worker_us, caller_us);
}
