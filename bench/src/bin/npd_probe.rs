//! Whether the tiled Cholesky names the failing column of a matrix that is not positive
//! definite on this device, per schedule: well-conditioned SPD matrices of order M with one
//! diagonal entry lowered by 500 or made NaN (tests/chain/tiled_chain.rs's cases), factored
//! by the chained, blocked, split and default kernels (diagonal tiles of 32 where given), the
//! upper triangle NaN (`TiledMatrix::from_lower`). One line per case on stdout: kernels, m,
//! column, the outcome.
//!
//! `cargo run --release -p symraster-bench --bin npd_probe -- [M...]` (default 129 300 1000)

use symraster::internal::GpuInternals;
use symraster::tiled::cholesky;
use symraster::tiled::schedule::CholeskySchedule;
use symraster::tiled::storage::part_bytes;
use symraster::tiled::{KernelConfig, Storage, TiledKernels, TiledMatrix};
use symraster::tuning::Tuning;
use symraster::{Gpu, problems};

fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![129, 300, 1000]
    } else {
        sizes
    };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    eprintln!("# {} | {}", gpu.info().renderer, gpu.info().version);
    let tuned = |diag: Option<usize>, schedule: CholeskySchedule| {
        let t = Tuning {
            diagonal_block: diag,
            cholesky_schedule: Some(schedule),
            ..Tuning::default()
        };
        TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &t)
    };
    let sets = [
        ("chain-d32", tuned(Some(32), CholeskySchedule::Chain)?),
        ("blocked-d32", tuned(Some(32), CholeskySchedule::Blocked)?),
        ("split", tuned(None, CholeskySchedule::Split)?),
        ("auto", tuned(None, CholeskySchedule::Auto)?),
    ];
    for m in sizes {
        for (column, nan) in [0, 1, 31, 32, m / 2, m - 1]
            .into_iter()
            .map(|c| (c, false))
            .chain([(m / 2, true)])
        {
            let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
            c[(column, column)] = if nan {
                f32::NAN
            } else {
                c[(column, column)] - 500.0
            };
            for (label, k) in &sets {
                let part = part_bytes(k.limits().max_storage_block_bytes, None);
                let mut t = TiledMatrix::from_lower(gpu.context(), &c, Storage::Full, part)?;
                let chained = k.chained_factors();
                let outcome = match cholesky::factor(k, &mut t) {
                    Ok(()) => "Ok (no failure reported)".to_string(),
                    Err(e) => e.to_string(),
                };
                let case = if nan { "nan" } else { "-500" };
                println!(
                    "{label},{m},{column} {case},chained {},{outcome}",
                    k.chained_factors() - chained
                );
            }
        }
    }
    Ok(())
}
