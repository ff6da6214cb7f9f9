//! Weighted least squares on the GPU with mixed-precision refinement (Algorithm 1, section 5.3),
//! checked against double-precision CPU solves.

use symraster::internal::GpuInternals;
use symraster::least_squares::{Criterion, Fallback, relative_error_vec};
use symraster::least_squares::{solve_normal_equations_faer, solve_normal_equations_reference};
use symraster::problems::{ill_conditioned_least_squares, random_least_squares};
use symraster::{
    Error, Format, Gpu, InputError, Matrix, Method, NumericalError, SolveOptions, SpdFactor,
};

/// Every method this device runs, each with `options` (`auto` alone would cover one of them,
/// and the tiled method's end-to-end GPU solve differs from the others' read-back factor).
fn each_method(gpu: &Gpu, options: SolveOptions) -> Vec<(Method, SolveOptions)> {
    gpu.methods()
        .into_iter()
        .map(|m| (m, options.gpu(options.gpu.method(m))))
        .collect()
}

#[test]
fn refined_solution_matches_double_cpu_solve() {
    let gpu = Gpu::new().unwrap();
    for m in [16, 64] {
        let p = random_least_squares(11, m);
        let s = gpu
            .least_squares(&p.a, &p.d, &p.b, SolveOptions::paper())
            .unwrap();
        let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
        let x0_error = relative_error_vec(&s.x0, &x_cpu);
        let error = relative_error_vec(&s.x, &x_cpu);
        assert!(s.converged, "m = {m}: criteria {:?}", s.criteria);
        assert!(error <= 1e-10, "m = {m}: refined error {error:.2e}");
        // x⁰ comes from the f32 GPU factor: single-precision accuracy, not double.
        assert!(
            x0_error > 1e-9 && x0_error < 1e-2,
            "m = {m}: x⁰ error {x0_error:.2e} is not in the single-precision range"
        );
        assert!(error < x0_error / 1e3, "m = {m}: refinement did not help");
        // The report is consistent: one residual and criterion per iteration, the last ≤ ε.
        assert_eq!(s.criterion, Criterion::Paper);
        assert_eq!(s.fallback, None);
        assert_eq!(s.residuals.len(), s.iterations);
        assert_eq!(s.criteria.len(), s.iterations);
        assert!(*s.criteria.last().unwrap() <= 1e-8);
        assert!(s.criteria[..s.iterations - 1].iter().all(|&c| c > 1e-8));
        assert!(s.timings.x0 <= s.timings.total && s.timings.factor <= s.timings.x0);
    }
}

#[test]
fn plain_reference_agrees_at_small_order() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(5, 12);
    let s = gpu
        .least_squares(&p.a, &p.d, &p.b, SolveOptions::new())
        .unwrap();
    let x_ref = solve_normal_equations_reference(&p.a, &p.d, &p.b).unwrap();
    let error = relative_error_vec(&s.x, &x_ref);
    assert!(
        error <= 1e-10,
        "refined vs Algorithm 4 reference: {error:.2e}"
    );
}

#[test]
fn residuals_contract_for_random_problem() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(12, 48);
    // Algorithm 1: the f32 factor's refinement (the f64 factor's x⁰ meets the test at once).
    let single = SolveOptions::new().spd_factor(SpdFactor::Single);
    let s = gpu.least_squares(&p.a, &p.d, &p.b, single).unwrap();
    assert!(s.iterations >= 2, "{:?}", s.residuals);
    for w in s.residuals.windows(2) {
        assert!(w[1] < w[0] / 10.0, "residuals {:?}", s.residuals);
    }
}

#[test]
fn ill_conditioned_needs_more_iterations() {
    let gpu = Gpu::new().unwrap();
    let m = 64;
    let random = random_least_squares(21, m);
    let ill = ill_conditioned_least_squares(21, m);
    // Algorithm 1's refinement from the f32 factor.
    let opts = SolveOptions::new().spd_factor(SpdFactor::Single);
    let s_random = gpu
        .least_squares(&random.a, &random.d, &random.b, opts)
        .unwrap();
    let s_ill = gpu.least_squares(&ill.a, &ill.d, &ill.b, opts).unwrap();
    assert!(s_random.converged && s_ill.converged);
    assert!(
        s_ill.iterations > s_random.iterations,
        "ill-conditioned {} iterations, random {}",
        s_ill.iterations,
        s_random.iterations
    );
    let x_cpu = solve_normal_equations_faer(&ill.a, &ill.d, &ill.b).unwrap();
    let x0_error = relative_error_vec(&s_ill.x0, &x_cpu);
    let error = relative_error_vec(&s_ill.x, &x_cpu);
    assert!(error <= 1e-8, "ill-conditioned refined error {error:.2e}");
    assert!(
        x0_error > relative_error_vec(&s_random.x0, &solve_random(&random)),
        "the ill-conditioned x⁰ should be worse"
    );
}

