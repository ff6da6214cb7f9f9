//! The blocked method (RGBA32F 2 x 2 blocks, or 4 x 4 blocks over four render targets;
//! rank-K passes) against the f64 reference, with its geometry checked in software and every
//! pass's writes checked on the GPU, in both blockings.

use crate::common::blocked::{
    BLOCKINGS, Blocks, Role, check_failing_columns, check_poisoned_runs, pair_layers, role,
    upload_to_pair,
};
use crate::common::soft_raster::{rasterize, texel};
use crate::common::{U32, gpu, widen};
use std::collections::BTreeSet;
use symraster::blocked::geometry::{cholesky_plan, lower_blocks, panel};
use symraster::draw::Pass;
use symraster::draw::execution::Execution;
use symraster::gl::Rgba32F;
use symraster::internal::GpuInternals;
use symraster::layout::blocked::{BLOCK_COLUMN, BlockLayout};
use symraster::{Format, Gpu, Matrix, Method, Options, problems, reference, relative_error};

fn blocked(blocks: Blocks) -> Options {
    blocks.options(Format::Full)
}

const KB: usize = BLOCK_COLUMN / 2;

// ---- geometry, no GPU ----

fn lower_set(from: usize, to: usize) -> BTreeSet<(usize, usize)> {
    (from..to)
        .flat_map(|y| (from..=y).map(move |x| (x, y)))
        .collect()
}

#[test]
fn block_triangles_cover_the_lower_blocks_once_and_name_the_rows() {
    for t in 1..=24 {
        for (from, k) in [(0, 0), (t / 3, t / 4)] {
            let frags = rasterize(&lower_blocks(from, t, k), t, t);
            let got: BTreeSet<_> = frags.iter().map(|f| (f.x, f.y)).collect();
            assert_eq!(got, lower_set(from, t), "t={t} from={from}");
            assert_eq!(frags.len(), got.len(), "t={t}: a texel drawn twice");
            for f in frags {
                // T0 names block row y of column k, T1.yx block row x of column k.
                assert_eq!((texel(f.t0[0]), texel(f.t0[1])), (k as i64, f.y as i64));
                assert_eq!((texel(f.t1[1]), texel(f.t1[0])), (k as i64, f.x as i64));
            }
        }
    }
}

#[test]
fn panel_rectangle_covers_the_blocks_below_the_diagonal_block_once() {
    for (k, t) in [(0, 8), (8, 24), (16, 24), (0, 9)] {
        let frags = rasterize(&panel(k, KB, t), t, t);
        let got: BTreeSet<_> = frags.iter().map(|f| (f.x, f.y)).collect();
        let want: BTreeSet<_> = (k + KB..t)
            .flat_map(|y| (k..k + KB).map(move |x| (x, y)))
            .collect();
        assert_eq!(got, want, "k={k} t={t}");
        assert_eq!(frags.len(), want.len());
        for f in frags {
            assert_eq!(texel(f.t0[0]), k as i64);
        }
    }
}

/// Texels a blocked pass must write: the lower blocks of its region.
fn intended(layout: BlockLayout, pass: &Pass, b_height: usize) -> BTreeSet<(usize, usize)> {
    let (t, kb) = (layout.texels(), layout.block_column_texels());
    let k = pass.step / layout.blocking().side();
    match role(pass.kernel) {
        Role::Scaling => (0..b_height)
            .flat_map(|y| (0..t).map(move |x| (x, y)))
            .collect(),
        Role::Addition => lower_set(0, t),
        Role::Factor | Role::Inverse => lower_set(k, k + kb),
        Role::Panel => (k + kb..t)
            .flat_map(|y| (k..k + kb).map(move |x| (x, y)))
            .collect(),
        Role::Subtraction => lower_set(k + kb, t),
    }
}

