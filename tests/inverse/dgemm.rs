//! The f64 product of the sign function and the Lyapunov solver (`Inverter::dgemm`,
//! glsl/inverse/dgemm.comp) against faer's f64 product: every work-group tile at shapes around
//! its widths, each operand plain and transposed (and with no unit stride), views with offsets
//! and padded rows, C poisoned with NaN before the product, the Σ C² sums, and the depth cut
//! into launches.

use crate::common;

use faer::Mat;
use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::inverse::Inverter;
use symraster::inverse::kernels::double::{DoubleOperand, DoubleProduct, DoubleTile};
use symraster::tiled::View;

/// Entries in [−1, 1) from a seeded linear congruential generator.
fn random(rows: usize, cols: usize, seed: u64) -> Mat<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let values: Vec<f64> = (0..rows * cols).map(|_| next()).collect();
    Mat::from_fn(rows, cols, |i, j| values[i * cols + j])
}

/// How an operand lies in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lay {
    /// Row-major (column stride 1).
    Plain,
    /// Its transpose row-major, viewed through [`View::t`] (row stride 1).
    Transposed,
    /// Row-major in every other entry (neither stride 1).
    Spread,
}

/// `m` laid into a buffer's contents after `offset` NaNs as `how` says, with `pad` NaNs after
/// each stored row (NaN between spread entries too).
fn lay(m: &Mat<f64>, how: Lay, offset: usize, pad: usize) -> (Vec<f64>, View) {
    let transposed = how == Lay::Transposed;
    let (rows, cols) = if transposed {
        (m.ncols(), m.nrows())
    } else {
        (m.nrows(), m.ncols())
    };
    let cs = if how == Lay::Spread { 2 } else { 1 };
    let stored = View {
        offset,
        rs: cs * cols + pad,
        cs,
        rows,
        cols,
    };
    let mut data = vec![f64::NAN; offset + rows * stored.rs + 1];
    for i in 0..rows {
        for j in 0..cols {
            data[stored.index(i, j)] = if transposed { m[(j, i)] } else { m[(i, j)] };
        }
    }
    (data, if transposed { stored.t() } else { stored })
}

/// A storage buffer holding `data`.
fn upload(inv: &Inverter, data: &[f64]) -> Buffer<f64> {
    Buffer::new(
        inv.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        data,
    )
    .unwrap()
}

/// One product's shape and terms.
#[derive(Clone, Copy, Debug)]
struct Case {
    rows: usize,
    cols: usize,
    depth: usize,
    /// How A lies.
    ta: Lay,
    /// How B lies (D: transposed where exactly one of A and B is).
    tb: Lay,
    alpha: f64,
    /// 0: D is C itself (NaN-poisoned: it must not be read).
    beta: f64,
    gamma: f64,
    /// Only C's lower triangle: the tiles wholly above its diagonal must stay NaN.
    lower: bool,
}