fn solve_random(p: &symraster::problems::LeastSquaresProblem) -> Vec<f64> {
    solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap()
}

#[test]
fn rank_deficient_a_is_reported_not_solved() {
    let gpu = Gpu::new().unwrap();
    for (m, row) in [(8, 5), (32, 20)] {
        let mut p = random_least_squares(31, m);
        // Row `row` repeats row `row − 1`: AD²Aᵀ is singular.
        for k in 0..p.a.cols() {
            p.a[(row, k)] = p.a[(row - 1, k)];
        }
        for (method, opts) in each_method(&gpu, SolveOptions::new()) {
            match gpu.least_squares(&p.a, &p.d, &p.b, opts) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. }))
                | Err(Error::Numerical(NumericalError::NumericallySingular { column, .. }))
                | Err(Error::Numerical(NumericalError::SingularToDouble { column, .. })) => {
                    assert_eq!(column, row, "{method} m = {m}: failing column")
                }
                other => panic!(
                    "{method} m = {m}: expected a not-positive-definite error, got {other:?}"
                ),
            }
        }
    }
}

#[test]
fn reaching_the_limit_is_reported() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(41, 32);
    // From the f32 factor's x⁰, which one step improves on.
    let opts = SolveOptions::new()
        .spd_factor(SpdFactor::Single)
        .epsilon(1e-300)
        .max_iterations(1)
        .fallback(false);
    let s = gpu.least_squares(&p.a, &p.d, &p.b, opts).unwrap();
    assert!(!s.converged);
    assert_eq!(s.fallback, None);
    assert_eq!(s.iterations, 1);
    assert_eq!(s.residuals.len(), 1);
    assert!(s.criteria[0] > 1e-300);
    // One step still improved on x⁰.
    let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    assert!(relative_error_vec(&s.x, &x_cpu) < relative_error_vec(&s.x0, &x_cpu));
}

#[test]
fn bad_inputs_give_typed_errors() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(51, 4);
    let opts = SolveOptions::new();
    assert!(matches!(
        gpu.least_squares(&p.a, &p.d[..7], &p.b, opts),
        Err(Error::Input(InputError::Shape(_)))
    ));
    assert!(matches!(
        gpu.least_squares(&p.a, &p.d, &p.b[..3], opts),
        Err(Error::Input(InputError::Shape(_)))
    ));
    let mut a = p.a.clone();
    a[(2, 3)] = f64::NAN;
    assert!(matches!(
        gpu.least_squares(&a, &p.d, &p.b, opts),
        Err(Error::Input(InputError::NonFinite { .. }))
    ));
    let mut a_inf = p.a.clone();
    a_inf[(1, 1)] = 1e300; // finite in f64, but no power-of-two scale brings A into f32
    a_inf[(2, 2)] = 1e-300;
    assert!(matches!(
        gpu.least_squares(&a_inf, &p.d, &p.b, opts),
        Err(Error::Input(InputError::NonFinite { .. }))
            | Err(Error::Numerical(NumericalError::OutOfRange { .. }))
    ));
    let empty = Matrix::<f64>::zeros(0, 0);
    assert!(matches!(
        gpu.least_squares(&empty, &[], &[], opts),
        Err(Error::Input(InputError::Empty { .. }))
    ));
    assert!(matches!(
        gpu.least_squares(&p.a, &p.d, &p.b, opts.max_iterations(0)),
        Err(Error::Input(InputError::InvalidOption(_)))
    ));
}

