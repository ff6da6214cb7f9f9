//! The blocked method in the rectangular packed format (the lower triangle of 2 x 2 or 4 x 4
//! blocks folded into W x (T+4) texels, Fig 3 with texel = block): geometry checked in
//! software, every pass's writes checked on the GPU, results against the f64 reference and
//! the full format's, in both blockings.

use crate::common::blocked::{
    BLOCKINGS, Blocks, Role, check_failing_columns, check_poisoned_runs, pair_layers, role,
    upload_to_pair,
};
use crate::common::soft_raster::{rasterize, texel};
use crate::common::{U32, gpu, widen};
use std::collections::BTreeSet;
use symraster::blocked::geometry::{assembly_plan, cholesky_plan};
use symraster::draw::Pass;
use symraster::draw::execution::Execution;
use symraster::gl::Rgba32F;
use symraster::internal::GpuInternals;
use symraster::layout::blocked::{BlockLayout, Blocking, PACKED_ROW_OFFSET};
use symraster::{Format, Gpu, Matrix, Options, problems, reference, relative_error};

fn packed(blocks: Blocks) -> Options {
    blocks.options(Format::Packed)
}

fn full(blocks: Blocks) -> Options {
    blocks.options(Format::Full)
}

/// Every size with both blockings.
fn with_blockings(sizes: &[usize]) -> Vec<(usize, Blocks)> {
    sizes
        .iter()
        .flat_map(|&m| BLOCKINGS.map(|b| (m, b)))
        .collect()
}

/// The texel column of the pass's step: of A and B for the addition, of C otherwise.
fn texel_step(layout: BlockLayout, pass: &Pass) -> usize {
    match role(pass.kernel) {
        Role::Addition => pass.step / layout.blocking().a_columns_per_texel(),
        _ => pass.step / layout.blocking().side(),
    }
}

/// Sizes with the fold at T/2 (T = 16, 32: m = 17, 64), past it (T = 24: m = 33, 35, 40),
/// and with an empty corner (T = 8: m ≤ 16).
const SIZES: [usize; 11] = [1, 2, 3, 4, 7, 16, 17, 33, 40, 64, 100];

// ---- geometry, no GPU ----

/// The lower blocks (I, J), from ≤ J ≤ I < to.
fn lower_blocks(from: usize, to: usize) -> Vec<(usize, usize)> {
    (from..to)
        .flat_map(|i| (from..=i).map(move |j| (i, j)))
        .collect()
}

/// The blocks (I, J) a blocked Cholesky or assembly pass must write.
fn intended_blocks(layout: BlockLayout, pass: &Pass) -> Vec<(usize, usize)> {
    let (t, k, kb) = (
        layout.texels(),
        texel_step(layout, pass),
        layout.block_column_texels(),
    );
    match role(pass.kernel) {
        Role::Addition => lower_blocks(0, t),
        Role::Factor | Role::Inverse => lower_blocks(k, k + kb),
        Role::Panel => (k + kb..t)
            .flat_map(|i| (k..k + kb).map(move |j| (i, j)))
            .collect(),
        Role::Subtraction => lower_blocks(k + kb, t),
        Role::Scaling => panic!("the scaling pass draws B"),
    }
}

/// The texels those blocks lie at (B's texels for the scaling pass).
fn intended(layout: BlockLayout, pass: &Pass, b_height: usize) -> BTreeSet<(usize, usize)> {
    if role(pass.kernel) == Role::Scaling {
        let t = layout.texels();
        return (0..b_height)
            .flat_map(|y| (0..t).map(move |x| (x, y)))
            .collect();
    }
    intended_blocks(layout, pass)
        .into_iter()
        .map(|(i, j)| layout.texel_of_block(i, j))
        .collect()
}

fn at(layout: BlockLayout, i: usize, j: usize) -> (i64, i64) {
    let (x, y) = layout.texel_of_block(i, j);
    (x as i64, y as i64)
}

