//! The packed plans (Figs 4, 6, 7) checked without a GPU: every pass rasterized by the soft
//! rasterizer must write exactly the intended texels once and fetch the intended texels, and
//! whole Algorithms 3 and 5 run through it must agree with the f64 reference.

use crate::common::soft_exec::{SoftTexture, execute};
use crate::common::soft_raster::{rasterize, texel};
use symraster::draw::{Kernel, Pass, Plan};
use symraster::faithful::packed;
use symraster::{Format, Layout, Matrix, problems, reference, relative_error};

/// The entries (i, j) a pass must write, from Algorithms 3 and 5 alone (not from the geometry).
fn intended_entries(m: usize, pass: &Pass) -> Vec<(usize, usize)> {
    let k = pass.step;
    let lower = |from: usize| {
        (from..m)
            .flat_map(move |i| (from..=i).map(move |j| (i, j)))
            .collect()
    };
    match pass.kernel {
        Kernel::OuterProductAddition => lower(0),
        Kernel::SquareRoot => vec![(k, k)],
        Kernel::Normalization => (k + 1..m).map(|i| (i, k)).collect(),
        Kernel::OuterProductSubtraction => lower(k + 1),
        _ => unreachable!("handled by the caller, or not a faithful kernel"),
    }
}

/// The pixels each pass of `plan` must write, in sorted order.
fn intended_pixels(layout: Layout, plan: &Plan) -> Vec<Vec<(usize, usize)>> {
    let m = layout.order();
    let mut out: Vec<Vec<(usize, usize)>> = Vec::new();
    for pass in &plan.passes {
        let mut pixels: Vec<_> = match pass.kernel {
            Kernel::ColumnScaling => (0..m).map(|i| (i, 0)).collect(),
            Kernel::Copy => out.last().expect("a copy follows a pass").clone(),
            _ => intended_entries(m, pass)
                .into_iter()
                .map(|(i, j)| layout.texel_of(i, j))
                .collect(),
        };
        pixels.sort();
        out.push(pixels);
    }
    out
}

fn sorted(mut v: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    v.sort();
    v
}

fn floor2(u: f64, v: f64) -> (usize, usize) {
    let (x, y) = (texel(u), texel(v));
    assert!(x >= 0 && y >= 0, "negative texel ({x}, {y})");
    (x as usize, y as usize)
}

/// Every pass of the packed assembly plan writes exactly its texels, once each, and its
/// fragments fetch A(i, k), b(j) (and in column scaling A(i, k), d(k)) for their entry (i, j).
#[test]
fn packed_assembly_passes_cover_and_fetch_exactly() {
    for m in 1..=16 {
        let layout = Layout::packed(m);
        let n = 3;
        let plan = packed::assembly_plan(m, n);
        let intended = intended_pixels(layout, &plan);
        for (p, pass) in plan.passes.iter().enumerate() {
            let (w, h) = pass.viewport;
            let frags = rasterize(plan.vertices_of(pass), w, h);
            let got = sorted(frags.iter().map(|f| (f.x, f.y)).collect());
            let mut dedup = got.clone();
            dedup.dedup();
            assert_eq!(dedup, got, "m = {m}, pass {p}: a pixel drawn twice");
            assert_eq!(got, intended[p], "m = {m}, pass {p} ({:?})", pass.kernel);
            let k = pass.step;
            for f in &frags {
                match pass.kernel {
                    Kernel::ColumnScaling => {
                        assert_eq!(floor2(f.t0[1], f.t0[0]), (k, f.x), "A(i, k)");
                        assert_eq!(floor2(f.t0[1], f.t0[2]), (k, 0), "d(k)");
                    }
                    Kernel::OuterProductAddition => {
                        let (i, j) = layout.entry_of(f.x, f.y).expect("an entry");
                        assert_eq!(floor2(f.t0[0], f.t0[1]), (k, i), "m = {m}: A({i}, {k})");
                        assert_eq!(floor2(f.t1[0], f.t1[1]), (j, 0), "m = {m}: b({j})");
                    }
                    other => panic!("unexpected kernel {other:?}"),
                }
            }
        }
    }
}