/// Packed format (section 3.3) through the same call, odd and even orders: as accurate.
#[test]
fn packed_format_solves_too() {
    let gpu = Gpu::new().unwrap();
    for m in [33, 34] {
        let p = random_least_squares(61, m);
        let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
        for (method, opts) in each_method(&gpu, SolveOptions::new().format(Format::Packed)) {
            let s = gpu.least_squares(&p.a, &p.d, &p.b, opts).unwrap();
            let error = relative_error_vec(&s.x, &x_cpu);
            let x0_error = relative_error_vec(&s.x0, &x_cpu);
            assert!(s.converged, "{method} m = {m}");
            assert!(
                error <= 1e-10,
                "{method} m = {m}: refined error {error:.2e}"
            );
            assert!(
                x0_error > 1e-9 && x0_error < 1e-2,
                "{method} m = {m}: x⁰ error {x0_error:.2e}"
            );
        }
    }
}

/// The default test is the normwise backward error, which does not see the data's scale: the
/// same problem with A scaled by s = 10⁻⁶ … 10⁶ (x scales by 1/s) reaches the same accuracy in
/// the same number of steps, where the paper's ‖r‖₂/‖x‖₂ rule stops at different points.
#[test]
fn default_stopping_rule_does_not_depend_on_scale() {
    let gpu = Gpu::new().unwrap();
    let base = ill_conditioned_least_squares(71, 48);
    let x_cpu = solve_normal_equations_faer(&base.a, &base.d, &base.b).unwrap();
    for (method, opts) in each_method(&gpu, SolveOptions::new()) {
        let paper_opts = SolveOptions::paper().gpu(opts.gpu);
        let mut default_steps = Vec::new();
        let mut paper_steps = Vec::new();
        for exponent in [-6, -3, 0, 3, 6] {
            let scale = 10f64.powi(exponent);
            let mut p = base.clone();
            for v in p.a.as_mut_slice() {
                *v *= scale;
            }
            let s = gpu.least_squares(&p.a, &p.d, &p.b, opts).unwrap();
            let expected: Vec<f64> = x_cpu.iter().map(|x| x / scale).collect();
            let error = relative_error_vec(&s.x, &expected);
            assert!(
                s.converged && s.fallback.is_none(),
                "{method} scale 1e{exponent}"
            );
            assert!(
                s.backward_error <= s.tolerance,
                "{method} scale 1e{exponent}"
            );
            // κ(C) ≈ 1e7 here: the f64 solve itself is good to about κ·u ≈ 1e-9.
            assert!(
                error <= 1e-8,
                "{method} scale 1e{exponent}: relative error {error:.2e} (forward estimate {:.2e})",
                s.forward_error_estimate
            );
            assert!(
                s.forward_error_estimate >= error / 10.0,
                "{method} scale 1e{exponent}: the estimate {:.2e} should bound the error {error:.2e}",
                s.forward_error_estimate
            );
            default_steps.push(s.iterations);
            let paper = gpu.least_squares(&p.a, &p.d, &p.b, paper_opts).unwrap();
            paper_steps.push(paper.iterations);
        }
        let spread = |v: &[usize]| v.iter().max().unwrap() - v.iter().min().unwrap();
        assert!(
            spread(&default_steps) <= 1,
            "{method} steps by scale: {default_steps:?}"
        );
        assert!(
            spread(&paper_steps) >= 2,
            "{method}: the paper's rule should depend on the scale: {paper_steps:?}"
        );
    }
}

/// Refinement that cannot reach its test hands over to an f64 Cholesky on the CPU and says so.
#[test]
fn stagnation_and_the_limit_fall_back_to_double() {
    let gpu = Gpu::new().unwrap();
    let p = random_least_squares(81, 40);
    let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    // The f32 factor's x⁰ (the f64 factor's meets the default test before any step:
    // least_squares_double.rs).
    let single = SolveOptions::new().spd_factor(SpdFactor::Single);
    for (method, opts) in each_method(&gpu, single) {
        // A zero tolerance cannot be met: the corrections stop shrinking at rounding level.
        let s = gpu
            .least_squares(&p.a, &p.d, &p.b, opts.tolerance(0.0))
            .unwrap();
        assert!(
            matches!(s.fallback, Some(Fallback::Stagnated { .. })),
            "{method}: {:?}",
            s.fallback
        );
        assert!(s.iterations < 10 && !s.converged);
        // x from the f64 factor, refined in f64: as good as faer's x_CPU (κ·u ≈ 1e-13).
        assert!(relative_error_vec(&s.x, &x_cpu) <= 1e-12);
        // One step is not enough for the default test: the limit hands over, and the f64 solve meets it.
        let s = gpu
            .least_squares(&p.a, &p.d, &p.b, opts.max_iterations(1))
            .unwrap();
        assert_eq!(
            (s.iterations, s.fallback),
            (1, Some(Fallback::IterationLimit))
        );
        assert!(s.converged && s.backward_error <= s.tolerance);
        assert!(relative_error_vec(&s.x, &x_cpu) <= 1e-12);
        // Without the fallback the same call reports the limit instead.
        let s = gpu
            .least_squares(&p.a, &p.d, &p.b, opts.max_iterations(1).fallback(false))
            .unwrap();
        assert!(!s.converged && s.fallback.is_none());
    }
}

