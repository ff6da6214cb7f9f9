//! Products of operands with a declared support (`Support`: rows nonzero only from, or up to,
//! a shifted diagonal along the depth) on the packed panels, which skip the depth slices
//! outside it: the f64 reference, the bits of the same product declared without a support,
//! and NaN in the slices the panels must skip (whatever their tile and slice sizes) never
//! read. Tiles of 32 and the GPUs' tiles, one launch and C cut into blocks of 128 (supports
//! shifted to each block), masked and full, upper, lower and shifted supports.

use crate::common;

use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::internal::GpuInternals;
use symraster::tiled::{
    KernelConfig, Operand, PanelVariant, Product, Support, TiledKernels, Update, View,
};
use symraster::{Tuning, problems};

/// Tiles and slices of every kernel here divide these, so slices wholly before (after) the
/// support of a row's largest possible tile are skipped by every one.
const TILE_MAX: usize = 128;
const SLICE_MAX: usize = 16;

/// Whether entry (i, k) is inside `s`.
fn inside(s: Support, i: usize, k: usize) -> bool {
    let (i, k) = (i as isize, k as isize);
    match s {
        Support::All => true,
        Support::From { shift } => k >= i + shift,
        Support::UpTo { shift } => k <= i + shift,
    }
}

/// Whether every kernel's panels skip entry (i, k) of an operand with support `s`.
fn skipped(s: Support, i: usize, k: usize) -> bool {
    let row0 = (i / TILE_MAX * TILE_MAX) as isize;
    let k = k as isize;
    let slice = SLICE_MAX as isize;
    match s {
        Support::All => false,
        Support::From { shift } => k < (row0 + shift).max(0) / slice * slice,
        Support::UpTo { shift } => {
            let end = row0 + TILE_MAX as isize + shift;
            end >= 0 && k >= (end + slice - 1) / slice * slice
        }
    }
}

/// A rows x depth operand, random inside `s`, zero outside, NaN where every kernel skips
/// (where `poison`), row-major.
fn operand(rows: usize, depth: usize, s: Support, poison: bool, seed: u64) -> Vec<f32> {
    let mut rng = problems::rng(seed);
    let m = problems::uniform_matrix(&mut rng, rows, depth);
    let mut out = vec![0.0f32; rows * depth];
    for i in 0..rows {
        for k in 0..depth {
            out[i * depth + k] = if inside(s, i, k) {
                m[(i, k)] - 0.5
            } else if poison && skipped(s, i, k) {
                f32::NAN
            } else {
                0.0
            };
        }
    }
    out
}

/// C = A·Bᵀ in f64 from the zero-filled operands (lower triangle only where `lower`).
fn reference(a: &[f32], b: &[f32], (m, n, p): (usize, usize, usize), lower: bool) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            if lower && j > i {
                continue;
            }
            c[i * n + j] = (0..p)
                .map(|k| f64::from(a[i * p + k]) * f64::from(b[j * p + k]))
                .sum();
        }
    }
    c
}

fn kernels(gpu: &symraster::Gpu, config: KernelConfig, cut: usize) -> TiledKernels {
    let tuning = Tuning {
        panel: Some(PanelVariant {
            cut,
            ..PanelVariant::DEFAULT
        }),
        ..Tuning::default()
    };
    TiledKernels::tuned(gpu.context(), config, &tuning).unwrap()
}

/// C (poisoned) ← A·Bᵀ with the supports declared or not; C's entries and the packing
/// launches it took.
fn run(
    k: &TiledKernels,
    (a, b): (&[f32], &[f32]),
    (m, n, p): (usize, usize, usize),
    support: Option<[Support; 2]>,
    lower: bool,
) -> (Vec<f32>, u64) {
    let ctx = k.context();
    let buf = |d: &[f32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, d).unwrap();
    let (ab, bb, cb) = (buf(a), buf(b), buf(&vec![f32::NAN; m * n]));
    let mut product = Product::new(
        Operand::new(&cb, View::row_major(m, n)),
        Operand::new(&ab, View::row_major(m, p)),
        Operand::new(&bb, View::row_major(n, p)),
    )
    .update(Update::Replace);
    if lower {
        product = product.lower();
    }
    if let Some([sa, sb]) = support {
        product = product.support(sa, sb);
    }
    let packs = k.packs();
    k.gemm(product).unwrap();
    (cb.download().unwrap(), k.packs() - packs)
}

