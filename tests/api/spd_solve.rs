//! `Gpu::spd_solve`, C·x = b in f64 through the GPU's f32 factor refined in f64 (dsposv):
//! accuracy against an f64 reference on every method and format, ill-conditioned C, any scale,
//! and the errors.

use crate::common;

use symraster::least_squares::{relative_error_vec, solve_with_factor};
use symraster::problems::{rng, uniform_vector, well_conditioned_spd};
use symraster::{Error, Format, Matrix, NumericalError, Options, SolveOptions, reference};

/// x from an f64 Cholesky on the CPU.
pub(crate) fn reference_solve(c: &Matrix<f64>, b: &[f64]) -> Vec<f64> {
    let l = reference::cholesky(&c.lower_triangle()).unwrap();
    solve_with_factor(&l, b)
}

pub(crate) fn spd(seed: u64, m: usize) -> Matrix<f64> {
    well_conditioned_spd(&mut rng(seed), m).to_f64()
}

pub(crate) fn rhs(seed: u64, m: usize) -> Vec<f64> {
    uniform_vector(&mut rng(seed), m)
        .iter()
        .map(|&v| 2.0 * f64::from(v) - 1.0)
        .collect()
}

#[test]
fn solves_to_double_accuracy_on_every_method_and_format() {
    let gpu = common::gpu();
    for m in [1, 7, 40, 97] {
        let c = spd(m as u64, m);
        let b = rhs(100 + m as u64, m);
        let x_ref = reference_solve(&c, &b);
        for method in gpu.methods() {
            for format in [Format::Full, Format::Packed] {
                let options = SolveOptions::new().gpu(Options::new(format).method(method));
                let s = gpu.spd_solve(&c, &b, options).unwrap();
                assert!(s.converged, "{method} {format} m {m}: {s:?}");
                assert!(s.fallback.is_none(), "{method} {format} m {m}: {s:?}");
                let e = relative_error_vec(&s.x, &x_ref);
                assert!(
                    e < 1e-13 * (m as f64).sqrt().max(1.0) * s.condition.max(1.0),
                    "{method} {format} m {m}: error {e:.2e}"
                );
                // x⁰ is the f32 factor's, refinement takes it to f64.
                assert!(
                    relative_error_vec(&s.x0, &x_ref) < 1e-3,
                    "{method} {format}"
                );
                // b scaled by a power of two gives x scaled by it, exactly.
                let b2: Vec<f64> = b.iter().map(|v| v * 2f64.powi(-600)).collect();
                let s2 = gpu.spd_solve(&c, &b2, options).unwrap();
                for (x, x2) in s.x.iter().zip(&s2.x) {
                    assert_eq!(*x2, x * 2f64.powi(-600));
                }
            }
        }
    }
}

#[test]
fn c_of_any_scale_and_ill_conditioned_c_solve() {
    let gpu = common::gpu();
    let m = 30;
    let base = spd(5, m);
    let b = rhs(6, m);
    let x_ref = reference_solve(&base, &b);
    for scale in [1e-200f64, 1e-30, 1e40, 1e250] {
        let c = base.map(|v| v * scale);
        let s = gpu.spd_solve(&c, &b, SolveOptions::default()).unwrap();
        let x: Vec<f64> = s.x.iter().map(|v| v * scale).collect();
        let e = relative_error_vec(&x, &x_ref);
        assert!(s.converged && e < 1e-12, "scale {scale:e}: error {e:.2e}");
    }
    // κ ≈ 1e9: beyond f32's reach for x⁰, refined (or the f64 fallback) to κ·u.
    let q = reference::cholesky(&base.lower_triangle()).unwrap();
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-9.0 * i as f64 / (m - 1) as f64))
        .collect();
    let c = Matrix::from_fn(m, m, |i, j| {
        (0..m).map(|k| q[(i, k)] * d[k] * q[(j, k)]).sum::<f64>()
    });
    let x_ref = reference_solve(&c, &b);
    let s = gpu.spd_solve(&c, &b, SolveOptions::default()).unwrap();
    let e = relative_error_vec(&s.x, &x_ref);
    assert!(s.converged, "{s:?}");
    assert!(
        e < 1e-16 * s.condition * 100.0,
        "error {e:.2e}, κ {:.1e}",
        s.condition
    );
}

