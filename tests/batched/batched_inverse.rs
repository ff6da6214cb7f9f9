//! The batched solves as products with L⁻¹ (issue 28: `Plan::with_solves`,
//! TriangularSolves::Inverse: L⁻¹ formed in the factor's sweep, each solve two products)
//! against f64 references problem by problem, beside substitution: the fused least squares
//! and the SPD solve at n ∈ {1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128, 129} (128 and 129 with
//! the triangles in llvmpipe's global work buffer), a singular and an indefinite member whose
//! INFO must be the substitution path's, outputs NaN-poisoned before the launch, several
//! problems per group, and one batch with κ ≈ 1e4 where both paths' errors are compared.

use crate::common;

use crate::common::batched::{Problems, assert_agrees_with_default, default_least_squares, signed};

use crate::common::{max_relative_error as relative_error, widen};
use symraster::batched::BatchOptions;
use symraster::batched::device::{Inputs, Poison, run};
use symraster::batched::plan::{Job, Plan, TriangularSolves, WorkStorage, triangular_solves};
use symraster::least_squares::solve_with_factor;
use symraster::problems::{rng, well_conditioned_spd};
use symraster::{Matrix, reference};

const ORDERS: [usize; 12] = [1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128, 129];

const SOLVES: [TriangularSolves; 2] = [TriangularSolves::Substitution, TriangularSolves::Inverse];

/// `p` (a plan with `solves`), checked to be what its defines say.
fn with_solves(p: Plan, solves: TriangularSolves) -> Plan {
    assert_eq!(p.solves, solves, "n {}", p.n);
    assert_eq!(
        p.defines().contains("#define INVERSE_SOLVE\n"),
        solves == TriangularSolves::Inverse
    );
    assert_eq!(
        p.defines().contains("#define INVERSE_GLOBAL\n"),
        solves == TriangularSolves::Inverse && p.inverse_storage == WorkStorage::Global
    );
    p
}

#[test]
fn inverse_least_squares_matches_the_reference_and_the_substitution_info() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    for n in ORDERS {
        let count = if n > 64 { 4 } else { 5 };
        let k = 2 * n + 5;
        let problems = Problems::new(7 * n as u64, count, n, k);
        for refine in [1, 2] {
            let base = Plan::fused(Job::LeastSquares, n, k, refine, limits).unwrap();
            assert_eq!(base.solves, triangular_solves(n), "n {n}: the default");
            let mut infos = Vec::new();
            for solves in SOLVES {
                let plan = with_solves(base.with_solves(solves, limits).unwrap(), solves);
                let out = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan).unwrap();
                let shape = format!("n {n} refine {refine} {solves:?} {:?}", plan.residual);
                for p in 0..count {
                    let x = &out.x[p * n..(p + 1) * n];
                    assert_eq!(out.info[p], problems.info(p), "{shape} p {p}");
                    if out.info[p] != 0 {
                        assert!(x.iter().all(|v| v.is_nan()), "{shape} p {p}");
                        continue;
                    }
                    let e = relative_error(x, &problems.x(p));
                    assert!(e < 1e-8 * (n as f64).max(4.0), "{shape} p {p}: {e:.2e}");
                }
                infos.push(out.info);
            }
            assert_eq!(infos[0], infos[1], "n {n}");
        }
    }
}

/// SPD matrices with garbage above the diagonal; problem 2 has C(n − 1, n − 1) = −1.
fn spd_inputs(seed: u64, count: usize, n: usize) -> (Vec<f32>, Vec<Matrix<f64>>) {
    let mut data = Vec::new();
    let mut lower = Vec::new();
    for p in 0..count {
        let mut c = well_conditioned_spd(&mut rng(seed + p as u64), n).to_f64();
        if p == 2 {
            c[(n - 1, n - 1)] = -1.0;
        }
        lower.push(c.lower_triangle().to_f32().to_f64());
        for i in 0..n {
            for j in i + 1..n {
                c[(i, j)] = if (i + j) % 2 == 0 { f64::NAN } else { 1e30 };
            }
        }
        data.extend(c.as_slice().iter().map(|&v| v as f32));
    }
    (data, lower)
}

/// The SPD solve both ways, also with several problems per group (the last group not full):
/// the failing member's INFO n and NaN x, the others against the f64 reference.
#[test]
fn inverse_spd_solve_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let mut grouped = 0;
    for n in ORDERS {
        let count = if n > 64 { 3 } else { 5 };
        let (c, lower) = spd_inputs(40 * n as u64, count, n);
        let b = signed(n as u64 + 1, count * n);
        let inputs = Inputs {
            c: Some(&c),
            b: Some(&b),
            ..Inputs::default()
        };
        let base = Plan::new(Job::SpdSolve, n, 0, 1, limits).unwrap();
        let mut plans: Vec<Plan> = SOLVES
            .into_iter()
            .map(|s| with_solves(base.with_solves(s, limits).unwrap(), s))
            .collect();
        if let Ok(p) = plans[1].with_problems_per_group(2, limits) {
            grouped += 1;
            plans.push(with_solves(p, TriangularSolves::Inverse));
        }
        for plan in plans {
            let out = run(&kernels, &plan, &inputs, count, Poison::Nan).unwrap();
            let shape = format!("n {n} {:?} P {}", plan.solves, plan.problems_per_group);
            for (p, low) in lower.iter().enumerate() {
                let x = &out.x[p * n..(p + 1) * n];
                if p == 2 {
                    assert_eq!(out.info[p], n as i32, "{shape}");
                    assert!(x.iter().all(|v| v.is_nan()), "{shape}");
                    continue;
                }
                assert_eq!(out.info[p], 0, "{shape} p {p}");
                let want = solve_with_factor(
                    &reference::cholesky(low).unwrap(),
                    &widen(&b[p * n..(p + 1) * n]),
                );
                let e = relative_error(x, &want);
                assert!(e < 1e-9 * (n as f64).max(4.0), "{shape} p {p}: {e:.2e}");
            }
        }
    }
    assert!(grouped >= 6, "{grouped} orders ran two problems per group");
}

