//! Whether the driver runs two independent compute launches side by side when no barrier
//! separates them (`ComputeProgram::dispatch_unfenced`): the premise of a look-ahead schedule,
//! whose narrow panel factorization would run beside the wide update of the step before.
//! A narrow launch (`--narrow` work groups of 256, few multiprocessors busy, like a pivoted
//! panel) and a wide one (`--wide` work groups, every multiprocessor busy, like a block update),
//! each `--iters` dependent multiply-adds per invocation on buffers of its own, timed alone,
//! one after the other with the barrier between, and in both orders with the first unfenced.
//! CSV on stdout: case,ms (wall time around the launches and glFinish, median of `--runs`).
//!
//! `cargo run --release -p symraster-bench --bin overlap_probe -- [--narrow 1] [--wide 2112]
//!  [--iters 20000] [--runs 15]`

use anyhow::{Context as _, bail};
use std::time::Instant;
use symraster::Gpu;
use symraster::gl::{Buffer, BufferTarget, BufferUsage, ComputeKernel, ComputeProgram, Uniform};
use symraster::internal::GpuInternals;

static SPIN: ComputeKernel = ComputeKernel {
    name: "bench/spin",
    source: include_str!("../../glsl/spin.comp"),
    buffers: &[("XBuf", 0)],
    uniforms: &["iters"],
    optional: &[],
};

fn main() -> anyhow::Result<()> {
    let (mut narrow, mut wide, mut iters, mut runs) = (1u32, 2112u32, 20000u32, 15usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value: u64 = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?
            .parse()?;
        match flag.as_str() {
            "--narrow" => narrow = value.try_into()?,
            "--wide" => wide = value.try_into()?,
            "--iters" => iters = value.try_into()?,
            "--runs" => runs = value.try_into()?,
            _ => bail!("unknown flag {flag}"),
        }
    }
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let ctx = gpu.context();
    eprintln!("# {} | {}", gpu.info().renderer, gpu.info().version);
    let program = ComputeProgram::new(ctx, &SPIN, "", &format!("#version 430\n{}", SPIN.source))?;
    program.set("iters", Uniform::U32(iters))?;
    let buffer = |groups: u32| {
        let data = vec![0.5f32; groups as usize * 256];
        Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, &data)
    };
    let (a, b) = (buffer(narrow)?, buffer(wide)?);
    // One launch: the narrow (true) or the wide one, with the barrier after it or not.
    let launch = |is_narrow: bool, fenced: bool| -> anyhow::Result<()> {
        let (buf, groups) = if is_narrow { (&a, narrow) } else { (&b, wide) };
        buf.bind_base(0);
        if fenced {
            program.dispatch([groups, 1, 1])?;
        } else {
            program.dispatch_unfenced([groups, 1, 1])?;
        }
        Ok(())
    };
    let cases: [(&str, &[(bool, bool)]); 6] = [
        ("narrow alone", &[(true, true)]),
        ("wide alone", &[(false, true)]),
        (
            "narrow then wide, barrier between",
            &[(true, true), (false, true)],
        ),
        ("narrow unfenced then wide", &[(true, false), (false, true)]),
        (
            "wide then narrow, barrier between",
            &[(false, true), (true, true)],
        ),
        ("wide unfenced then narrow", &[(false, false), (true, true)]),
    ];
    println!("case,narrow_groups,wide_groups,iters,ms");
    for (name, steps) in cases {
        let mut times = Vec::with_capacity(runs);
        for run in 0..runs + 2 {
            ctx.finish();
            let start = Instant::now();
            for &(is_narrow, fenced) in steps {
                launch(is_narrow, fenced)?;
            }
            ctx.finish();
            if run >= 2 {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name},{narrow},{wide},{iters},{:.4}",
            times[times.len() / 2]
        );
    }
    Ok(())
}
