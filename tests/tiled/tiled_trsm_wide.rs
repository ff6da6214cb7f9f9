//! The wide triangular solve x ← x·L⁻ᵀ (src/tiled/trsm_wide.rs: blocks of 128 inverted in
//! one launch, outer blocks left- or right-looking) and the row solve (src/tiled/trsm_rows.rs:
//! one launch per outer block, rows of x per work group) against an f64 substitution: r × n
//! right-hand sides around the block edges, L with 1e30 above its diagonal (never read) in
//! row- and column-major views, x amid NaN (entries outside it must stay NaN, none inside),
//! the inverses' buffer poisoned with NaN, and the launches it makes.

use crate::common;

use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::internal::GpuInternals;
use symraster::tiled::schedule::SplitSolve;
use symraster::tiled::trsm_wide::{launches, trsm_wide};
use symraster::tiled::{KernelConfig, Operand, Parts, Region, TiledKernels, View, trsm_wide::rows};
use symraster::tuning::Tuning;

/// Garbage above L's diagonal.
const GARBAGE: f32 = 1e30;

/// A value in [−1, 1) from a counter (deterministic, no generator state).
fn noise(i: usize, seed: usize) -> f64 {
    let mut h = (i as u64 ^ (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 31;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 29;
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A well-conditioned lower-triangular L of order n (diagonal in [1.5, 2.5), the rest of
/// size 1/n), as f32 values.
fn lower(n: usize) -> Vec<Vec<f32>> {
    (0..n)
        .map(|i| {
            (0..=i)
                .map(|j| match i == j {
                    true => (2.0 + 0.5 * noise(i, 1)) as f32,
                    false => (noise(i * n + j, 2) / n as f64) as f32,
                })
                .collect()
        })
        .collect()
}

/// y·Lᵀ = b for every row of b, in f64.
fn reference(l: &[Vec<f32>], b: &[Vec<f32>]) -> Vec<Vec<f64>> {
    b.iter()
        .map(|row| {
            let mut y = vec![0.0f64; row.len()];
            for i in 0..row.len() {
                let s: f64 = (0..i).map(|j| f64::from(l[i][j]) * y[j]).sum();
                y[i] = (f64::from(row[i]) - s) / f64::from(l[i][i]);
            }
            y
        })
        .collect()
}

/// Solves r × n right-hand sides by the wide solve with blocks of `nb`, outer blocks of
/// `width`, `left`-looking or not, L row-major or not, and checks it.
fn check(
    k: &TiledKernels,
    r: usize,
    n: usize,
    (nb, width): (usize, usize),
    left: bool,
    row_major: bool,
) {
    let what = format!("r {r} n {n} blocks {nb} width {width} left {left} row-major {row_major}");
    let solve = |x: Region<'_>, l: Operand<'_>| trsm_wide(k, x, l, (nb, width), left).unwrap();
    check_solve(
        k,
        (r, n, row_major),
        (nb, launches(n, width, nb)),
        &what,
        solve,
    );
}

/// Solves r × n right-hand sides by `solve` (inverted blocks of `nb`, `want` launches less
/// packing launches), L row-major or not, and checks the result and the launches.
fn check_solve(
    k: &TiledKernels,
    (r, n, row_major): (usize, usize, bool),
    (nb, want): (usize, usize),
    what: &str,
    solve: impl FnOnce(Region<'_>, Operand<'_>),
) {
    let ctx = k.context();
    let l = lower(n);
    // L at offset 5 with a leading dimension of n + 3; NaN in the padding, GARBAGE above.
    let ld = n + 3;
    let lv = match row_major {
        true => View {
            offset: 5,
            rs: ld,
            cs: 1,
            rows: n,
            cols: n,
        },
        false => View {
            offset: 5,
            rs: 1,
            cs: ld,
            rows: n,
            cols: n,
        },
    };
    let mut ldata = vec![f32::NAN; 5 + ld * n + 3];
    for i in 0..n {
        for j in 0..n {
            ldata[lv.offset + i * lv.rs + j * lv.cs] = if j <= i { l[i][j] } else { GARBAGE };
        }
    }
    let lbuf = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &ldata).unwrap();
    // X at offset 7 with rows n + 2 apart, NaN around it.
    let xv = View {
        offset: 7,
        rs: n + 2,
        cs: 1,
        rows: r,
        cols: n,
    };
    let b: Vec<Vec<f32>> = (0..r)
        .map(|i| (0..n).map(|j| noise(i * n + j, 3 + n) as f32).collect())
        .collect();
    let mut xdata = vec![f32::NAN; 7 + (n + 2) * r + 5];
    for i in 0..r {
        for j in 0..n {
            xdata[xv.offset + i * xv.rs + j] = b[i][j];
        }
    }
    let xbuf = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, &xdata).unwrap();
    {
        let inv = k.solve_inverses(n.div_ceil(nb), nb).unwrap();
        inv.write(0, &vec![f32::NAN; inv.len()]).unwrap();
    }
    let (launches0, packs0) = (k.launches(), k.packs());
    solve(Parts::one(&xbuf).region(xv), Operand::new(&lbuf, lv));
    k.check("the solve").unwrap();
    assert_eq!(
        (k.launches() - launches0 - (k.packs() - packs0)) as usize,
        want,
        "{what}: launches"
    );
    let got = xbuf.download().unwrap();
    for (index, v) in got.iter().enumerate() {
        let (i, j) = (
            (index.wrapping_sub(7)) / (n + 2),
            (index.wrapping_sub(7)) % (n + 2),
        );
        let inside = index >= 7 && i < r && j < n;
        assert_eq!(
            v.is_nan(),
            !inside,
            "{what}: entry {index} (inside {inside}) is {v}"
        );
    }
    let y = reference(&l, &b);
    let (mut err, mut norm, mut res, mut bnorm) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..r {
        for j in 0..n {
            let x = f64::from(got[xv.offset + i * xv.rs + j]);
            err += (x - y[i][j]).powi(2);
            norm += y[i][j].powi(2);
            // (X·Lᵀ)(i, j) = Σ_k X(i, k)·L(j, k), k ≤ j
            let s: f64 = (0..=j)
                .map(|k| f64::from(got[xv.offset + i * xv.rs + k]) * f64::from(l[j][k]))
                .sum();
            res += (s - f64::from(b[i][j])).powi(2);
            bnorm += f64::from(b[i][j]).powi(2);
        }
    }
    let tol = 16.0 * common::U32 * (n as f64).max(16.0);
    let forward = (err / norm.max(f64::MIN_POSITIVE)).sqrt();
    let backward = (res / bnorm.max(f64::MIN_POSITIVE)).sqrt();
    assert!(
        forward < tol,
        "{what}: forward error {forward:.2e} (tolerance {tol:.2e})"
    );
    assert!(
        backward < tol,
        "{what}: backward error {backward:.2e} (tolerance {tol:.2e})"
    );
}

#[test]
fn the_wide_solve_matches_substitution_around_the_block_edges() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    let k = TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &Tuning::default()).unwrap();
    assert!(k.solves_by_wide_blocks(128) && k.solves_by_wide_blocks(64));
    assert!(!k.solves_by_wide_blocks(256) && !k.solves_by_wide_blocks(48));
    assert_eq!(k.split_solve(), SplitSolve::DEFAULT, "the default changed");
    for n in [1, 2, 31, 32, 33, 127, 128, 129, 300, 513] {
        for r in [n, n + 37] {
            for (blocks, left) in [
                ((128, 128), true),
                ((128, 256), false),
                ((128, 300), true),
                ((128, 1024), false),
                ((64, 128), false),
                ((32, 100), true),
            ] {
                check(&k, r, n, blocks, left, (n + blocks.1) % 2 == 0);
            }
        }
    }
    // Both layouts of L with several outer blocks each way.
    for row_major in [true, false] {
        for left in [true, false] {
            check(&k, 140, 300, (128, 128), left, row_major);
            check(&k, 140, 300, (64, 192), left, row_major);
        }
    }
}

