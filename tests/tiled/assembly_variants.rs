//! The packed-panel product's variants (`PanelVariant`: k-slice depth, tile order in bands,
//! padded panel blocks, register double buffering, the unroll pragma) and register tiles of
//! 8 x 16, on the assembly C = A·diag(d)·Aᵀ against the f64 reference: full and RFP storage,
//! C poisoned with NaN first (the full format's upper triangle must stay NaN: never written),
//! orders and depths around every tile width and slice depth, A in one buffer and cut into
//! column blocks. A variant changes only the order of loads and launches, so it must give the
//! default variant's bits; those that pack A·√d once (`root_d`) round differently, so they must
//! give each other's, one packing launch fewer, and the default's where some d < 0. Cutting C
//! into launches of blocks (`cut`) leaves every entry's sums as they were.

use crate::common;

use crate::common::{U32, widen};
use symraster::internal::GpuInternals;
use symraster::tiled::{
    CholeskySchedule, DeviceProduct, KernelConfig, PanelVariant, Storage, TiledKernels,
    TiledMatrix, assembly,
};
use symraster::{Matrix, Tuning, problems, reference, relative_error};

const ONE: u64 = i32::MAX as u64;

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

/// The variants tried: the default and each change alone and together.
fn variants() -> Vec<PanelVariant> {
    [
        "4,1,0,0",
        "8,3,1,1",
        "16,2,0,1",
        "4,8,1,0",
        "8,1,0,1,1",
        "4,1,0,0,0,1",
        "8,8,1,1,1,1",
        "8,1,0,0,1,1,0,1",
        "4,3,1,0,0,0,0,1",
        "8,2,0,1,1,1,0,1",
    ]
    .iter()
    .map(|t| PanelVariant::parse(t).unwrap())
    .collect()
}

/// The assembly with `k`, A cut into blocks of `max` bytes, C poisoned first: C's raw storage,
/// its lower triangle, and how many packing launches ran (the panels were used).
fn assemble(
    k: &TiledKernels,
    a: &Matrix<f32>,
    d: &[f32],
    s: Storage,
    max: u64,
) -> (Vec<f32>, Matrix<f32>, u64) {
    let p = DeviceProduct::upload(k, a, d, max).unwrap();
    let mut c = TiledMatrix::uninitialized(k.context(), a.rows(), s, ONE).unwrap();
    c.fill(f32::NAN).unwrap();
    let packs = k.packs();
    assembly::assemble(k, &p, &mut c).unwrap();
    let raw = c.download_raw().unwrap();
    (raw, c.download_lower().unwrap(), k.packs() - packs)
}

