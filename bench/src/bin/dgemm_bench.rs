//! GPU times of the f64 product of the sign function and the Lyapunov solver
//! (glsl/inverse/dgemm.comp through `Inverter::dgemm`) at the orders given (default 1024 2048
//! 4096), as CSV `what,n,ms,tflops` (2n³ flops each, median of 5 after a warm-up): A·B, A·Bᵀ
//! (the Lyapunov residual's X·Aᵀ), A·B with the Σ C² sums; then the f32 tiled product
//! C = A·Bᵀ with B plain and with B a transposed view (the Lyapunov C-iteration's Y·C).
//! Rows `dgemm_ab_<tile>` / `dgemm_abt_<tile>` time each work-group tile the f64 product has
//! (the others use the one `DoubleTile::for_product` picks). Last, rows `fma_peak_f64` and
//! `fma_peak_f32`: the rate of independent fused multiply-adds in registers alone, the ceiling
//! any product kernel in GLSL has on this device. The GPU is preheated before each order
//! (`timing::Preheat`: an idle device's first work runs at a low clock); the operands stay on
//! the GPU between runs.
//! `cargo run --release --example dgemm_bench -- 1024 2048 4096`.

use std::time::Instant;
use symraster::Gpu;
use symraster::gl::{
    Buffer, BufferTarget, BufferUsage, ComputeKernel, ComputeProgram, GpuTimer, Uniform,
};
use symraster::inverse::Inverter;
use symraster::inverse::kernels::double::{DoubleProduct, DoubleSquare, DoubleTile};
use symraster::matrix::Matrix;
use symraster::tiled::{Operand, Product, View};
use symraster::timing::Preheat;

/// Runs per timing (after one warm-up).
const RUNS: usize = 5;

/// Milliseconds of one run of `work`: GL_TIME_ELAPSED, or the wall time to the end of glFinish
/// where the timer reads under 1% of it (llvmpipe runs compute work outside its timer).
fn time_once(
    inv: &Inverter,
    timer: &GpuTimer,
    work: &mut impl FnMut() -> symraster::Result<()>,
) -> symraster::Result<f64> {
    inv.context().finish();
    let start = Instant::now();
    timer.begin();
    work()?;
    timer.end();
    inv.context().finish();
    let wall = start.elapsed().as_secs_f64() * 1e3;
    let gpu = timer.elapsed()?.as_secs_f64() * 1e3;
    Ok(if gpu >= 0.01 * wall { gpu } else { wall })
}

/// Median milliseconds of [`RUNS`] runs of `work` after one warm-up.
fn median_ms(
    inv: &Inverter,
    timer: &GpuTimer,
    mut work: impl FnMut() -> symraster::Result<()>,
) -> symraster::Result<f64> {
    work()?;
    let mut ms = (0..RUNS)
        .map(|_| time_once(inv, timer, &mut work))
        .collect::<symraster::Result<Vec<f64>>>()?;
    ms.sort_by(f64::total_cmp);
    Ok(ms[RUNS / 2])
}

/// Entries in [−1, 1) from a seeded linear congruential generator.
fn random(n: usize, seed: u64) -> Matrix<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Matrix::from_fn(n, n, |_, _| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    })
}

/// Chains of fused multiply-adds in registers, CHAINS per invocation and `steps` each (the
/// scalar type T and CHAINS as #defines), their sum written so none is dropped.
static PEAK: ComputeKernel = ComputeKernel {
    name: "fma_peak",
    source: r"
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Out { T o[]; };
uniform uint steps;
void main() {
    T v[CHAINS];
    for (int c = 0; c < CHAINS; ++c) v[c] = T(gl_GlobalInvocationID.x + uint(c)) * T(1e-9);
    T m = T(0.9999999);
    T d = T(1e-7);
    for (uint s = 0u; s < steps; ++s)
        for (int c = 0; c < CHAINS; ++c) v[c] = fma(v[c], m, d);
    T sum = T(0);
    for (int c = 0; c < CHAINS; ++c) sum += v[c];
    o[gl_GlobalInvocationID.x] = sum;
}
",
    buffers: &[("Out", 0)],
    uniforms: &["steps"],
    optional: &[],
};