#[test]
fn the_row_solve_matches_substitution_around_the_block_edges() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        return;
    }
    // The GPUs' blocks of 64 and llvmpipe's own tiles' 32.
    for (config, d) in [
        (KernelConfig::GPU, 64),
        (KernelConfig::parse("16,16,4,4,16,1,32").unwrap(), 32),
    ] {
        let k = TiledKernels::tuned(gpu.context(), config, &Tuning::default()).unwrap();
        assert_eq!(k.diag(), d);
        // 64 rows of 64 columns and a tile of 64 x 65 pass llvmpipe's 32 KiB of shared memory.
        assert!(k.solves_by_rows(32, d) && k.solves_by_rows(4, d) && k.solves_by_rows(32, 32));
        assert!(!k.solves_by_rows(6, d) && !k.solves_by_rows(0, d) && !k.solves_by_rows(68, d));
        assert!(!k.solves_by_rows(32, 128) && !k.solves_by_rows(32, 48));
        let fits = 4 * (d * (d + 1) + 64 * d) as u64 <= k.limits().max_shared_bytes;
        assert_eq!(k.solves_by_rows(64, d), fits);
        // Refused, x left as it was: rows per group the kernel cannot take, and x or L of
        // the wrong shape (both solves).
        let data: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let buf = Buffer::new(
            k.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            &data,
        )
        .unwrap();
        let square = View::row_major(4, 4);
        let (x4, l4) = (Parts::one(&buf).region(square), Operand::new(&buf, square));
        let e = rows::trsm_rows(&k, x4, l4, (d, 6, 1 << 20, d)).unwrap_err();
        assert!(e.to_string().contains("cannot solve by rows of 6"), "{e}");
        let narrow = Parts::one(&buf).region(View::row_major(4, 3));
        let e = rows::trsm_rows(&k, narrow, l4, (d, 8, 1 << 20, d)).unwrap_err();
        assert!(e.to_string().contains("needs a square L"), "{e}");
        let e = trsm_wide(&k, narrow, l4, (d, d), true).unwrap_err();
        assert!(e.to_string().contains("needs a square L"), "{e}");
        assert_eq!(buf.download().unwrap(), data, "a refused solve wrote x");
        for n in [1, 2, d - 1, d, d + 1, 2 * d + 3, 300] {
            for r in [1, n, n + 37] {
                // Leaves of one outer block, of several, and L halved down to them.
                for (width, rows, leaf) in [
                    (d, 4, 1 << 20),
                    (2 * d, 32, 1 << 20),
                    (300, 8, 1 << 20),
                    (1024, 64, 1 << 20),
                    (d, 16, 2 * d),
                    (d, 32, 1),
                    (2 * d, 8, 3 * d),
                ] {
                    // Blocks of the kernels' diagonal order, and of the other one.
                    for block in [d, 96 - d] {
                        if !k.solves_by_rows(rows, block) {
                            continue;
                        }
                        let what = format!(
                            "d {d} block {block} r {r} n {n} width {width} rows {rows} leaf {leaf}"
                        );
                        let want = rows::launches(n, (width, leaf), block);
                        let solve = |x: Region<'_>, l: Operand<'_>| {
                            rows::trsm_rows(&k, x, l, (width, rows, leaf, block)).unwrap()
                        };
                        check_solve(&k, (r, n, (n + r) % 2 == 0), (block, want), &what, solve);
                    }
                }
            }
        }
    }
}