/// Data whose C = AD²Aᵀ leaves f32's range (overflow at 1e20·A, underflow at 1e-25·A) is
/// scaled by powers of two for the GPU and solved as accurately as at unit scale.
#[test]
fn data_outside_single_range_is_scaled_not_refused() {
    let gpu = Gpu::new().unwrap();
    let base = random_least_squares(91, 24);
    let x_cpu = solve_normal_equations_faer(&base.a, &base.d, &base.b).unwrap();
    for (a_scale, d_scale) in [(1e20, 1.0), (1e-25, 1.0), (1.0, 1e300), (1.0, 1e-300)] {
        let mut p = base.clone();
        for v in p.a.as_mut_slice() {
            *v *= a_scale;
        }
        for v in &mut p.d {
            *v *= d_scale;
        }
        let expected: Vec<f64> = x_cpu.iter().map(|x| x / a_scale).collect();
        for (method, opts) in each_method(&gpu, SolveOptions::new()) {
            let s = gpu.least_squares(&p.a, &p.d, &p.b, opts).unwrap();
            let error = relative_error_vec(&s.x, &expected);
            assert!(
                s.converged && s.fallback.is_none(),
                "{method} A·{a_scale:e}, d·{d_scale:e}"
            );
            assert!(
                error <= 1e-12,
                "{method} A·{a_scale:e}, d·{d_scale:e}: error {error:.2e}"
            );
        }
    }
}

/// Algorithm 1's residual evaluated on the GPU in f64 agrees with the CPU's to double
/// precision, for odd and even sizes, one row, and more rows than one dispatch's groups cover
/// in a pass (the row loop).
#[test]
fn gpu_and_cpu_residuals_agree() {
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", gpu.info().renderer);
        return;
    }
    // m = 400 (n = 800) cuts Aᵀx into row chunks of several rows (262144 invocations aimed for).
    for m in [1, 2, 3, 17, 64, 129, 400] {
        let p = random_least_squares(40 + m as u64, m);
        let eq = symraster::least_squares::NormalEquations::new(&p.a, &p.d, &p.b);
        let device = gpu.device_residual(&p.a, &p.d, &p.b).unwrap();
        let scale = eq.rhs().iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let close = |got: &[f64], want: &[f64], what: &str| {
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-13 * scale.max(1.0),
                    "m = {m}, {what}[{i}]: GPU {g:e}, CPU {w:e}"
                );
            }
        };
        close(device.rhs(), eq.rhs(), "AD²b");
        let x: Vec<f64> = (0..m)
            .map(|i| (i as f64 * 0.37).sin() / (m as f64))
            .collect();
        close(&device.residual(&x).unwrap(), &eq.residual(&x), "r");
        // x = 0 leaves r = AD²b exactly.
        close(&device.residual(&vec![0.0; m]).unwrap(), eq.rhs(), "r(0)");
        // The condition estimate's products: C·x.
        let cx = eq.apply(&x);
        let cx_scale = cx.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        for (i, (g, w)) in device.apply(&x).unwrap().iter().zip(&cx).enumerate() {
            assert!(
                (g - w).abs() <= 1e-13 * cx_scale.max(1.0),
                "m = {m}, Cx[{i}]: GPU {g:e}, CPU {w:e}"
            );
        }
        // A rounded to single precision on the GPU, scaled by powers of two, is the CPU's
        // rounding exactly (the factor's input does not depend on where it was made).
        for exponent in [0, -7, 12] {
            let got = device
                .single_precision_a(exponent)
                .unwrap()
                .download()
                .unwrap();
            let want = p.a.map(|v| (v * 2f64.powi(exponent)) as f32);
            assert_eq!(got.as_slice(), want.as_slice(), "m = {m}, 2^{exponent}·A");
        }
        assert!(
            device.residual(&[1.0; 1000]).is_err(),
            "wrong length is refused"
        );
    }
}

