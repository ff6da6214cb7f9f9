//! The general inverses' rank-b update kernel (src/inverse/rank.rs, issue 26): the kernel
//! alone against an f64 product (both tiles, each depth slice, C read first or last, slices
//! read ahead, aligned
//! and unaligned views, a split between two
//! right factors, C poisoned where it is replaced, every entry outside C left as it was), and
//! the Gauss-Jordan and LU inverses on it against f64 references at orders around the block
//! and tile widths, with the earlier product path still selectable and workspaces poisoned.

use crate::common;

use symraster::Matrix;
use symraster::internal::GpuInternals;
use symraster::inverse::kernels::panel::LowerInverse;
use symraster::inverse::kernels::panel::{PanelSettings, PivotWork};
use symraster::inverse::kernels::rank::{
    BlockUpdate, RankProduct, RankTile, RankVariant, rank_update,
};
use symraster::inverse::{self, DeviceSquare, InverseMethod as Method, Inverter, Kind, gje};
use symraster::tiled::{Operand, Update, View};

fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) as f32
        })
        .collect()
}

/// Random with a small diagonal and a shifted superdiagonal: every step pivots.
fn general(n: usize, seed: u64) -> Matrix<f64> {
    let v = values(n * n, seed);
    let mut a = Matrix::from_fn(n, n, |i, j| f64::from(v[i * n + j]));
    for i in 0..n {
        a[(i, i)] *= 1e-3;
        a[(i, (i + 1) % n)] += 2.0;
    }
    a
}

fn inverter(gpu: &symraster::Gpu, update: BlockUpdate) -> Inverter {
    Inverter::new(gpu).unwrap().with_panel(PanelSettings {
        update,
        ..PanelSettings::default()
    })
}

/// One rank update in a buffer larger than its views (C at `c_at` with row stride `ld`, X and
/// Y elsewhere in their own buffers, strides past their widths) against f64, the entries
/// outside C unchanged; C holds NaN where the update replaces it.
#[allow(clippy::too_many_arguments)]
fn check_update(
    inv: &Inverter,
    (rows, cols, depth): (usize, usize, usize),
    (c_at, ld): (usize, usize),
    split: Option<usize>,
    update: Update,
    tile: RankTile,
) {
    let what = format!(
        "{rows}x{cols} depth {depth} at {c_at} ld {ld} split {split:?} {update:?} {tile:?} {:?}",
        inv.rank_variant()
    );
    let c_len = c_at + rows * ld + 3;
    let mut c0 = values(c_len, 1 + rows as u64);
    let (_, beta) = update.alpha_beta();
    if beta == 0.0 {
        for i in 0..rows {
            c0[c_at + i * ld..c_at + i * ld + cols].fill(f32::NAN);
        }
    }
    // X and Y on 4-float boundaries with C (the vec4 variant where cols and depth allow).
    let aligned = c_at % 4 == 0 && ld % 4 == 0;
    let (x_at, x_ld) = if aligned {
        (8, depth + 4)
    } else {
        (5, depth + 3)
    };
    let x = values(x_at + rows * x_ld, 2 + depth as u64);
    // Y's two factors stacked: the second from row depth + 1.
    let (y_at, y_ld) = if aligned {
        (4, cols + 4)
    } else {
        (2, cols + 1)
    };
    let y = values(y_at + (2 * depth + 1) * y_ld, 3 + cols as u64);
    let buffer = |v: &[f32]| inv.buffer_with("test data", v).unwrap();
    let (cb, xb, yb) = (buffer(&c0), buffer(&x), buffer(&y));
    let yv = View {
        offset: y_at,
        ..View::row_major(depth, cols)
    };
    let yv = View { rs: y_ld, ..yv };
    let y2 = View {
        offset: y_at + (depth + 1) * y_ld,
        ..yv
    };
    let product = RankProduct {
        c: Operand::new(
            &cb,
            View {
                offset: c_at,
                rs: ld,
                ..View::row_major(rows, cols)
            },
        ),
        x: Operand::new(
            &xb,
            View {
                offset: x_at,
                rs: x_ld,
                ..View::row_major(rows, depth)
            },
        ),
        y: Operand::new(&yb, yv),
        below: split.map(|s| (s, y2)),
        update,
    };
    rank_update(inv, product, tile).unwrap();
    let got = cb.download_range(0, c_len).unwrap();
    let (alpha, beta) = update.alpha_beta();
    let mut scale = 0.0f64;
    let mut err = 0.0f64;
    let mut inside = vec![false; c_len];
    for i in 0..rows {
        let yo = if split.is_some_and(|s| i >= s) {
            y2.offset
        } else {
            yv.offset
        };
        for j in 0..cols {
            let mut s = 0.0f64;
            let mut mag = 0.0f64;
            for k in 0..depth {
                let p = f64::from(x[x_at + i * x_ld + k]) * f64::from(y[yo + k * y_ld + j]);
                s += p;
                mag += p.abs();
            }
            let at = c_at + i * ld + j;
            inside[at] = true;
            let old = if beta == 0.0 { 0.0 } else { f64::from(c0[at]) };
            let want = f64::from(alpha) * s + f64::from(beta) * old;
            err = err.max((f64::from(got[at]) - want).abs());
            scale = scale.max(mag + old.abs());
        }
    }
    let bound = 4.0 * (depth + 2) as f64 * common::U32 * scale.max(1e-30);
    assert!(err <= bound, "{what}: error {err}, bound {bound}");
    for (k, (&g, &o)) in got.iter().zip(&c0).enumerate() {
        if !inside[k] {
            assert!(
                g.to_bits() == o.to_bits(),
                "{what}: entry {k} outside C changed"
            );
        }
    }
}