#[test]
fn the_solve_names_are_parsed_back() {
    for s in [
        SplitSolve::Tiles,
        SplitSolve::Blocks {
            block: 128,
            width: 512,
            left: true,
        },
        SplitSolve::Blocks {
            block: 64,
            width: 1024,
            left: false,
        },
        SplitSolve::Blocks {
            block: 32,
            width: 96,
            left: true,
        },
        SplitSolve::Rows {
            width: 512,
            rows: 32,
            leaf: 1 << 20,
            block: 64,
        },
        SplitSolve::Rows {
            width: 96,
            rows: 4,
            leaf: 1024,
            block: 32,
        },
    ] {
        assert_eq!(SplitSolve::parse(&s.name()), Some(s));
    }
    assert_eq!(
        SplitSolve::parse("r1024"),
        Some(SplitSolve::Blocks {
            block: 128,
            width: 1024,
            left: false
        })
    );
    for bad in [
        "",
        "x512",
        "l",
        "l0",
        "r-4",
        "l70000",
        "tile",
        "l512b256",
        "l512b48",
        "l512b",
        "rows512",
        "rows512x6",
        "rows512x68",
        "rows0x32",
        "rowsx32",
    ] {
        assert_eq!(SplitSolve::parse(bad), None, "{bad:?}");
    }
}
