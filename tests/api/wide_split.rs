//! A wider than a texture on the methods that draw: with GL_MAX_TEXTURE_SIZE lowered to 64
//! (through the tuning), A's columns go in blocks (64 columns for the faithful method, 256
//! for the blocked one), and assembly, factor and least squares match the f64 reference and
//! the tiled method's unsplit result to within rounding.

use crate::common::{U32, widen};
use symraster::least_squares::{relative_error_vec, solve_normal_equations_reference};
use symraster::{Format, Matrix, Method, Options, SolveOptions, problems, reference};

fn gpu() -> symraster::Gpu {
    let tuning = symraster::Tuning {
        max_texture_size: Some(64),
        ..symraster::Tuning::default()
    };
    symraster::Gpu::builder().tuning(tuning).build().unwrap()
}

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

#[test]
fn wide_a_on_the_drawing_methods_matches_f64_and_the_unsplit_tiled_result() {
    let gpu = gpu();
    assert_eq!(gpu.info().max_texture_size, 64);
    for (m, n) in [(5, 700), (17, 523)] {
        let (a, d) = product(m, n, 5 + m as u64);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d)).lower_triangle();
        let unsplit = gpu.methods().contains(&Method::Tiled).then(|| {
            gpu.assemble(&a, &d, Options::new(Format::Full).method(Method::Tiled))
                .unwrap()
                .lower_triangle()
        });
        for method in [Method::Faithful, Method::Blocked] {
            for format in [Format::Full, Format::Packed] {
                let what = format!("{method} {format:?} m {m} n {n}");
                let options = Options::new(format).method(method);
                let c = gpu
                    .assemble(&a, &d, options)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .lower_triangle();
                let e = symraster::relative_error(&c.to_f64(), &c_ref);
                assert!(e <= n as f64 * U32, "{what}: relative error {e:.2e}");
                if let Some(t) = &unsplit {
                    let e = symraster::relative_error(&c, t);
                    assert!(
                        e <= 4.0 * n as f64 * U32,
                        "{what}: {e:.2e} from the tiled C"
                    );
                }
                let l = gpu
                    .factor_product(&a, &d, options)
                    .unwrap_or_else(|e| panic!("{what}: factor: {e}"));
                let l = l.l().unwrap().to_f64();
                let llt = reference::multiply_lower_by_transpose(&l);
                let e = symraster::relative_error(&llt.lower_triangle(), &c_ref);
                assert!(e <= 4.0 * n as f64 * U32, "{what}: L·Lᵀ off C by {e:.2e}");
            }
        }
    }
}

#[test]
fn wide_least_squares_on_the_drawing_methods_converges_to_f64() {
    let gpu = gpu();
    let (m, n) = (4, 600);
    let mut rng = problems::rng(9);
    let a = problems::uniform_matrix(&mut rng, m, n).to_f64();
    let d: Vec<f64> = (0..n).map(|j| 0.25 + (j % 7) as f64 / 7.0).collect();
    let b: Vec<f64> = (0..n).map(|j| ((j * 37 % 101) as f64) / 101.0).collect();
    let x_ref = solve_normal_equations_reference(&a, &d, &b).unwrap();
    for method in [Method::Faithful, Method::Blocked] {
        let options = SolveOptions::new().gpu(Options::new(Format::Packed).method(method));
        let s = gpu
            .least_squares(&a, &d, &b, options)
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert!(s.converged, "{method}: criteria {:?}", s.criteria);
        let e = relative_error_vec(&s.x, &x_ref);
        assert!(e <= 1e-9, "{method}: error {e:.2e}");
    }
}
