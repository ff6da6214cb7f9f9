//! Host ↔ GPU transfer rates of the buffer layer (src/gl/buffer.rs) at the sizes the solvers
//! move: a new buffer's upload (glBufferData + a mapping filled on all cores), a write into
//! an existing buffer and a read back (through the staged, double-buffered path from the
//! tuning's `SYMRASTER_STAGED_FROM_BYTES`, default 8 MiB, below it glBufferSubData and
//! glGetBufferSubData), and the same read in 4 MiB pieces; where the read's time goes: the read
//! handed on from the staging mappings without a copy (`read_mapped_untouched`: the GPU's
//! copies and the waits), with every cache line of them read on all cores
//! (`read_mapped_touched`), and a copy between two host arrays on all cores
//! (`host_parallel_copy`, both touched first). Sizes in MiB, fractions allowed.
//! CSV `what,mib,ms,gb_s` on stdout. `cargo run --release -p symraster-bench --bin
//! transfer_bench -- 0.5 4 64 256 1024`.

use rayon::prelude::*;
use std::time::Instant;
use symraster::Gpu;
use symraster::gl::{Buffer, BufferTarget, BufferUsage};

fn main() -> anyhow::Result<()> {
    let sizes: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() { vec![64.0] } else { sizes };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = symraster::inverse::Inverter::new(&gpu)?;
    let ctx = inv.context();
    println!("# {}", gpu.info().renderer);
    println!("what,mib,ms,gb_s");
    for &mib in &sizes {
        let bytes = (mib * (1 << 20) as f64) as usize / 8 * 8;
        let len = bytes / 8;
        let data: Vec<f64> = (0..len).map(|i| i as f64).collect();
        let report = |what: &str, ms: f64| {
            println!("{what},{mib},{ms:.3},{:.1}", bytes as f64 / ms / 1e6);
        };
        for round in 0..5 {
            let t = Instant::now();
            let b = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &data)?;
            ctx.finish();
            let new_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            b.write(0, &data)?;
            ctx.finish();
            let write_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let back = b.download()?;
            let read_ms = t.elapsed().as_secs_f64() * 1e3;
            anyhow::ensure!(back == data, "the read back differs");
            let piece = (4 << 20) / 8;
            let t = Instant::now();
            let mut pieces = Vec::with_capacity(len);
            for start in (0..len).step_by(piece) {
                pieces.extend(b.download_range(start, piece.min(len - start))?);
            }
            let pieces_ms = t.elapsed().as_secs_f64() * 1e3;
            anyhow::ensure!(pieces == data, "the read in pieces differs");
            let t = Instant::now();
            b.read_pieces(&|_, _| {})?;
            let untouched_ms = t.elapsed().as_secs_f64() * 1e3;
            let sum = std::sync::atomic::AtomicU64::new(0);
            let t = Instant::now();
            b.read_pieces(&|_, values| {
                // One value per 64-byte line.
                let s: f64 = values.iter().step_by(8).sum();
                sum.fetch_add(s as u64, std::sync::atomic::Ordering::Relaxed);
            })?;
            let touched_ms = t.elapsed().as_secs_f64() * 1e3;
            let mut copy = vec![0.0f64; len];
            copy.par_iter_mut().for_each(|v| *v = -1.0);
            let t = Instant::now();
            copy.par_chunks_mut(1 << 15)
                .zip(data.par_chunks(1 << 15))
                .for_each(|(o, i)| o.copy_from_slice(i));
            let host_ms = t.elapsed().as_secs_f64() * 1e3;
            anyhow::ensure!(
                copy == data && sum.into_inner() > 0,
                "the host copy differs"
            );
            if round > 0 {
                report("new_buffer_mapped", new_ms);
                report("write_staged", write_ms);
                report("read_staged", read_ms);
                report("read_4mib_pieces", pieces_ms);
                report("read_mapped_untouched", untouched_ms);
                report("read_mapped_touched", touched_ms);
                report("host_parallel_copy", host_ms);
            }
        }
    }
    Ok(())
}
