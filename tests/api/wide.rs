//! Wide A (many observations, n past 262,144 columns) on every method and format: llvmpipe
//! ends a shader's loops after 65,535 iterations and GL caps a launch at 65,535 work groups,
//! so long sums are cut into launches and A's columns into blocks (buffers, textures); the
//! results must match the f64 reference, and a forced split the unsplit result.

use crate::common;

use crate::common::{U32, widen};
use symraster::internal::GpuInternals;
use symraster::least_squares::{relative_error_vec, solve_normal_equations_reference};
use symraster::tiled::{DeviceProduct, Storage, assembly};
use symraster::{Format, Gpu, Matrix, Method, Options, SolveOptions, problems, reference};

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

/// n·u: the classic bound on a sum of n products in f32 (positive terms here, so the
/// relative error of every entry is within it); a skipped stretch of A is off by far more.
fn tolerance(n: usize) -> f64 {
    n as f64 * U32
}

/// Relative error of the lower triangle of `c` against the f64 reference.
fn error(c: &Matrix<f32>, reference: &Matrix<f64>) -> f64 {
    symraster::relative_error(&c.lower_triangle().to_f64(), &reference.lower_triangle())
}

/// Assembles A·diag(d)·Aᵀ by the tiled method (where the device runs it: the methods that
/// draw take one pass per column or per 32, too slow on llvmpipe at this n; their column
/// blocks are checked in tests/wide_split.rs), in both formats, against the f64 reference.
fn check_every_method(gpu: &Gpu, shapes: &[(usize, usize)]) {
    for &(m, n) in shapes {
        let (a, d) = product(m, n, 7 + m as u64);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        for method in gpu.methods().into_iter().filter(|&m| m == Method::Tiled) {
            for format in [Format::Full, Format::Packed] {
                let options = Options::new(format).method(method);
                let c = gpu
                    .assemble(&a, &d, options)
                    .unwrap_or_else(|e| panic!("{method} {format:?} m {m} n {n}: {e}"));
                let e = error(&c, &c_ref);
                assert!(
                    e <= tolerance(n),
                    "{method} {format:?} m {m} n {n}: relative error {e:.2e}"
                );
            }
        }
    }
}

#[test]
fn tiled_assembly_past_262144_columns_matches_f64() {
    let gpu = common::gpu();
    check_every_method(&gpu, &[(5, 300_000), (17, 262_147)]);
}

#[test]
fn tiled_assembly_of_order_24_past_262144_columns_matches_f64() {
    let gpu = common::gpu();
    check_every_method(&gpu, &[(24, 262_147)]);
}

#[test]
fn tiled_a_over_several_buffers_gives_the_one_buffer_bits() {
    let gpu = common::gpu();
    let k = gpu.tiled_kernels().unwrap();
    let (m, n) = (5, 300_003);
    let (a, d) = product(m, n, 3);
    let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
    let one = u32::MAX as u64;
    // Blocks of 65,536 columns: whole launches of the product's depth, so the sums are cut
    // at the same columns and rounded alike.
    let blocks = (m * 65_536 * 4) as u64;
    for storage in [Storage::Full, Storage::Rfp] {
        let run = |max_bytes: u64| {
            let p = DeviceProduct::upload(&k, &a, &d, max_bytes).unwrap();
            let mut c =
                symraster::tiled::TiledMatrix::uninitialized(k.context(), m, storage, one).unwrap();
            c.fill(f32::NAN).unwrap();
            assembly::assemble(&k, &p, &mut c).unwrap();
            (c.download_lower().unwrap(), p.block_count())
        };
        let (c1, n1) = run(one);
        let (cs, ns) = run(blocks);
        assert_eq!(n1, 1);
        assert_eq!(ns, n.div_ceil(65_536), "{storage:?}");
        assert_eq!(
            c1, cs,
            "{storage:?}: {ns} blocks of A differ from one buffer"
        );
        let e = error(&cs, &c_ref);
        assert!(e <= tolerance(n), "{storage:?}: relative error {e:.2e}");
    }
}

#[test]
fn least_squares_with_300000_observations_converges_to_f64() {
    let gpu = common::gpu();
    let (m, n) = (4, 300_000);
    let mut rng = problems::rng(21);
    let a32 = problems::uniform_matrix(&mut rng, m, n);
    let a = a32.to_f64();
    let d: Vec<f64> = (0..n).map(|j| 0.25 + (j % 7) as f64 / 7.0).collect();
    let b: Vec<f64> = (0..n).map(|j| ((j * 37 % 101) as f64) / 101.0).collect();
    let x_ref = solve_normal_equations_reference(&a, &d, &b).unwrap();
    for method in gpu.methods().into_iter().filter(|&m| m == Method::Tiled) {
        for format in [Format::Full, Format::Packed] {
            let options = SolveOptions::new().gpu(Options::new(format).method(method));
            let s = gpu
                .least_squares(&a, &d, &b, options)
                .unwrap_or_else(|e| panic!("{method} {format:?}: {e}"));
            let e = relative_error_vec(&s.x, &x_ref);
            assert!(
                s.converged,
                "{method} {format:?}: criteria {:?}",
                s.criteria
            );
            assert!(e <= 1e-9, "{method} {format:?}: error {e:.2e}");
        }
    }
}

#[test]
fn a_launch_past_the_work_group_limit_is_an_error_not_a_skip() {
    let gpu = common::gpu();
    let ctx = gpu.context();
    static EMPTY: symraster::gl::ComputeKernel = symraster::gl::ComputeKernel {
        name: "empty",
        source: "",
        buffers: &[],
        uniforms: &[],
        optional: &[],
    };
    let p = symraster::gl::ComputeProgram::new(
        ctx,
        &EMPTY,
        "",
        "#version 430\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
    )
    .unwrap();
    let max = symraster::gl::ComputeLimits::query(ctx)
        .unwrap()
        .max_groups_x;
    assert!(p.dispatch([max, 1, 1]).is_ok());
    let e = p.dispatch([max + 1, 1, 1]).unwrap_err();
    assert!(e.to_string().contains("work groups"), "{e}");
}

/// The GPU's packed-panel product (forced here with the shared-memory tiles) on a product cut
/// along its depth: each launch's panels take d from that launch's first column on.
#[test]
fn panel_products_cut_along_their_depth_take_their_part_of_d() {
    let tuning = symraster::Tuning {
        kernel: symraster::KernelShape::SharedTiles,
        ..symraster::Tuning::default()
    };
    let gpu = Gpu::builder().tuning(tuning).build().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    // C spans two 128-row tiles each way (the panels' condition), depth past two launches.
    let (m, n) = (136, 2 * 16384 + 21);
    let (a, _) = product(m, n, 3);
    // Weights that grow along the depth, so a launch reading another stretch's is far off.
    let d: Vec<f32> = (0..n).map(|j| 0.25 + 4.0 * j as f32 / n as f32).collect();
    let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
    let options = Options::new(Format::Full).method(Method::Tiled);
    let c = gpu.assemble(&a, &d, options).unwrap();
    let e = error(&c, &c_ref);
    assert!(e <= tolerance(n), "relative error {e:.2e}");
}