/// Q·diag(λ)·Qᵀ with λ geometric from 1 to 1/κ and Q a product of two Householder
/// reflections (f64, then rounded to f32 as the GPU holds it).
fn conditioned_spd(seed: u64, n: usize, kappa: f64) -> Matrix<f64> {
    let v = widen(&signed(seed, n));
    let w = widen(&signed(seed + 1, n));
    let reflect = |m: &Matrix<f64>, u: &[f64]| {
        // H·m·H with H = I − 2uuᵀ/uᵀu.
        let s = 2.0 / u.iter().map(|x| x * x).sum::<f64>();
        let h = Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j)) - s * u[i] * u[j]);
        let hm = Matrix::from_fn(n, n, |i, j| {
            (0..n).map(|l| h[(i, l)] * m[(l, j)]).sum::<f64>()
        });
        Matrix::from_fn(n, n, |i, j| {
            (0..n).map(|l| hm[(i, l)] * h[(l, j)]).sum::<f64>()
        })
    };
    let lambda = |i: usize| kappa.powf(-(i as f64) / (n - 1) as f64);
    let d = Matrix::from_fn(n, n, |i, j| if i == j { lambda(i) } else { 0.0 });
    let c = reflect(&reflect(&d, &v), &w);
    Matrix::from_fn(n, n, |i, j| f64::from(c[(i, j)] as f32))
}

/// A moderately ill-conditioned batch (κ ≈ 1e4): with one refinement step the products with
/// L⁻¹ stay as accurate as substitution (within a factor of 10 of its worst error), both
/// within κ·1e-10 of the f64 solution.
#[test]
fn inverse_stays_as_accurate_as_substitution_at_kappa_1e4() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let kappa = 1e4;
    for n in [16, 32, 64] {
        let count = 4;
        let cs: Vec<Matrix<f64>> = (0..count)
            .map(|p| conditioned_spd(100 * n as u64 + p as u64, n, kappa))
            .collect();
        let c: Vec<f32> = cs
            .iter()
            .flat_map(|m| m.as_slice().iter().map(|&v| v as f32))
            .collect();
        let b = signed(n as u64 + 9, count * n);
        let inputs = Inputs {
            c: Some(&c),
            b: Some(&b),
            ..Inputs::default()
        };
        let base = Plan::new(Job::SpdSolve, n, 0, 1, limits).unwrap();
        let mut worst = Vec::new();
        for solves in SOLVES {
            let plan = with_solves(base.with_solves(solves, limits).unwrap(), solves);
            let out = run(&kernels, &plan, &inputs, count, Poison::Nan).unwrap();
            let mut max = 0.0f64;
            for (p, m) in cs.iter().enumerate() {
                assert_eq!(out.info[p], 0, "n {n} {solves:?} p {p}");
                let want =
                    solve_with_factor(&reference::cholesky(m).unwrap(), &widen(&b[p * n..][..n]));
                max = max.max(relative_error(&out.x[p * n..(p + 1) * n], &want));
            }
            assert!(max < kappa * 1e-10, "n {n} {solves:?}: {max:.2e}");
            worst.push(max);
        }
        eprintln!(
            "n {n}, κ 1e4: substitution {:.2e}, inverse {:.2e}",
            worst[0], worst[1]
        );
        assert!(
            worst[1] <= 10.0 * worst[0] + 1e-13,
            "n {n}: inverse {:.2e} against substitution {:.2e}",
            worst[1],
            worst[0]
        );
    }
}

/// The public API takes the default solves, and its answers agree with substitution's to
/// within rounding; the Cholesky job refuses solves (it has none).
#[test]
fn the_default_solves_agree_with_substitution() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    for n in [1, 8, 9, 32, 128] {
        assert_eq!(
            triangular_solves(n),
            TriangularSolves::Substitution,
            "n {n}"
        );
    }
    let (n, count) = (32, 5);
    let problems = Problems::new(11, count, n, 2 * n);
    let default = default_least_squares(&kernels, &problems, count);
    let plan = Plan::fused(Job::LeastSquares, n, 2 * n, 1, limits).unwrap();
    assert_eq!(plan.solves, triangular_solves(n));
    let other = plan
        .with_solves(TriangularSolves::Substitution, limits)
        .unwrap();
    let sub = run(&kernels, &other, &problems.inputs(), count, Poison::Nan).unwrap();
    assert_agrees_with_default(&sub, &default, count, n);
    let factor = Plan::new(Job::Cholesky, n, 0, 0, limits).unwrap();
    let refused = factor
        .with_solves(TriangularSolves::Inverse, limits)
        .unwrap_err();
    assert!(
        refused.to_string().contains("cannot take Inverse"),
        "{refused}"
    );
    assert!(!factor.defines().contains("INVERSE"));
}