#[test]
fn rank_updates_match_f64_products() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // Every depth slice, C read first or last, the next slice read ahead or not.
    for (variant, tile) in [
        "16:0", "8:0", "32:0", "64:0", "16:1", "16:0:1", "8:0:1", "32:1:1",
    ]
    .map(|v| RankVariant::parse(v).unwrap())
    .into_iter()
    .flat_map(|v| [(v, RankTile::Small), (v, RankTile::Large)])
    {
        inv.set_rank_variant(variant);
        // Aligned (the vec4 variant) and not, around the tile widths and the depth slice.
        for (rows, cols, depth) in [
            (1, 1, 1),
            (3, 2, 1),
            (64, 64, 64),
            (65, 63, 17),
            (128, 132, 16),
            (129, 127, 64),
            (200, 8, 8),
            (7, 300, 33),
            (70, 132, 100),
            (96, 132, 72),
        ] {
            for (c_at, ld) in [(0, cols), (4, cols + 4), (3, cols + 1)] {
                check_update(
                    &inv,
                    (rows, cols, depth),
                    (c_at, ld),
                    None,
                    Update::Subtract,
                    tile,
                );
            }
            check_update(
                &inv,
                (rows, cols, depth),
                (8, cols + 8),
                None,
                Update::Replace,
                tile,
            );
            for split in [0, rows / 2, rows.saturating_sub(1), rows] {
                check_update(
                    &inv,
                    (rows, cols, depth),
                    (0, cols),
                    Some(split),
                    Update::Subtract,
                    tile,
                );
            }
        }
    }
}

#[test]
fn inverses_on_each_block_update_match_f64() {
    let gpu = common::gpu();
    for update in BlockUpdate::ALL {
        let inv = inverter(&gpu, update);
        for n in [1, 2, 3, 63, 64, 65, 127, 129, 200] {
            let a = general(n, 40 + n as u64);
            for method in [Method::Gje, Method::Lu] {
                let what = format!("{update:?} n {n} {method:?}");
                let x = inverse::invert(&inv, &a.to_f32(), Kind::General, method).unwrap();
                common::check_inverse(&a, &x, &what);
            }
        }
    }
}

/// The LU inverse with L⁻¹ by the solve with the identity, by the triangular inverse, and with
/// U⁻¹ too and their product, on
/// this device's kernels and on the GPUs' (shared-memory tiles: the diagonal blocks inverted
/// in one launch and joined by products).
#[test]
fn lu_inverses_with_each_lower_inverse_match_f64() {
    let gpu = common::gpu();
    let gpu_tiles = symraster::tiled::KernelConfig::GPU;
    for lower in [
        LowerInverse::Solve,
        LowerInverse::Triangular,
        LowerInverse::Product,
    ] {
        let panel = PanelSettings {
            lower,
            ..PanelSettings::default()
        };
        let on_gpu_tiles = Inverter::with_config(gpu.context(), gpu_tiles).unwrap();
        assert!(on_gpu_tiles.tiled().solves_by_inverses());
        for inv in [
            Inverter::new(&gpu).unwrap().with_panel(panel),
            on_gpu_tiles.with_panel(panel),
        ] {
            for n in [1, 2, 3, 63, 64, 65, 127, 129, 200, 300] {
                let a = general(n, 90 + n as u64);
                let x = inverse::invert(&inv, &a.to_f32(), Kind::General, Method::Lu).unwrap();
                let what = format!(
                    "{lower:?} n {n} (blocks inverted: {})",
                    inv.tiled().solves_by_inverses()
                );
                common::check_inverse(&a, &x, &what);
            }
        }
    }
}

/// Blocks of 32 and 48 (the last block narrower), so block rows and the split fall off the
/// tile and vec4 boundaries, and of 96 and 128 (the panel transformed by solves, its two
/// products on the rank kernel).
#[test]
fn other_blocks_on_the_rank_kernel() {
    let gpu = common::gpu();
    for block in [32, 48, 96, 128] {
        let inv = Inverter::new(&gpu).unwrap().with_panel(PanelSettings {
            block: Some(block),
            update: BlockUpdate::Rank,
            ..PanelSettings::default()
        });
        for n in [65, 129, 150] {
            let a = general(n, 70 + n as u64);
            for method in [Method::Gje, Method::Lu] {
                let x = inverse::invert(&inv, &a.to_f32(), Kind::General, method).unwrap();
                let what = format!("block {block} n {n} {method:?}");
                common::check_inverse(&a, &x, &what);
            }
        }
    }
}

