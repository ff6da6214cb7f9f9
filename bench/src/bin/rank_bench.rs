//! GPU times of the general inverses' block update C −= X·Y on its own (C n × n, X n × depth,
//! Y depth × n), by each `BlockUpdate`: one line per order, depth and choice (n, depth,
//! update, rank kernel variant, GPU ms, TFLOP/s). `rank_bench [--depth 64,128] [--update
//! rank64,rank128,products] [--variant 16:0,64:1] 4096 8192 16384` (variants
//! "depth_slice:c_first", `RankVariant::parse`).

use anyhow::Context;
use symraster::Gpu;
use symraster::inverse::Inverter;
use symraster::inverse::bench::time_block_update;
use symraster::inverse::kernels::rank::{BlockUpdate, RankVariant};

fn main() -> anyhow::Result<()> {
    env_logger::init();
    let mut depths = vec![64];
    let mut updates = vec![
        BlockUpdate::Rank64,
        BlockUpdate::Rank128,
        BlockUpdate::Products,
    ];
    let mut variants = vec![RankVariant::default()];
    let mut sizes = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let list = |v: Option<String>| v.with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--depth" => {
                depths = list(args.next())?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--update" => {
                updates = list(args.next())?
                    .split(',')
                    .map(|u| BlockUpdate::from_name(u).with_context(|| format!("no update {u}")))
                    .collect::<anyhow::Result<_>>()?
            }
            "--variant" => {
                variants = list(args.next())?
                    .split(',')
                    .map(|v| RankVariant::parse(v).with_context(|| format!("no variant {v}")))
                    .collect::<anyhow::Result<_>>()?
            }
            _ => sizes.push(a.parse().with_context(|| format!("not an order: {a}"))?),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1024, 4096];
    }
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = Inverter::new(&gpu)?;
    println!("# {}", gpu.info().renderer);
    println!("n,depth,update,variant,gpu_ms,tflops");
    for &n in &sizes {
        for &depth in &depths {
            for &u in &updates {
                for &v in &variants {
                    inv.set_rank_variant(v);
                    let ms = time_block_update(&inv, n, depth, u, 5)?;
                    let tf = 2.0 * (n * n * depth) as f64 / (ms * 1e9);
                    println!("{n},{depth},{},{},{ms:.4},{tf:.2}", u.name(), v.name());
                }
            }
        }
    }
    Ok(())
}