/// Every pass of the packed plans draws exactly its blocks' texels, once each, and every
/// fragment's interpolated coordinates name the blocks the kernel must read: for the
/// addition A's rows I and J; for the subtraction the texels of blocks (I, k) and (J, k)
/// and the direction to (I, k+1); for the factor, inverse and panel the texel of block (k, k) and
/// the direction to (k, k+1).
#[test]
fn packed_passes_cover_their_blocks_once_and_name_what_they_read() {
    for (m, blocking) in with_blockings(&[1, 16, 17, 33, 40, 64, 100]) {
        let layout = blocking.layout(m, Format::Packed);
        let (w, h) = layout.texture_size();
        let mut plans = vec![cholesky_plan(layout), assembly_plan(layout, 70)];
        let b_height = layout.a_height(70);
        for plan in plans.drain(..) {
            for pass in plan.passes.iter().filter(|p| !p.kernel.is_copy()) {
                let (vw, vh) = pass.viewport;
                let frags = rasterize(plan.vertices_of(pass), vw, vh);
                let got: BTreeSet<_> = frags.iter().map(|f| (f.x, f.y)).collect();
                assert_eq!(got.len(), frags.len(), "m={m}: a texel drawn twice");
                assert_eq!(got, intended(layout, pass, b_height), "m={m} {pass:?}");
                if role(pass.kernel) == Role::Scaling {
                    continue;
                }
                assert_eq!((vw, vh), (w, h));
                let k = texel_step(layout, pass);
                let dir = |i: usize| {
                    let (a, b) = (at(layout, i, k), at(layout, i, k + 1));
                    (b.0 - a.0) as f64
                };
                for f in frags {
                    let (i, j) = layout.block_of_texel(f.x, f.y).expect("a block");
                    let t0 = (texel(f.t0[0]), texel(f.t0[1]));
                    let t1yx = (texel(f.t1[1]), texel(f.t1[0]));
                    match role(pass.kernel) {
                        Role::Addition => {
                            assert_eq!(
                                (t0.0, texel(f.t0[1]), texel(f.t1[0])),
                                (k as i64, i as i64, j as i64)
                            );
                        }
                        Role::Subtraction => {
                            assert_eq!(t0, at(layout, i, k), "m={m} ({i}, {j}) k={k}");
                            assert_eq!(t1yx, at(layout, j, k), "m={m} ({i}, {j}) k={k}");
                            assert_eq!(f.t0[2].signum(), dir(i));
                        }
                        _ => {
                            assert_eq!(t0, at(layout, k, k), "m={m} ({i}, {j}) k={k}");
                            assert_eq!(f.t0[2].signum(), dir(k + 1));
                            // The row's panel blocks share the fragment's texel row.
                            assert_eq!(at(layout, i, k).1, f.y as i64);
                        }
                    }
                }
            }
        }
    }
}

/// Each lower block is finished (factor or panel) exactly once and never updated after.
#[test]
fn packed_cholesky_plan_finishes_every_block_once() {
    for (m, blocking) in with_blockings(&[1, 17, 40, 64]) {
        let layout = blocking.layout(m, Format::Packed);
        let plan = cholesky_plan(layout);
        let mut finished = BTreeSet::new();
        for pass in plan.passes.iter().filter(|p| !p.kernel.is_copy()) {
            let blocks: BTreeSet<_> = intended_blocks(layout, pass).into_iter().collect();
            match role(pass.kernel) {
                Role::Subtraction => assert!(blocks.is_disjoint(&finished), "m={m}"),
                Role::Inverse => assert!(blocks.is_subset(&finished), "m={m}"),
                _ => {
                    for b in blocks {
                        assert!(finished.insert(b), "m={m}: {b:?} finished twice");
                    }
                }
            }
        }
        let all: BTreeSet<_> = lower_blocks(0, layout.texels()).into_iter().collect();
        assert_eq!(finished, all, "m={m}");
    }
}

// ---- on the GPU ----

#[test]
fn packed_assembly_matches_reference_and_the_full_format() {
    let gpu = gpu();
    let mut cases: Vec<(usize, usize)> = SIZES.iter().map(|&m| (m, 2 * m)).collect();
    cases.extend([(3, 1), (33, 5), (20, 33), (64, 65), (5, 100)]);
    for ((m, n), blocking) in cases.into_iter().flat_map(|c| BLOCKINGS.map(|b| (c, b))) {
        let mut rng = problems::rng(10 + m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        let c = gpu.assemble(&a, &d, packed(blocking)).unwrap();
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        let err = relative_error(&c, &c_ref);
        let tol = 2.0 * (n as f64 + 2.0) * U32;
        assert!(err <= tol, "{blocking} m={m} n={n}: {err:.3e} > {tol:.3e}");
        assert_eq!(c, c.lower_triangle(), "m={m}: upper triangle not zero");
        // The same arithmetic on the same blocks, only stored elsewhere.
        assert_eq!(
            c,
            gpu.assemble(&a, &d, full(blocking)).unwrap(),
            "{blocking} m={m} n={n}"
        );
    }
}

#[test]
fn packed_cholesky_matches_reference_and_the_full_format() {
    let gpu = gpu();
    for (m, blocking) in with_blockings(&SIZES) {
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let l = gpu
            .cholesky(&c, packed(blocking))
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
        assert!(backward <= tol, "m={m}: backward {backward:.3e}");
        assert!(forward <= tol, "m={m}: forward {forward:.3e}");
        assert_eq!(l, l.lower_triangle(), "m={m}");
        assert_eq!(
            l,
            gpu.cholesky(&c, full(blocking)).unwrap().into_l().unwrap(),
            "{blocking} m={m}"
        );
    }
}

#[test]
fn packed_factor_product_matches() {
    let gpu = gpu();
    for (m, blocking) in with_blockings(&[1, 5, 32, 47, 64]) {
        let mut rng = problems::rng(7 * m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 2 * m);
        let d = problems::uniform_vector(&mut rng, 2 * m);
        let l = gpu
            .factor_product(&a, &d, packed(blocking))
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
            "m={m}: {backward:.3e}"
        );
        assert_eq!(
            l,
            gpu.factor_product(&a, &d, full(blocking))
                .unwrap()
                .into_l()
                .unwrap()
        );
    }
}