/// The LU inverse in wide blocks (the panel's leaves updated on the rank kernel, the trailing
/// update a deep product, on this device's kernels and on the GPUs' packed panels; the last
/// block narrower), its workspaces and the L and inverse buffers poisoned first, against f64;
/// and the default block's choice.
#[test]
fn lu_in_wide_blocks_matches_f64() {
    use symraster::inverse::kernels::{LU_WIDE_BLOCK, LU_WIDE_ORDER};
    use symraster::inverse::lu;
    let gpu = common::gpu();
    let gpu_tiles = symraster::tiled::KernelConfig::GPU;
    for (update, tiles) in [
        (BlockUpdate::Rank64, None),
        (BlockUpdate::Mixed, None),
        (BlockUpdate::Rank64, Some(gpu_tiles)),
    ] {
        let settings = PanelSettings {
            update,
            ..PanelSettings::default()
        };
        let inv = match tiles {
            None => Inverter::new(&gpu).unwrap(),
            Some(c) => Inverter::with_config(gpu.context(), c).unwrap(),
        }
        .with_panel(settings);
        assert_eq!(inv.lu_block(LU_WIDE_ORDER), LU_WIDE_BLOCK);
        assert_eq!(
            inv.lu_block(LU_WIDE_ORDER - 1),
            inv.general_block(LU_WIDE_ORDER - 1)
        );
        for (n, block) in [(300, 256), (600, 256), (520, 512), (700, 512)] {
            let a = general(n, 90 + n as u64);
            let tol = inverse::pivot_tolerance(&a.to_f32());
            let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
            let mut w = PivotWork::new(&inv, n, block).unwrap();
            common::poison_pivot_work(&mut w);
            let nan = vec![f32::NAN; n * n];
            let square = || DeviceSquare {
                buffer: inv.buffer("poisoned", n * n).unwrap(),
                n,
            };
            let (mut l, mut xd) = (square(), square());
            l.buffer.upload(&nan).unwrap();
            xd.buffer.upload(&nan).unwrap();
            inv.reset_status().unwrap();
            lu::factor_in_place(&inv, &d, &w, tol).unwrap();
            inv.check_status(tol).unwrap();
            lu::inverse_from_factors(&inv, &d, &l, &xd).unwrap();
            let mut x = xd.download().unwrap();
            gje::unscramble_columns(&mut x, &w.piv.download_range(0, n).unwrap());
            let what = format!("{update:?} {tiles:?} n {n} b {block}");
            common::check_inverse(&a, &x, &what);
        }
    }
    let wide = Inverter::new(&gpu).unwrap().with_panel(PanelSettings {
        block: Some(96),
        ..PanelSettings::default()
    });
    assert_eq!(wide.lu_block(LU_WIDE_ORDER), 96);
}

/// The Gauss-Jordan sweep on the rank kernel with every float workspace poisoned first: a
/// read of anything the sweep did not write shows in the inverse.
#[test]
fn poisoned_workspaces_do_not_show_on_the_rank_kernel() {
    let gpu = common::gpu();
    for update in [BlockUpdate::Rank64, BlockUpdate::Rank128] {
        let inv = inverter(&gpu, update);
        for (n, block) in [(129, 64), (200, 64), (150, 40)] {
            let a = general(n, 21 + n as u64);
            let d = DeviceSquare::upload(&inv, &a.to_f32()).unwrap();
            let mut w = PivotWork::new(&inv, n, block).unwrap();
            common::poison_pivot_work(&mut w);
            let tol = inverse::pivot_tolerance(&a.to_f32());
            inv.reset_status().unwrap();
            gje::invert_in_place(&inv, &d, &w, tol).unwrap();
            inv.check_status(tol).unwrap();
            let mut x = d.download().unwrap();
            gje::unscramble_columns(&mut x, &w.piv.download_range(0, n).unwrap());
            let what = format!("{update:?} n {n} b {block}");
            assert!(x.as_slice().iter().all(|v| v.is_finite()), "{what}");
            assert!(
                common::inverse_residual(&a, &x) < common::inverse_residual_bound(n),
                "{what}"
            );
        }
    }
}

#[test]
fn block_update_names_round_trip() {
    for u in BlockUpdate::ALL {
        assert_eq!(BlockUpdate::from_name(u.name()), Some(u));
    }
    assert_eq!(BlockUpdate::from_name("gemm"), None);
    assert_eq!(PanelSettings::default().update, BlockUpdate::Rank64);
    assert_eq!(PanelSettings::default().lower, LowerInverse::Triangular);
    for l in [LowerInverse::Solve, LowerInverse::Triangular] {
        assert_eq!(LowerInverse::from_name(l.name()), Some(l));
    }
    // Deep updates stay on the tiled product.
    assert_eq!(BlockUpdate::Rank.tile(4096, 4096, 1024), None);
    assert_eq!(
        BlockUpdate::Rank.tile(4096, 4096, 64),
        Some(RankTile::Large)
    );
    assert_eq!(
        BlockUpdate::Rank.tile(1024, 1024, 64),
        Some(RankTile::Small)
    );
}