#[test]
fn cholesky_plan_covers_every_lower_block_in_order() {
    // Each lower texel is factored (diagonal block) or solved (panel) exactly once, and
    // updated by every earlier block column; the inverse is drawn over the block just
    // factored, and each copy copies the block column just finished.
    for (m, blocking) in [1, 16, 17, 40]
        .into_iter()
        .flat_map(|m| BLOCKINGS.map(|b| (m, b)))
    {
        let layout = blocking.layout(m, Format::Full);
        let plan = cholesky_plan(layout);
        let t = layout.texels();
        let mut finished = BTreeSet::new();
        let mut column = BTreeSet::new();
        for pass in &plan.passes {
            let frags: BTreeSet<_> = rasterize(plan.vertices_of(pass), t, t)
                .iter()
                .map(|f| (f.x, f.y))
                .collect();
            if pass.kernel.is_copy() {
                assert_eq!(frags, std::mem::take(&mut column), "m={m}: the copy");
                continue;
            }
            assert_eq!(frags, intended(layout, pass, 0), "m={m}");
            match role(pass.kernel) {
                Role::Subtraction => assert!(
                    frags.is_disjoint(&finished),
                    "m={m}: update of a finished block"
                ),
                Role::Inverse => assert!(frags.is_subset(&column), "m={m}: the inverse"),
                _ => {
                    for p in &frags {
                        assert!(finished.insert(*p), "m={m}: {p:?} finished twice");
                    }
                    column.extend(frags);
                }
            }
        }
        assert_eq!(finished, lower_set(0, t), "m={m}");
    }
}

// ---- on the GPU ----

const SIZES: [usize; 14] = [1, 2, 3, 4, 7, 16, 17, 31, 33, 63, 64, 65, 96, 100];

fn check_assembly(gpu: &Gpu, m: usize, n: usize, seed: u64, blocking: Blocks) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d = problems::uniform_vector(&mut rng, n);
    let c = gpu.assemble(&a, &d, blocked(blocking)).unwrap();
    let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
    let err = relative_error(&c, &c_ref);
    let tol = 2.0 * (n as f64 + 2.0) * U32;
    assert!(
        err <= tol,
        "blocked {blocking} assembly m={m} n={n}: {err:.3e} > {tol:.3e}"
    );
    assert_eq!(c, c.lower_triangle(), "m={m}: upper triangle not zero");
}

#[test]
fn assembly_matches_reference() {
    let gpu = gpu();
    for blocking in BLOCKINGS {
        for m in SIZES {
            check_assembly(&gpu, m, 2 * m, 10 + m as u64, blocking);
        }
        for (m, n) in [(3, 1), (33, 5), (20, 33), (64, 65), (5, 100)] {
            check_assembly(&gpu, m, n, 99, blocking);
        }
    }
}

fn check_cholesky(gpu: &Gpu, c: &Matrix<f32>, blocking: Blocks) -> Matrix<f32> {
    let m = c.rows();
    let l = gpu
        .cholesky(c, blocked(blocking))
        .unwrap()
        .into_l()
        .unwrap();
    let l_ref = reference::cholesky(&c.to_f64()).unwrap();
    let forward = relative_error(&l, &l_ref);
    let backward = relative_error(
        &reference::multiply_lower_by_transpose(&l.to_f64()),
        &c.to_f64().symmetric_from_lower(),
    );
    let tol = 16.0 * (m as f64 + 2.0) * U32;
    assert!(
        backward <= tol,
        "{blocking} m={m}: backward {backward:.3e} > {tol:.3e}"
    );
    assert!(forward <= tol, "m={m}: forward {forward:.3e} > {tol:.3e}");
    assert_eq!(l, l.lower_triangle(), "m={m}: upper triangle of L not zero");
    l
}

#[test]
fn cholesky_matches_reference() {
    let gpu = gpu();
    for blocking in BLOCKINGS {
        for m in SIZES {
            let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
            check_cholesky(&gpu, &c, blocking);
        }
    }
}

#[test]
fn factor_product_keeps_c_on_the_gpu_and_matches() {
    let gpu = gpu();
    for (m, blocking) in [1, 5, 32, 47]
        .into_iter()
        .flat_map(|m| BLOCKINGS.map(|b| (m, b)))
    {
        let mut rng = problems::rng(7 * m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 2 * m);
        let d = problems::uniform_vector(&mut rng, 2 * m);
        let l = gpu
            .factor_product(&a, &d, blocked(blocking))
            .unwrap()
            .into_l()
            .unwrap();
        let c = reference::assemble(&a.to_f64(), &widen(&d));
        let backward = relative_error(
            &reference::multiply_lower_by_transpose(&l.to_f64()),
            &c.symmetric_from_lower(),
        );
        assert!(
            backward <= 8.0 * (2.0 * m as f64 + 2.0) * U32,
            "{blocking} m={m}: {backward:.3e}"
        );
    }
}