/// TFLOP/s of [`PEAK`] in `scalar` ("double" or "float") over `groups` work groups.
fn fma_peak(inv: &Inverter, timer: &GpuTimer, scalar: &str, groups: u32) -> anyhow::Result<f64> {
    const CHAINS: usize = 16;
    const STEPS: u32 = 4096;
    let source = format!(
        "#version 430\n#define T {scalar}\n#define CHAINS {CHAINS}\n{}",
        PEAK.source
    );
    let program = ComputeProgram::new(inv.context(), &PEAK, scalar, &source)?;
    let threads = groups as usize * 256;
    let out: Buffer<f64> = Buffer::uninitialized(
        inv.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        threads,
    )?;
    out.bind_base(0);
    program.bind();
    program.set("steps", Uniform::U32(STEPS))?;
    let ms = median_ms(inv, timer, || program.dispatch([groups, 1, 1]))?;
    let flops = 2.0 * (threads * CHAINS) as f64 * f64::from(STEPS);
    Ok(flops / (ms * 1e9))
}

fn main() -> anyhow::Result<()> {
    let sizes = symraster_bench::sizes_or(&[1024, 2048, 4096])?;
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = Inverter::new(&gpu)?;
    let timer = GpuTimer::new(inv.context())?;
    let heat = Preheat::new(inv.context())?;
    println!("# {}", gpu.info().renderer);
    println!("what,n,ms,tflops");
    for &n in &sizes {
        let flops = 2.0 * (n as f64).powi(3);
        let row = |what: &str, ms: f64| {
            println!("{what},{n},{ms:.4},{:.4}", flops / (ms * 1e9));
        };
        let (a, b) = (random(n, 1), random(n, 2));
        let ga = DoubleSquare::upload(&inv, "A", &a)?;
        let gb = DoubleSquare::upload(&inv, "B", &b)?;
        let gc = DoubleSquare::new(&inv, "C", n)?;
        let ab = DoubleProduct::new(gc.op(false), ga.op(false), gb.op(false));
        let abt = DoubleProduct::new(gc.op(false), ga.op(false), gb.op(true));
        heat.run(inv.context());
        row(
            "dgemm_ab",
            median_ms(&inv, &timer, || inv.dgemm(ab, false).map(drop))?,
        );
        row(
            "dgemm_abt",
            median_ms(&inv, &timer, || inv.dgemm(abt, false).map(drop))?,
        );
        row(
            "dgemm_ab_sums",
            median_ms(&inv, &timer, || inv.dgemm(ab, true).map(drop))?,
        );
        // Each tile on both shapes, for choosing DoubleTile::for_product's rule.
        for tile in DoubleTile::ALL {
            for (what, p) in [("ab", ab), ("abt", abt)] {
                let ms = median_ms(&inv, &timer, || inv.dgemm_with(p, false, tile).map(drop))?;
                row(&format!("dgemm_{what}_{}", tile.name()), ms);
            }
        }
        drop((ga, gb, gc));

        let to_f32 = |m: &Matrix<f64>| m.as_slice().iter().map(|&x| x as f32).collect::<Vec<_>>();
        let sa = inv.buffer_with("A", &to_f32(&a))?;
        let sb = inv.buffer_with("B", &to_f32(&b))?;
        let sc = inv.buffer("C", n * n)?;
        let v = View::row_major(n, n);
        let k = inv.tiled();
        let (c, a32) = (Operand::new(&sc, v), Operand::new(&sa, v));
        row(
            "sgemm_abt",
            median_ms(&inv, &timer, || {
                k.gemm(Product::new(c, a32, Operand::new(&sb, v)))
            })?,
        );
        row(
            "sgemm_ab_transposed_view",
            median_ms(&inv, &timer, || {
                k.gemm(Product::new(c, a32, Operand::new(&sb, v.t())))
            })?,
        );
    }
    heat.run(inv.context());
    for scalar in ["double", "float"] {
        let short = if scalar == "double" { "f64" } else { "f32" };
        println!(
            "fma_peak_{short},0,0,{:.4}",
            fma_peak(&inv, &timer, scalar, 132 * 32)?
        );
    }
    Ok(())
}