/// NaN-equal bit patterns.
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Every variant with `config` at orders `orders` and depths `depths` (each at least the
/// panels' least depth): the f64 reference's lower triangle within n·u, the full format's upper
/// triangle still NaN, the default variant's bits, and the panels used wherever every block
/// of C (RFP: halves) is wider than `tile` (the side of the tiles these products run with),
/// in both formats at least once.
fn check(config: KernelConfig, tile: usize, orders: &[usize], depths: &[usize]) {
    check_variants(config, tile, orders, depths, variants());
}

/// [`check`] over the variants given.
fn check_variants(
    config: KernelConfig,
    tile: usize,
    orders: &[usize],
    depths: &[usize],
    variants: Vec<PanelVariant>,
) {
    let gpu = common::gpu();
    let kernels: Vec<(PanelVariant, TiledKernels)> = variants
        .into_iter()
        .map(|v| {
            let t = Tuning {
                panel: Some(v),
                ..Tuning::default()
            };
            (v, TiledKernels::tuned(gpu.context(), config, &t).unwrap())
        })
        .collect();
    let mut panels_in = std::collections::HashSet::new();
    for &m in orders {
        for &n in depths {
            let (a, d) = product(m, n, 11 + (m * n) as u64);
            let c_ref = reference::assemble(&a.to_f64(), &widen(&d)).lower_triangle();
            // A in one buffer, and in column blocks of about half its columns (those of
            // less than the panels' depth run on the general kernel, onto the same C).
            let half = (m * n.div_ceil(2).next_multiple_of(4) * 4) as u64;
            for s in [Storage::Full, Storage::Rfp] {
                for max in [ONE, half] {
                    // The first result of each rounding: A·(D·Aᵀ), then (A√D)(A√D)ᵀ.
                    let mut first: [Option<Vec<f32>>; 2] = [None, None];
                    for (v, k) in &kernels {
                        let what = format!("{config:?} {v:?} {s:?} m {m} n {n} blocks of {max}");
                        let (raw, c, packs) = assemble(k, &a, &d, s, max);
                        let block = if s == Storage::Full { m } else { m / 2 };
                        if max == ONE && block > tile {
                            assert!(packs > 0, "{what}: the panels were not used");
                            panels_in.insert(s.name());
                            if s == Storage::Full {
                                let want = if v.root_d { 1 } else { 2 };
                                assert_eq!(packs, want, "{what}: packing launches");
                            }
                        }
                        let e = relative_error(&c.lower_triangle().to_f64(), &c_ref);
                        assert!(e <= n as f64 * U32, "{what}: relative error {e:.2e}");
                        if s == Storage::Full {
                            let upper_written = (0..m)
                                .flat_map(|i| (i + 1..m).map(move |j| (i, j)))
                                .any(|(i, j)| !raw[i * m + j].is_nan());
                            assert!(!upper_written, "{what}: the upper triangle was written");
                        }
                        match &first[usize::from(v.root_d)] {
                            None => first[usize::from(v.root_d)] = Some(raw),
                            Some(f) => assert!(same_bits(f, &raw), "{what}: bits differ"),
                        }
                    }
                }
            }
        }
    }
    assert_eq!(
        panels_in.len(),
        2,
        "{config:?}: panels used only in {panels_in:?}"
    );
}

#[test]
fn small_panel_tiles_of_32_match_f64_in_every_variant() {
    // 8 x 8 invocations of 4 x 4: 32 x 32 tiles with no smaller kernel, so every product
    // with more than one tile each way runs on the panels.
    let config = KernelConfig::parse("8,8,4,4,16,1,32").unwrap();
    check(config, 32, &[33, 63, 64, 65, 97], &[64, 67, 130]);
}

#[test]
fn register_tiles_of_8_by_16_match_f64_in_every_variant() {
    // 64 x 128 tiles (8 x 16 outputs per invocation); products this small run their quarter
    // tiles, 32 x 64 (4 x 8 per invocation).
    let config = KernelConfig::parse("8,8,8,16,16,1,32").unwrap();
    check(config, 64, &[65, 129, 130], &[65, 132]);
}

#[test]
fn gpu_tiles_match_f64_in_every_variant() {
    // The GPUs' default tiles (their quarter-size 64 x 64 panels at these orders), the
    // Cholesky's diagonal blocks of 64 so a depth past 64; depths of an odd and an even
    // count of k-slices (slices in pairs end on either buffer).
    check(KernelConfig::GPU, 64, &[129, 192, 257], &[65, 80, 131]);
}

/// The variants also run the blocked Cholesky's trailing updates (rank 128 here, past the
/// panels' least depth of 65): its factor must not change, full and RFP. The schedule is
/// pinned to the blocked one, which runs those updates (GPUs chain full storage by default:
/// one launch, no product on the panels).
#[test]
fn the_cholesky_on_every_variant_gives_the_default_bits() {
    let gpu = common::gpu();
    let kernels: Vec<(PanelVariant, TiledKernels)> = variants()
        .into_iter()
        .map(|v| {
            let t = Tuning {
                panel: Some(v),
                outer_block: Some(128),
                cholesky_schedule: Some(CholeskySchedule::Blocked),
                ..Tuning::default()
            };
            let k = TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &t).unwrap();
            (v, k)
        })
        .collect();
    let m = 300;
    let (a, d) = product(m, m + 7, 5);
    for s in [Storage::Full, Storage::Rfp] {
        let k0 = &kernels[0].1;
        let p = DeviceProduct::upload(k0, &a, &d, ONE).unwrap();
        let mut c = TiledMatrix::uninitialized(k0.context(), m, s, ONE).unwrap();
        c.fill(f32::NAN).unwrap();
        assembly::assemble(k0, &p, &mut c).unwrap();
        let mut first: Option<Vec<f32>> = None;
        for (v, k) in &kernels {
            let mut l = TiledMatrix::uninitialized(k.context(), m, s, ONE).unwrap();
            l.copy_from(&c).unwrap();
            let packs = k.packs();
            symraster::tiled::cholesky::factor(k, &mut l).unwrap();
            assert!(
                k.packs() > packs,
                "{v:?} {s:?}: no update ran on the panels"
            );
            assert_eq!(
                k.chained_factors(),
                0,
                "{v:?} {s:?}: the factor was chained"
            );
            let raw = l.download_raw().unwrap();
            match &first {
                None => first = Some(raw),
                Some(f) => assert!(same_bits(f, &raw), "{v:?} {s:?}: the factor differs"),
            }
        }
    }
}

