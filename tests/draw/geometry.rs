//! The draw geometry tested with no GPU: the paper's figures rasterized in software and the
//! algorithms emulated in f64 on them.

use crate::common::soft_exec::{SoftTexture, execute};
use crate::common::soft_raster::{rasterize, texel};
use std::collections::BTreeSet;
use symraster::draw::Kernel;
use symraster::faithful::{assembly, cholesky, lu};
use symraster::{Format, Layout, Matrix, problems, reference, relative_error};

#[test]
fn fig2_triangle_covers_the_lower_triangle_and_indexes_a_and_b() {
    for m in 1..=40 {
        for k in [0, 3] {
            let frags = rasterize(&assembly::outer_product_full(m, k), m, m);
            let got: BTreeSet<_> = frags.iter().map(|f| (f.x, f.y)).collect();
            let want: BTreeSet<_> = (0..m).flat_map(|y| (0..=y).map(move |x| (x, y))).collect();
            assert_eq!(got, want, "m={m}");
            assert_eq!(frags.len(), want.len(), "m={m}: a pixel drawn twice");
            for f in frags {
                // A(i, k) is texel (k, i); b(j) is texel (j, 0).
                assert_eq!((texel(f.t0[0]), texel(f.t0[1])), (k as i64, f.y as i64));
                assert_eq!((texel(f.t1[0]), texel(f.t1[1])), (f.x as i64, 0));
            }
        }
    }
}

#[test]
fn fig2a_rectangle_scales_column_k() {
    for m in 1..=20 {
        let frags = rasterize(&assembly::column_scaling(m, 4), m, 1);
        assert_eq!(frags.len(), m);
        for f in frags {
            // Kernel 1: A at T0.yx = texel (k, i), d at T0.yz = texel (k, 0).
            assert_eq!((texel(f.t0[1]), texel(f.t0[0])), (4, f.x as i64));
            assert_eq!((texel(f.t0[1]), texel(f.t0[2])), (4, 0));
        }
    }
}

#[test]
fn fig5_triangle_covers_the_trailing_triangle_with_neighbour_and_pivot() {
    for m in 2..=40 {
        for k in 0..m - 1 {
            let frags = rasterize(&cholesky::outer_product_full(m, k), m, m);
            let got: BTreeSet<_> = frags.iter().map(|f| (f.x, f.y)).collect();
            let want: BTreeSet<_> = (k + 1..m)
                .flat_map(|y| (k + 1..=y).map(move |x| (x, y)))
                .collect();
            assert_eq!(got, want, "m={m} k={k}");
            assert_eq!(frags.len(), want.len());
            for f in frags {
                // Fragment (j, i): neighbour L(i, k) at texel (k, i), pivot L(j, k) at T1.yx = (k, j).
                assert_eq!((texel(f.t0[0]), texel(f.t0[1])), (k as i64, f.y as i64));
                assert_eq!((texel(f.t1[1]), texel(f.t1[0])), (k as i64, f.x as i64));
            }
        }
    }
}

#[test]
fn normalization_and_square_root_cover_their_pixels() {
    for m in 1..=20 {
        for k in 0..m {
            let sq: Vec<_> = rasterize(&cholesky::square_root_full(k), m, m)
                .iter()
                .map(|f| (f.x, f.y))
                .collect();
            assert_eq!(sq, vec![(k, k)]);
            let norm = rasterize(&cholesky::normalization_full(m, k), m, m);
            let mut got: Vec<_> = norm.iter().map(|f| (f.x, f.y)).collect();
            got.sort();
            assert_eq!(got, (k + 1..m).map(|i| (k, i)).collect::<Vec<_>>());
            assert!(
                norm.iter()
                    .all(|f| (texel(f.t0[0]), texel(f.t0[1])) == (k as i64, k as i64))
            );
        }
    }
}

#[test]
fn emulated_algorithm_3_matches_algorithm_2() {
    for m in 1..=13 {
        for n in [1, m, 2 * m] {
            let mut rng = problems::rng((m * 100 + n) as u64);
            let a = problems::uniform_matrix(&mut rng, m, n).to_f64();
            let d: Vec<f64> = problems::uniform_vector(&mut rng, n)
                .iter()
                .map(|&x| x as f64)
                .collect();
            let plan = assembly::full_plan(m, n);
            let run = execute(&plan, SoftTexture::filled(m, m, 0.0), Some((&a, &d))).unwrap();
            let c = Matrix::from_row_major(m, m, run.source.data).unwrap();
            let err = relative_error(&c, &reference::assemble(&a, &d));
            assert!(err < 1e-14, "m={m} n={n}: {err}");
        }
    }
}

#[test]
fn emulated_algorithm_5_matches_algorithm_4_and_never_reads_the_upper_triangle() {
    for m in 1..=13 {
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m).to_f64();
        let layout = Layout::new(m, Format::Full);
        let start: Vec<f64> = layout
            .pack(&c.to_f32(), f32::NAN) // NaN in the strict upper triangle: must never be read
            .iter()
            .map(|&x| x as f64)
            .collect();
        let plan = cholesky::full_plan(m);
        let start = SoftTexture {
            width: m,
            height: m,
            data: start,
        };
        let run = execute(&plan, start, None).unwrap();
        let l = Matrix::from_fn(m, m, |i, j| {
            if j <= i {
                run.source.data[i * m + j]
            } else {
                0.0
            }
        });
        let l_ref = reference::cholesky(&c.to_f32().to_f64()).unwrap();
        let err = relative_error(&l, &l_ref);
        assert!(err < 1e-12, "m={m}: {err}");
        // Algorithm 5 draws m squares, m-1 rectangles, m-1 triangles (plus the copies).
        let count = |k: Kernel| plan.passes.iter().filter(|p| p.kernel == k).count();
        assert_eq!(count(Kernel::SquareRoot), m);
        assert_eq!(count(Kernel::Normalization), m - 1);
        assert_eq!(count(Kernel::OuterProductSubtraction), m - 1);
        assert_eq!(count(Kernel::Copy), 2 * (m - 1));
    }
}

#[test]
fn every_edge_stays_half_a_texel_from_pixel_centres() {
    // The paper's triangles never put an edge through a pixel centre, so the driver's
    // tie-breaking never decides coverage (the two-triangle rectangles excepted).
    for m in 1..=17 {
        for tri in [assembly::outer_product_full(m, 1).to_vec()]
            .into_iter()
            .chain((0..m.saturating_sub(1)).map(|k| cholesky::outer_product_full(m, k).to_vec()))
        {
            for e in 0..3 {
                let (p, q) = (tri[e].position, tri[(e + 1) % 3].position);
                for y in 0..m {
                    for x in 0..m {
                        let (cx, cy) = (x as f32 + 0.5, y as f32 + 0.5);
                        let cross = (q[0] - p[0]) * (cy - p[1]) - (q[1] - p[1]) * (cx - p[0]);
                        assert_ne!(cross, 0.0, "m={m}: an edge passes through ({cx}, {cy})");
                    }
                }
            }
        }
    }
}

#[test]
fn emulated_lu_matches_the_reference() {
    for m in 1..=12 {
        let a = problems::diagonally_dominant(&mut problems::rng(m as u64), m).to_f64();
        let start = SoftTexture {
            width: m,
            height: m,
            data: a.as_slice().to_vec(),
        };
        let run = execute(&lu::full_plan(m), start, None).unwrap();
        let got = Matrix::from_row_major(m, m, run.source.data).unwrap();
        let err = relative_error(&got, &reference::lu_no_pivoting(&a).unwrap());
        assert!(err < 1e-13, "m={m}: {err}");
    }
}