/// Runs `case` on the GPU with `tile` (`None`: the one `dgemm` picks) and checks C, entry by
/// entry, against faer's α·A·B + β·D + γ·I within 2(depth + 4)·ε of the sum of the terms'
/// magnitudes (rounding in both products), C's padding (and with `lower` the tiles above its
/// diagonal) untouched, and Σ C² against the CPU's.
/// Returns the compute launches it took.
fn check(inv: &Inverter, tile: Option<DoubleTile>, case: Case, seed: u64) -> u64 {
    let Case {
        rows,
        cols,
        depth,
        ta,
        tb,
        alpha,
        beta,
        gamma,
        lower,
    } = case;
    let a = random(rows, depth, seed);
    let b = random(depth, cols, seed + 1);
    let d = random(rows, cols, seed + 2);
    let (a_data, a_view) = lay(&a, ta, 3, 5);
    let (b_data, b_view) = lay(&b, tb, 1, 2);
    let d_lay = if (ta == Lay::Transposed) != (tb == Lay::Transposed) {
        Lay::Transposed
    } else {
        Lay::Plain
    };
    let (d_data, d_view) = lay(&d, d_lay, 2, 1);
    let c_view = View {
        offset: 4,
        rs: cols + 3,
        cs: 1,
        rows,
        cols,
    };
    let c_len = 4 + rows * (cols + 3) + 1;
    let (ga, gb, gd) = (
        upload(inv, &a_data),
        upload(inv, &b_data),
        upload(inv, &d_data),
    );
    let gc = upload(inv, &vec![f64::NAN; c_len]);
    let op = |buffer, view| DoubleOperand { buffer, view };
    let c_op = op(&gc, c_view);
    let mut p = DoubleProduct::new(c_op, op(&ga, a_view), op(&gb, b_view))
        .alpha(alpha)
        .plus_identity(gamma);
    if beta != 0.0 {
        p = p.plus(beta, op(&gd, d_view));
    }
    if lower {
        p = p.lower();
    }
    // The entries of the tiles a lower product skips.
    let used = tile.unwrap_or_else(|| DoubleTile::for_product(rows, cols));
    let (bm, bn) = (used.rows(), used.cols());
    let skipped = |i: usize, j: usize| lower && j / bn * bn >= i / bm * bm + bm;
    let before = symraster::gl::dispatches();
    let sum = match tile {
        Some(t) => inv.dgemm_with(p, true, t),
        None => inv.dgemm(p, true),
    }
    .unwrap();
    let launches = symraster::gl::dispatches() - before;
    let got = gc.download().unwrap();

    let ab = &a * &b;
    let abs = |m: &Mat<f64>| Mat::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)].abs());
    let magnitude = abs(&a) * abs(&b);
    let eps = f64::EPSILON;
    let tol = 2.0 * (depth as f64 + 4.0) * eps;
    let (mut err2, mut scale2, mut want2, mut got2) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..rows {
        for j in 0..cols {
            let identity = if i == j { gamma } else { 0.0 };
            let want = alpha * ab[(i, j)] + beta * d[(i, j)] + identity;
            let size = alpha.abs() * magnitude[(i, j)] + (beta * d[(i, j)]).abs() + identity.abs();
            let g = got[c_view.index(i, j)];
            if skipped(i, j) {
                assert!(g.is_nan(), "{tile:?} {case:?}: C({i}, {j}) written ({g})");
                continue;
            }
            assert!(
                (g - want).abs() <= tol * size,
                "{tile:?} {case:?}: C({i}, {j}) = {g}, faer {want} (bound {})",
                tol * size
            );
            err2 += (g - want).powi(2);
            scale2 += size * size;
            want2 += want * want;
            got2 += g * g;
        }
    }
    let relative = (err2 / scale2.max(f64::MIN_POSITIVE)).sqrt();
    assert!(
        relative <= tol,
        "{tile:?} {case:?}: relative error {relative}"
    );
    for (at, v) in got.iter().enumerate() {
        let inside = at >= 4 && (at - 4) % (cols + 3) < cols && (at - 4) / (cols + 3) < rows;
        assert!(
            inside || v.is_nan(),
            "{tile:?} {case:?}: entry {at} outside C written ({v})"
        );
    }
    // The sums against C's own squares (the kernel's and the host's adding only) and against
    // faer's C (its error as above).
    let sum_tol = 4.0 * (rows * cols) as f64 * eps * got2;
    assert!(
        (sum - got2).abs() <= sum_tol,
        "{tile:?} {case:?}: Σ C² {sum}, C's squares add to {got2}"
    );
    assert!(
        (sum - want2).abs() <= 3.0 * tol * scale2 + sum_tol,
        "{tile:?} {case:?}: Σ C² {sum}, faer's C {want2}"
    );
    launches
}

/// C's shapes around the tile widths (1, 2, 3; 63-65; 127-129; 200) and non-square ones with
/// every side on a different side of a width.
const SHAPES: [(usize, usize, usize); 15] = [
    (1, 1, 1),
    (2, 2, 2),
    (3, 3, 3),
    (63, 63, 63),
    (64, 64, 64),
    (65, 65, 65),
    (127, 127, 127),
    (128, 128, 128),
    (129, 129, 129),
    (200, 200, 200),
    (1, 129, 65),
    (129, 1, 64),
    (65, 200, 3),
    (200, 63, 129),
    (64, 128, 1),
];

/// Every shape with each orientation of A and B, β·D on for half of them.
fn every_shape(tile: Option<DoubleTile>) {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for (s, &(rows, cols, depth)) in SHAPES.iter().enumerate() {
        for o in 0..4 {
            let case = Case {
                rows,
                cols,
                depth,
                ta: if o & 1 == 1 {
                    Lay::Transposed
                } else {
                    Lay::Plain
                },
                tb: if o & 2 == 2 {
                    Lay::Transposed
                } else {
                    Lay::Plain
                },
                alpha: -1.75,
                beta: if (s + o) % 2 == 0 { 0.625 } else { 0.0 },
                gamma: 3.25,
                lower: false,
            };
            check(&inv, tile, case, (10 * s + o) as u64);
        }
    }
}