/// Every pass of the packed Cholesky plan writes exactly its texels, once each; normalization
/// fetches the pivot, subtraction the neighbour L(i, k) at T0 and the pivot L(j, k) at T1.yx.
#[test]
fn packed_cholesky_passes_cover_and_fetch_exactly() {
    for m in 1..=16 {
        let layout = Layout::packed(m);
        let plan = packed::cholesky_plan(m);
        assert_eq!(
            plan.passes.len(),
            5 * (m - 1) + 1,
            "m = {m}: Algorithm 5's passes"
        );
        let intended = intended_pixels(layout, &plan);
        for (p, pass) in plan.passes.iter().enumerate() {
            let (w, h) = pass.viewport;
            assert_eq!((w, h), layout.texture_size(), "viewport is w x h");
            let frags = rasterize(plan.vertices_of(pass), w, h);
            let got = sorted(frags.iter().map(|f| (f.x, f.y)).collect());
            let mut dedup = got.clone();
            dedup.dedup();
            assert_eq!(dedup, got, "m = {m}, pass {p}: a pixel drawn twice");
            assert_eq!(
                got, intended[p],
                "m = {m}, pass {p} ({:?} step {})",
                pass.kernel, pass.step
            );
            let k = pass.step;
            for f in &frags {
                let (i, j) = layout.entry_of(f.x, f.y).expect("an entry");
                match pass.kernel {
                    Kernel::Normalization => {
                        assert_eq!(floor2(f.t0[0], f.t0[1]), layout.texel_of(k, k));
                    }
                    Kernel::OuterProductSubtraction => {
                        let what = format!("m = {m}, step {k}, entry ({i}, {j})");
                        assert_eq!(
                            floor2(f.t0[0], f.t0[1]),
                            layout.texel_of(i, k),
                            "{what}: neighbour"
                        );
                        assert_eq!(
                            floor2(f.t1[1], f.t1[0]),
                            layout.texel_of(j, k),
                            "{what}: pivot"
                        );
                    }
                    Kernel::SquareRoot | Kernel::Copy => {}
                    other => panic!("unexpected kernel {other:?}"),
                }
            }
        }
    }
}

/// The f64 error bound for the soft run: f64 rounding only.
const SOFT_TOL: f64 = 1e-12;

fn soft_assembly(format: Format, a: &Matrix<f64>, d: &[f64]) -> Matrix<f64> {
    let (m, n) = a.shape();
    let layout = Layout::new(m, format);
    let plan = symraster::assembly_plan(layout, n, symraster::Method::Faithful).unwrap();
    let (w, h) = layout.texture_size();
    let run = execute(&plan, SoftTexture::filled(w, h, 0.0), Some((a, d))).unwrap();
    let intended = intended_pixels(layout, &plan);
    for (p, writes) in run.writes.iter().enumerate() {
        assert_eq!(sorted(writes.clone()), intended[p], "m = {m}, pass {p}");
    }
    let mut c = Matrix::zeros(m, m);
    for y in 0..h {
        for x in 0..w {
            if let Some((i, j)) = layout.entry_of(x, y) {
                c[(i, j)] = run.source.data[y * w + x];
            }
        }
    }
    c
}

fn soft_cholesky(format: Format, c: &Matrix<f64>) -> Matrix<f64> {
    let m = c.rows();
    let layout = Layout::new(m, format);
    let plan = symraster::cholesky_plan(layout, symraster::Method::Faithful).unwrap();
    let (w, h) = layout.texture_size();
    let mut source = SoftTexture::filled(w, h, f64::NAN);
    for i in 0..m {
        for j in 0..=i {
            let (x, y) = layout.texel_of(i, j);
            source.data[y * w + x] = c[(i, j)];
        }
    }
    let run = execute(&plan, source, None).unwrap();
    let intended = intended_pixels(layout, &plan);
    for (p, writes) in run.writes.iter().enumerate() {
        assert_eq!(sorted(writes.clone()), intended[p], "m = {m}, pass {p}");
    }
    Matrix::from_fn(m, m, |i, j| {
        if j <= i {
            let (x, y) = layout.texel_of(i, j);
            run.source.data[y * w + x]
        } else {
            0.0
        }
    })
}

/// Algorithm 3 emulated through the soft rasterizer, packed and full, equals Algorithm 2.
#[test]
fn soft_packed_assembly_matches_reference() {
    let mut rng = problems::rng(11);
    for m in 1..=16usize {
        for n in [1, m.div_ceil(2), 2 * m] {
            let a = problems::uniform_matrix(&mut rng, m, n).to_f64();
            let d: Vec<f64> = problems::uniform_vector(&mut rng, n)
                .iter()
                .map(|&v| v as f64)
                .collect();
            let want = reference::assemble(&a, &d);
            for format in [Format::Packed, Format::Full] {
                let got = soft_assembly(format, &a, &d);
                let err = relative_error(&got, &want);
                assert!(err < SOFT_TOL, "{format} m = {m}, n = {n}: error {err:e}");
            }
        }
    }
}

/// Algorithm 5 emulated through the soft rasterizer, packed and full, equals Algorithm 4.
#[test]
fn soft_packed_cholesky_matches_reference() {
    let mut rng = problems::rng(12);
    for m in 1..=16 {
        let c = problems::well_conditioned_spd(&mut rng, m).to_f64();
        let want = reference::cholesky(&c).unwrap();
        for format in [Format::Packed, Format::Full] {
            let got = soft_cholesky(format, &c);
            let err = relative_error(&got, &want);
            assert!(err < SOFT_TOL, "{format} m = {m}: error {err:e}");
        }
    }
}