/// Every pass with its target poisoned with NaN writes exactly its blocks.
#[test]
fn every_packed_pass_writes_exactly_its_blocks() {
    check_poisoned_runs(&gpu(), Format::Packed, &[1, 2, 3, 16, 17, 35, 64], intended);
}

/// NaN in every entry that holds no lower entry (the upper entry of each diagonal block and
/// the unused texels: the rows between the two diagonals, and the corner's rest when the fold
/// is past T/2): assembly and Cholesky come out bit for bit as the clean runs, and the unused
/// texels are never drawn.
#[test]
fn packed_runs_never_read_the_upper_triangle() {
    let gpu = gpu();
    for (m, blocking) in with_blockings(&[2, 7, 33, 40, 64]) {
        let layout = blocking.layout(m, Format::Packed);
        let (w, h) = layout.texture_size();
        let unused: Vec<usize> = (0..w * h)
            .filter(|&p| layout.block_of_texel(p % w, p / w).is_none())
            .collect();
        // The rows between the corner's diagonal and the trapezoid's (PACKED_ROW_OFFSET - 1
        // per texel column), and the corner's unused part when the fold is past T/2.
        let t = layout.texels();
        assert_eq!(unused.len(), w * h - t * (t + 1) / 2, "m={m}");
        assert!(unused.len() >= (PACKED_ROW_OFFSET - 1) * w, "m={m}");
        let check_unused = |run: &Execution<'_, Rgba32F>| {
            for data in pair_layers(run) {
                for &p in &unused {
                    assert!(data[p].iter().all(|v| v.is_nan()), "m={m} texel {p}");
                }
            }
        };

        let c = problems::well_conditioned_spd(&mut problems::rng(3), m);
        let clean = gpu
            .cholesky(&c, packed(blocking))
            .unwrap()
            .into_l()
            .unwrap();
        let mut run = gpu.start_blocked_cholesky_as(&c, layout).unwrap();
        upload_to_pair(&run, &layout.pack_layers(&c, f32::NAN));
        run.finish().unwrap();
        assert_eq!(run.download_lower().unwrap(), clean, "m={m}");
        check_unused(&run);

        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, 40);
        let d = problems::uniform_vector(&mut rng, 40);
        let clean = gpu.assemble(&a, &d, packed(blocking)).unwrap();
        let mut run = gpu.start_blocked_assembly_as(&a, &d, layout).unwrap();
        upload_to_pair(&run, &layout.pack_layers(&Matrix::zeros(m, m), f32::NAN));
        run.finish().unwrap();
        assert_eq!(run.download_lower().unwrap(), clean, "m={m}");
        check_unused(&run);
    }
}

#[test]
fn packed_not_positive_definite_names_the_failing_column_as_lapack() {
    // m = 64: block columns 0, 1 in the trapezoid, 2, 3 in the rotated corner.
    let columns = [0, 1, 15, 16, 31, 32, 33, 47, 48, 63];
    check_failing_columns(&gpu(), packed, 64, &columns, 80.0);
}

/// The packed textures hold about half the texels of the full ones.
#[test]
fn packed_textures_are_about_half() {
    let gpu: Gpu = gpu();
    let c = problems::well_conditioned_spd(&mut problems::rng(9), 64);
    for (blocking, packed, full) in [
        (Blocking::Two, (16, 36), (32, 32)),
        (Blocking::Four, (8, 20), (16, 16)),
    ] {
        let run = gpu
            .step(
                symraster::Operation::Cholesky(&c),
                symraster::Options::new(Format::Packed)
                    .blocking(blocking)
                    .method(symraster::Method::Blocked),
            )
            .and_then(symraster::Run::into_blocks)
            .unwrap();
        for tex in run.pair().source().layers() {
            assert_eq!((tex.width(), tex.height()), packed);
        }
        let run = gpu
            .step(
                symraster::Operation::Cholesky(&c),
                symraster::Options::new(Format::Full)
                    .blocking(blocking)
                    .method(symraster::Method::Blocked),
            )
            .and_then(symraster::Run::into_blocks)
            .unwrap();
        for tex in run.pair().source().layers() {
            assert_eq!((tex.width(), tex.height()), full);
        }
    }
}