#[test]
fn small_tile_products_match_faer() {
    every_shape(Some(DoubleTile::Small));
}

#[test]
fn medium_tile_products_match_faer() {
    every_shape(Some(DoubleTile::Medium));
}

#[test]
fn sweep_variant_tiles_match_faer() {
    for tile in [
        DoubleTile::Wide,
        DoubleTile::MediumShallow,
        DoubleTile::SmallShallow,
    ] {
        every_shape(Some(tile));
    }
}

#[test]
fn paired_tiles_match_faer() {
    for tile in [
        DoubleTile::MediumPairs,
        DoubleTile::SmallPairs,
        DoubleTile::LargePairs,
        DoubleTile::LargePairsTall,
    ] {
        every_shape(Some(tile));
    }
}

#[test]
fn operands_with_no_unit_stride_match_faer() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for tile in DoubleTile::ALL {
        for (rows, cols, depth) in [(3, 2, 5), (65, 129, 17), (130, 64, 66)] {
            for (ta, tb) in [(Lay::Spread, Lay::Plain), (Lay::Transposed, Lay::Spread)] {
                let case = Case {
                    rows,
                    cols,
                    depth,
                    ta,
                    tb,
                    alpha: 2.5,
                    beta: -0.5,
                    gamma: -1.0,
                    lower: false,
                };
                check(&inv, Some(tile), case, rows as u64);
            }
        }
    }
}

#[test]
fn products_with_the_chosen_tile_match_faer() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    // The tile dgemm picks for a wide C with a shallow depth (64 x 64, or 128 x 128 in pairs
    // where enough work groups result), both orientations of the Lyapunov residual's X·Aᵀ.
    for (rows, cols) in [(96, 96), (2100, 2100)] {
        let tile = DoubleTile::for_product(rows, cols);
        for tb in [Lay::Plain, Lay::Transposed] {
            let case = Case {
                rows,
                cols,
                depth: 17,
                ta: Lay::Plain,
                tb,
                alpha: -1.0,
                beta: 1.0,
                gamma: 0.5,
                lower: false,
            };
            check(&inv, None, case, 7);
            check(&inv, Some(tile), case, 7);
        }
    }
}

#[test]
fn depth_past_one_launch_is_cut_and_matches_faer() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for (t, tile) in DoubleTile::ALL.into_iter().enumerate() {
        let per = tile.depth_per_launch();
        // A launch at the full depth (software renderers end loops past their limit
        // silently, so this one is wrong if the budget is), then three launches.
        for (depth, launches) in [(per, 1), (2 * per + 5, 3)] {
            let case = Case {
                rows: 70,
                cols: 20,
                depth,
                ta: if t == 1 { Lay::Transposed } else { Lay::Plain },
                tb: if depth > per {
                    Lay::Transposed
                } else {
                    Lay::Plain
                },
                alpha: 0.75,
                beta: -2.0,
                gamma: 1.5,
                lower: false,
            };
            let got = check(&inv, Some(tile), case, 40 + t as u64);
            assert_eq!(got, launches, "{tile:?} depth {depth}");
        }
    }
}

/// With `lower`, every tile holding an entry on or below C's diagonal is written as before and
/// the tiles wholly above it stay untouched (Σ C² over the written ones): every tile, square
/// and oblong C, and a depth past one launch.
#[test]
fn lower_products_leave_the_tiles_above_the_diagonal_unwritten() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for (t, tile) in DoubleTile::ALL.into_iter().enumerate() {
        for (rows, cols, depth) in [(129, 129, 7), (200, 300, 33), (300, 130, 64), (1, 200, 2)] {
            let case = Case {
                rows,
                cols,
                depth,
                ta: Lay::Plain,
                tb: if t % 2 == 0 {
                    Lay::Transposed
                } else {
                    Lay::Plain
                },
                alpha: -1.0,
                beta: if rows == cols { 1.0 } else { 0.0 },
                gamma: 0.0,
                lower: true,
            };
            check(&inv, Some(tile), case, 60 + t as u64);
        }
    }
    let deep = DoubleTile::Small.depth_per_launch() + 3;
    let case = Case {
        rows: 130,
        cols: 130,
        depth: deep,
        ta: Lay::Plain,
        tb: Lay::Transposed,
        alpha: 0.5,
        beta: -1.0,
        gamma: 2.0,
        lower: true,
    };
    assert_eq!(check(&inv, None, case, 77), 2);
}