#[test]
fn not_positive_definite_and_bad_input_are_errors() {
    let gpu = common::gpu();
    let mut c = spd(8, 6);
    c[(3, 3)] = -1.0;
    let b = rhs(9, 6);
    for fallback in [false, true] {
        let e = gpu
            .spd_solve(&c, &b, SolveOptions::new().fallback(fallback))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Numerical(NumericalError::NotPositiveDefinite { column: 3, .. })
            ),
            "fallback {fallback}: {e}"
        );
    }
    let c = spd(8, 6);
    assert!(matches!(
        gpu.spd_solve(&c, &b[..5], SolveOptions::default()),
        Err(Error::Input(_))
    ));
    let mut bad = b.clone();
    bad[2] = f64::NAN;
    assert!(matches!(
        gpu.spd_solve(&c, &bad, SolveOptions::default()),
        Err(Error::Input(_))
    ));
    assert!(matches!(
        gpu.spd_solve(
            &Matrix::<f64>::zeros(2, 3),
            &b[..2],
            SolveOptions::default()
        ),
        Err(Error::Input(_))
    ));
    // The upper triangle is never read.
    let mut garbage = c.clone();
    garbage[(0, 5)] = f64::NAN;
    let x = gpu
        .spd_solve(&garbage, &b, SolveOptions::default())
        .unwrap()
        .x;
    assert!(relative_error_vec(&x, &reference_solve(&c, &b)) < 1e-12);
}

/// A C singular to double precision (B·Bᵀ of rank m − 1, plus a diagonal at rounding level) is
/// an error in the SPD solve's own terms: it names C, never least squares' AD²Aᵀ or A's rank,
/// which this problem does not have.
#[test]
fn a_singular_c_is_named_as_c() {
    let gpu = common::gpu();
    let m = 12;
    let b_mat = Matrix::from_fn(m, m - 1, |i, j| {
        ((i * 7 + j * 3) % 11) as f64 - 5.0 + (i == j) as u8 as f64
    });
    let product = Matrix::from_fn(m, m, |i, j| {
        (0..m - 1)
            .map(|k| b_mat[(i, k)] * b_mat[(j, k)])
            .sum::<f64>()
    });
    let norm = product.max_abs();
    let rhs: Vec<f64> = (0..m).map(|i| i as f64 + 1.0).collect();
    let mut named_c = 0;
    for delta in [1e-16, 1e-15, 2e-15, 5e-15] {
        let c = Matrix::from_fn(m, m, |i, j| {
            product[(i, j)] + if i == j { delta * norm } else { 0.0 }
        });
        match gpu.spd_solve(&c, &rhs, SolveOptions::default()) {
            Err(Error::Numerical(e)) => {
                let message = e.to_string();
                assert!(
                    !message.contains("AD²Aᵀ") && !message.contains("row rank"),
                    "{message}"
                );
                if let NumericalError::SingularToDouble { matrix, .. } = e {
                    assert_eq!(matrix, "C");
                    assert!(
                        message.starts_with("C is singular to double precision"),
                        "{message}"
                    );
                    named_c += 1;
                }
            }
            // Near the limit an ill-conditioned C may be solved: its estimate says how well.
            Ok(s) => assert!(
                s.condition > 1e13,
                "δ = {delta:e}: condition {:e}",
                s.condition
            ),
            Err(e) => panic!("δ = {delta:e}: {e}"),
        }
    }
    assert!(
        named_c > 0,
        "no δ reached the f64 factor's singularity test"
    );
}