fn same_bits(x: &[f32], y: &[f32]) -> bool {
    x.iter()
        .zip(y)
        .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
}

fn check(
    k: &TiledKernels,
    what: &str,
    (m, n, p): (usize, usize, usize),
    sa: Support,
    sb: Support,
    lower: bool,
) {
    let what = format!("{what} {m}x{n} depth {p} {sa:?} {sb:?} lower {lower}");
    let seed = (m * 31 + n * 7 + p) as u64;
    let (a, b) = (
        operand(m, p, sa, false, seed),
        operand(n, p, sb, false, seed + 1),
    );
    let (pa, pb) = (
        operand(m, p, sa, true, seed),
        operand(n, p, sb, true, seed + 1),
    );
    let shape = (m, n, p);
    let (plain, _) = run(k, (&a, &b), shape, None, lower);
    let (declared, packs) = run(k, (&a, &b), shape, Some([sa, sb]), lower);
    let (poisoned, _) = run(k, (&pa, &pb), shape, Some([sa, sb]), lower);
    assert!(packs > 0, "{what}: the panels were not used");
    assert!(
        same_bits(&plain, &declared),
        "{what}: the support changed the bits"
    );
    assert!(
        same_bits(&declared, &poisoned),
        "{what}: a skipped slice was read"
    );
    let c = reference(&a, &b, shape, lower);
    let (mut err, mut norm) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let x = declared[i * n + j];
            if lower && j > i {
                assert!(x.is_nan(), "{what}: ({i}, {j}) above the mask was written");
                continue;
            }
            err += (f64::from(x) - c[i * n + j]).powi(2);
            norm += c[i * n + j].powi(2);
        }
    }
    let e = (err / norm.max(f64::MIN_POSITIVE)).sqrt();
    assert!(
        e <= p as f64 * common::U32,
        "{what}: relative error {e:.2e}"
    );
}

#[test]
fn products_on_supports_skip_what_they_may_and_keep_the_bits() {
    let gpu = common::gpu();
    let upper = Support::From { shift: 0 };
    let lower = Support::UpTo { shift: 0 };
    for (config, cut, what) in [
        (
            KernelConfig::parse("8,8,4,4,16,1,32").unwrap(),
            0,
            "tiles of 32",
        ),
        (
            KernelConfig::parse("8,8,4,4,16,1,32").unwrap(),
            128,
            "tiles of 32 cut",
        ),
        (KernelConfig::GPU, 0, "GPU tiles"),
    ] {
        let k = kernels(&gpu, config, cut);
        for n in [97, 300] {
            // slauum's YᵀY: both operands Yᵀ (rows zero before the diagonal), lower mask.
            check(&k, what, (n, n, n), upper, upper, true);
            // U⁻¹·L⁻¹ of the LU inverse: both from the diagonal, every entry.
            check(&k, what, (n, n, n), upper, upper, false);
            // The triangular inverse's joins: a full A by an upper B; a lower A by a full B.
            check(&k, what, (n + 5, n, n), Support::All, upper, false);
            check(&k, what, (n, n + 5, n), lower, Support::All, false);
            // Shifted supports, past the depth at either end.
            let shifted = [Support::From { shift: 40 }, Support::UpTo { shift: -37 }];
            check(&k, what, (n, n - 3, n + 9), shifted[0], shifted[1], false);
            check(
                &k,
                what,
                (n, n, n + 9),
                shifted[1],
                Support::From { shift: -70 },
                true,
            );
        }
    }
}

#[test]
fn a_support_moves_with_the_sub_view() {
    let s = Support::From { shift: 3 };
    // Row 10 of the view from row 4 and depth 6 is row 14 of the whole: from depth 17, i.e.
    // depth 11 of the view.
    assert_eq!(s.sub(4, 6), Support::From { shift: 1 });
    assert!(inside(s.sub(4, 6), 10, 11) && !inside(s.sub(4, 6), 10, 10));
    assert_eq!(
        Support::UpTo { shift: 0 }.sub(0, 5),
        Support::UpTo { shift: -5 }
    );
    assert_eq!(Support::All.sub(7, 9), Support::All);
}