/// Designs with exact zeros (one-hot columns, B-spline-like bands, a Vandermonde at t = 0,
/// a −0.0 among them): every method's first solution, from the f32 factor, is within single
/// precision of the f64 one (κ₁(C)·u₃₂, the forward error of an f32 Cholesky solve, to a small
/// factor), with no fallback. The tiled path rounds A to f32 on the device,
/// where llvmpipe's `ldexp` of a double zero is not zero.
#[test]
fn designs_with_exact_zeros_give_a_single_precision_first_solution() {
    let gpu = Gpu::new().unwrap();
    let n = 24;
    let one_hot = Matrix::from_fn(3, n, |i, j| if j % 3 == i { 1.0 } else { 0.0 });
    let bands = Matrix::from_fn(4, n, |i, j| {
        let t = j as f64 / (n - 1) as f64 * 3.0 - i as f64;
        if t.abs() < 1.0 {
            1.0 - t.abs()
        } else if t == 1.0 {
            -0.0
        } else {
            0.0
        }
    });
    let vandermonde = Matrix::from_fn(4, n, |i, j| (j as f64 / n as f64).powi(i as i32));
    let b: Vec<f64> = (0..n).map(|j| 1.0 + (j as f64 * 0.7).sin()).collect();
    let d: Vec<f64> = (0..n).map(|j| 1.0 + (j % 4) as f64 * 0.25).collect();
    for (name, a) in [
        ("one-hot", one_hot),
        ("bands", bands),
        ("Vandermonde", vandermonde),
    ] {
        let x_ref = solve_normal_equations_reference(&a, &d, &b).unwrap();
        for (method, options) in each_method(&gpu, SolveOptions::default()) {
            let s = gpu.least_squares(&a, &d, &b, options).unwrap();
            let x0_error = relative_error_vec(&s.x0, &x_ref);
            let bound = 4.0 * s.condition * f64::from(f32::EPSILON) / 2.0;
            assert!(
                x0_error < bound.max(1e-6),
                "{name}, {method:?}: x⁰ error {x0_error:.2e} against {bound:.2e}, κ₁ {:.2e} \
                 (x⁰ {:?}, x {x_ref:?})",
                s.condition,
                s.x0
            );
            assert_eq!(
                s.fallback, None,
                "{name}, {method:?}: x⁰ error {x0_error:.2e}, {} steps",
                s.iterations
            );
            let error = relative_error_vec(&s.x, &x_ref);
            assert!(
                error < 1e-9,
                "{name}, {method:?}: refined error {error:.2e}"
            );
        }
    }
}

/// The condition estimate's products several at a time (`apply_each`): bit for bit the
/// products one at a time, read back in one read.
#[test]
fn products_applied_each_are_the_single_products() {
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", gpu.info().renderer);
        return;
    }
    for m in [1, 7, 31, 32, 33, 100, 129] {
        let p = random_least_squares(60 + m as u64, m);
        let device = gpu.device_residual(&p.a, &p.d, &p.b).unwrap();
        let x: Vec<f64> = (0..m).map(|i| (i as f64 * 0.37).sin()).collect();
        let ones = vec![1.0 / m as f64; m];
        let vs = [&x[..], &ones, &x];
        let alone: Vec<Vec<f64>> = vs.iter().map(|v| device.apply(v).unwrap()).collect();
        let reads = symraster::gl::read_backs();
        let each = device.apply_each(&vs).unwrap();
        assert_eq!(symraster::gl::read_backs(), reads + 1, "m = {m}");
        let bits = |v: &[Vec<f64>]| -> Vec<Vec<u64>> {
            v.iter()
                .map(|v| v.iter().map(|x| x.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&each), bits(&alone), "m = {m}");
    }
}