/// Either stored triangle, NaN in the other, at orders around the tile widths: the tiled
/// method in full storage (C's triangle up in f64, its f32 copy and the residuals made on the
/// GPU) and in RFP (both on the CPU) solve to f64 accuracy, and in full storage both triangles
/// give the same x bit for bit.
#[test]
fn either_triangle_solves_with_the_residual_on_the_gpu() {
    use symraster::{SymmetricView, Triangle};
    let gpu = common::gpu();
    for m in [1, 2, 31, 32, 33, 63, 64, 65, 127, 129, 200] {
        let c = spd(300 + m as u64, m);
        let b = rhs(400 + m as u64, m);
        let x_ref = reference_solve(&c, &b);
        let poisoned = |keep: Triangle| {
            Matrix::from_fn(m, m, |i, j| match keep {
                Triangle::Lower if j > i => f64::NAN,
                Triangle::Upper if j < i => f64::NAN,
                _ => c[(i, j)],
            })
        };
        for format in [Format::Full, Format::Packed] {
            let options = SolveOptions::new().gpu(Options::new(format));
            let mut xs = Vec::new();
            for keep in [Triangle::Lower, Triangle::Upper] {
                let data = poisoned(keep);
                let view = SymmetricView::new(data.as_slice(), m, m, keep).unwrap();
                let s = gpu.spd_solve_view(view, &b, options).unwrap();
                assert!(
                    s.converged && s.fallback.is_none(),
                    "{format} {keep:?} m {m}: {s:?}"
                );
                let e = relative_error_vec(&s.x, &x_ref);
                assert!(
                    e < 1e-13 * (m as f64).sqrt().max(1.0),
                    "{format} {keep:?} m {m}: {e:.2e}"
                );
                xs.push(s.x);
            }
            // The GPU's residual reads the same values in the same order from either triangle.
            if format == Format::Full {
                assert_eq!(xs[0], xs[1], "{format} m {m}: the triangles disagree");
            }
        }
    }
}

/// Full storage split over several buffers (the per-buffer limit lowered through the tuning):
/// the f32 copy cannot be made on the GPU in one buffer, so the rows are rounded on the host,
/// and the solve is still f64-accurate and the same as the one-buffer solve's to roundoff.
#[test]
fn split_full_storage_solves_as_one_buffer_does() {
    use symraster::{Gpu, Method, Tuning};
    let tuning = Tuning {
        max_buffer_bytes: Some(120 * 1024),
        ..Tuning::default()
    };
    let split = Gpu::builder().tuning(tuning).build().unwrap();
    if !split.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", split.info().renderer);
        return;
    }
    let one = common::gpu();
    let m = 301;
    let c = spd(77, m);
    let b = rhs(78, m);
    let x_ref = reference_solve(&c, &b);
    let options = SolveOptions::new().gpu(Options::new(Format::Full).method(Method::Tiled));
    let s = split.spd_solve(&c, &b, options).unwrap();
    assert!(s.converged && s.fallback.is_none(), "{s:?}");
    let e = relative_error_vec(&s.x, &x_ref);
    assert!(e < 1e-13 * (m as f64).sqrt(), "split: error {e:.2e}");
    let s1 = one.spd_solve(&c, &b, options).unwrap();
    assert!(relative_error_vec(&s.x, &s1.x) < 1e-13 * (m as f64).sqrt());
}