#[test]
fn a_negative_weight_packs_a_and_a_d_apart_as_the_default_does() {
    // √d exists only for d ≥ 0: with one weight below zero the root_d variant must run the
    // default's two panels and give its bits.
    let gpu = common::gpu();
    let config = KernelConfig::parse("8,8,4,4,16,1,32").unwrap();
    let kernels = |v: &str| {
        let t = Tuning {
            panel: PanelVariant::parse(v),
            ..Tuning::default()
        };
        TiledKernels::tuned(gpu.context(), config, &t).unwrap()
    };
    let (default, root) = (kernels("4,1,0,0"), kernels("4,1,0,0,0,1"));
    let (m, n) = (97, 130);
    let (a, mut d) = product(m, n, 3);
    d[77] = -0.25;
    for s in [Storage::Full, Storage::Rfp] {
        let (want, _, _) = assemble(&default, &a, &d, s, ONE);
        let (got, _, packs) = assemble(&root, &a, &d, s, ONE);
        assert!(
            same_bits(&want, &got),
            "{s:?}: bits differ from the default"
        );
        if s == Storage::Full {
            assert_eq!(packs, 2, "A and A·d packed apart");
        }
    }
}

#[test]
fn a_product_cut_into_blocks_gives_the_uncut_bits() {
    // C cut into launches of 256 x 256 (the last block of a row or column up to twice that),
    // each packing its own panels with A·√d, the off-diagonal blocks' two operands apart:
    // the bits of one launch, full and RFP (halves of 550: blocks 256 and 294), with A in one
    // buffer (cut) and in two column blocks (depths below 256: whole).
    let gpu = common::gpu();
    let kernels = |v: &str| {
        let t = Tuning {
            panel: PanelVariant::parse(v),
            ..Tuning::default()
        };
        TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &t).unwrap()
    };
    let (whole, cut) = (kernels("4,1,0,0,1,1"), kernels("4,1,0,0,1,1,256"));
    // Cut only where the depth is at least a block's side: 256.
    for (m, n) in [(600, 260), (1100, 301)] {
        let (a, d) = product(m, n, 17);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d)).lower_triangle();
        let half = (m * n.div_ceil(2).next_multiple_of(4) * 4) as u64;
        for s in [Storage::Full, Storage::Rfp] {
            for max in [ONE, half] {
                let what = format!("{s:?} m {m} n {n} blocks of {max}");
                let (want, _, packs_whole) = assemble(&whole, &a, &d, s, max);
                let (got, c, packs_cut) = assemble(&cut, &a, &d, s, max);
                assert!(
                    same_bits(&want, &got),
                    "{what}: bits differ from one launch"
                );
                let e = relative_error(&c.lower_triangle().to_f64(), &c_ref);
                assert!(e <= n as f64 * U32, "{what}: relative error {e:.2e}");
                if s == Storage::Rfp && max == ONE && m == 1100 {
                    assert!(packs_cut > packs_whole, "{what}: the halves were not cut");
                }
                if max != ONE {
                    assert_eq!(packs_cut, packs_whole, "{what}: a shallow product was cut");
                }
                if s == Storage::Full && max == ONE {
                    // nb blocks each way: the nb diagonal blocks pack once, the nb(nb-1)/2
                    // below them twice: nb² launches against 1.
                    let nb = (m / 256) as u64;
                    assert_eq!(
                        (packs_whole, packs_cut),
                        (1, nb * nb),
                        "{what}: packing launches"
                    );
                }
            }
        }
    }
}

#[test]
fn work_groups_of_512_match_f64_in_every_variant() {
    // 32 x 16 invocations of 8 x 8 (256 x 128 tiles) and 16 x 32 (128 x 256): half the
    // invocations load a vec4 of the narrower operand per k-slice. Slices of 16 need 48 KiB
    // of shared memory for these tiles, more than software renderers give: those of 4 and 8.
    let fitting: Vec<PanelVariant> = variants().into_iter().filter(|v| v.slice <= 8).collect();
    for text in ["32,16,8,8,16,1,32", "16,32,8,8,16,1,32"] {
        let config = KernelConfig::parse(text).unwrap();
        check_variants(config, 256, &[257, 520], &[65, 131], fitting.clone());
    }
}