/// Every pass with its target poisoned with NaN writes exactly its blocks.
#[test]
fn every_pass_writes_exactly_its_blocks() {
    check_poisoned_runs(&gpu(), Format::Full, &[1, 2, 3, 16, 17, 35], intended);
}

/// Every texel above the diagonal of both textures of `run` (NaN-poisoned before it) is still
/// NaN: no pass drew an upper block.
fn assert_upper_blocks_untouched(run: &Execution<'_, Rgba32F>, layout: BlockLayout) {
    let t = layout.texels();
    for data in pair_layers(run) {
        for y in 0..t {
            for x in y + 1..t {
                assert!(
                    data[y * t + x].iter().all(|v| v.is_nan()),
                    "m={} ({x}, {y})",
                    layout.order()
                );
            }
        }
    }
}

/// NaN in every strict-upper entry of both textures (whole blocks above the diagonal and the
/// upper entries of each diagonal block): the factor is the clean run's, bit for bit.
#[test]
fn cholesky_never_reads_the_upper_triangle() {
    let gpu = gpu();
    for (m, blocking) in [2, 7, 33]
        .into_iter()
        .flat_map(|m| BLOCKINGS.map(|b| (m, b)))
    {
        let c = problems::well_conditioned_spd(&mut problems::rng(3), m);
        let clean = gpu
            .cholesky(&c, blocked(blocking))
            .unwrap()
            .into_l()
            .unwrap();
        let layout = blocking.layout(m, Format::Full);
        let mut run = gpu.start_blocked_cholesky_as(&c, layout).unwrap();
        upload_to_pair(&run, &layout.pack_layers(&c, f32::NAN));
        run.finish().unwrap();
        assert_eq!(run.download_lower().unwrap(), clean, "{blocking} m={m}");
        // The blocks above the diagonal were never drawn.
        assert_upper_blocks_untouched(&run, layout);
    }
}

#[test]
fn not_positive_definite_names_the_failing_column_as_lapack() {
    // Columns at the start, inside, at the edges of block columns and at the end.
    check_failing_columns(&gpu(), blocked, 40, &[0, 1, 5, 15, 16, 17, 31, 39], 50.0);
}

#[test]
fn method_selection_and_refusals() {
    let gpu = gpu();
    // Auto picks the fastest method the device runs in each format: tiled where there are
    // compute shaders (llvmpipe included), else blocked (full and packed), else faithful.
    let expected = |_format| {
        if gpu.info().has_compute() {
            Method::Tiled
        } else {
            Method::Blocked
        }
    };
    for format in [Format::Full, Format::Packed] {
        assert_eq!(
            gpu.resolve_for(Options::new(format)).unwrap(),
            expected(format)
        );
    }
    let c = problems::well_conditioned_spd(&mut problems::rng(1), 5);
    // The packed format is the blocked method's too (tests/blocked_packed.rs).
    assert!(
        gpu.cholesky(&c, Options::new(Format::Packed).method(Method::Blocked))
            .is_ok()
    );
    // Stepping over R32F textures is the faithful method's; blocked runs step as blocks.
    let e = gpu
        .start_cholesky(&c, blocked(BLOCKINGS[0]))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("start_blocked_cholesky"), "{e}");
}

/// Assembly with NaN in the strict upper triangle of both textures to start with: the lower
/// triangle comes out as the clean run's, and no upper block is ever drawn.
#[test]
fn assembly_never_reads_the_upper_triangle() {
    let gpu = gpu();
    for (m, blocking) in [3, 18].into_iter().flat_map(|m| BLOCKINGS.map(|b| (m, b))) {
        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 40);
        let d = problems::uniform_vector(&mut rng, 40);
        let clean = gpu.assemble(&a, &d, blocked(blocking)).unwrap();
        let layout = blocking.layout(m, Format::Full);
        let mut run = gpu.start_blocked_assembly_as(&a, &d, layout).unwrap();
        upload_to_pair(&run, &layout.pack_layers(&Matrix::zeros(m, m), f32::NAN));
        run.finish().unwrap();
        assert_eq!(run.download_lower().unwrap(), clean, "{blocking} m={m}");
        assert_upper_blocks_untouched(&run, layout);
    }
}