/// The solution as compared bit for bit: every field but the timings, each float by its bits
/// (through its round-trip text, which tells NaN and −0 apart).
fn outcome(s: symraster::Result<symraster::Solution>) -> String {
    match s {
        Ok(s) => format!(
            "{:?}",
            symraster::Solution {
                timings: Default::default(),
                ..s
            }
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// An f32 C read through a view (either triangle, NaN in the other, around the tile widths;
/// graded, so ill-conditioned that the f64 fallback solves it, and with subnormal entries)
/// gives the same solution bit for bit as C widened to f64 first, on the GPU's residual path
/// (full storage, where C goes up in f32) and the host's (packed); so does `spd_solve` of an
/// f32 C and an f32 b.
#[test]
fn an_f32_c_solves_as_its_f64_widening_does() {
    use common::stored;
    use symraster::{SymmetricView, Triangle};
    let gpu = common::gpu();
    let mut cases: Vec<(String, Matrix<f32>)> = [1, 7, 33, 100, 129]
        .into_iter()
        .map(|m| {
            (
                format!("m {m}"),
                well_conditioned_spd(&mut rng(500 + m as u64), m),
            )
        })
        .collect();
    let m = 40;
    let base = well_conditioned_spd(&mut rng(600), m);
    let d: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-3.0 + 6.0 * i as f64 / (m - 1) as f64))
        .collect();
    let graded = Matrix::from_fn(m, m, |i, j| (d[i] * f64::from(base[(i, j)]) * d[j]) as f32);
    cases.push(("graded".into(), graded));
    let eigenvalues: Vec<f64> = (0..m)
        .map(|i| 10f64.powf(-8.0 * i as f64 / (m - 1) as f64))
        .collect();
    let ill = common::spd_with_eigenvalues(&eigenvalues, 601).map(|v| v as f32);
    cases.push(("ill-conditioned".into(), ill));
    // Near f32's smallest numbers: most entries below the diagonal subnormal (read as bits on
    // the GPU, never flushed).
    let tiny = well_conditioned_spd(&mut rng(602), 65).map(|v| v * 2f32.powi(-130));
    assert!(tiny.as_slice().iter().any(|v| v.is_subnormal()));
    cases.push(("subnormal".into(), tiny));
    for (name, c) in &cases {
        let m = c.rows();
        let b: Vec<f32> = rhs(700 + m as u64, m).iter().map(|&v| v as f32).collect();
        let b64: Vec<f64> = b.iter().map(|&v| f64::from(v)).collect();
        let wide = c.map(f64::from);
        for format in [Format::Full, Format::Packed] {
            let options = SolveOptions::new().gpu(Options::new(format));
            for triangle in [Triangle::Lower, Triangle::Upper] {
                let (single, stride) = stored(c, triangle, f32::NAN);
                let (double, _) = stored(&wide, triangle, f64::NAN);
                let single = SymmetricView::new(&single, m, stride, triangle).unwrap();
                let double = SymmetricView::new(&double, m, stride, triangle).unwrap();
                assert_eq!(
                    outcome(gpu.spd_solve_view(single, &b64, options)),
                    outcome(gpu.spd_solve_view(double, &b64, options)),
                    "{name} {format} {triangle:?}"
                );
            }
            assert_eq!(
                outcome(gpu.spd_solve(c, &b, options)),
                outcome(gpu.spd_solve(&wide, &b64, options)),
                "{name} {format}: spd_solve"
            );
        }
    }
}

/// The condition estimate, whose solves ride beside the refinement's corrections, is the 1-norm
/// condition number within Hager's bounds (a lower bound, within a factor of 3 here) for
/// well- and ill-conditioned C (more refinement steps to ride beside), f64 and f32 C.
#[test]
fn the_condition_estimate_beside_the_refinement_is_kappa_1() {
    let gpu = common::gpu();
    let norm_1 = |a: &Matrix<f64>| {
        (0..a.cols())
            .map(|j| (0..a.rows()).map(|i| a[(i, j)].abs()).sum::<f64>())
            .fold(0.0, f64::max)
    };
    for (m, condition) in [(40, 10.0f64), (150, 1e3), (150, 1e6), (97, 1e9)] {
        let eigenvalues: Vec<f64> = (0..m)
            .map(|k| condition.powf(-(k as f64) / (m - 1) as f64))
            .collect();
        let c = common::spd_with_eigenvalues(&eigenvalues, m as u64);
        let l = reference::cholesky(&c.lower_triangle()).unwrap();
        let columns: Vec<Vec<f64>> = (0..m)
            .map(|j| {
                let e: Vec<f64> = (0..m).map(|k| f64::from(u8::from(k == j))).collect();
                solve_with_factor(&l, &e)
            })
            .collect();
        let inverse = Matrix::from_fn(m, m, |i, j| columns[j][i]);
        let kappa = norm_1(&c) * norm_1(&inverse);
        let b = rhs(m as u64, m);
        let s = gpu.spd_solve(&c, &b, SolveOptions::default()).unwrap();
        assert!(
            s.condition <= 1.01 * kappa && s.condition >= kappa / 3.0,
            "m {m} κ₂ {condition:e}: estimate {:.3e}, κ₁ {kappa:.3e}, {} steps",
            s.condition,
            s.iterations
        );
        let (c32, b32) = (
            c.map(|v| v as f32),
            b.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        );
        let s32 = gpu.spd_solve(&c32, &b32, SolveOptions::default()).unwrap();
        let ratio = s32.condition / s.condition;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "m {m}: f32 C's estimate {ratio}×"
        );
    }
}
