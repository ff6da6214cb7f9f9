//! The fused least squares' residual with A resident in shared memory or read directly
//! (`Plan::with_residual`; Residual::Resident: A, d and b staged once, the
//! residual from shared memory; Residual::Direct: the rows' sums from global memory without
//! staging) against f64 references problem by problem, beside the restaged residual, in the
//! fused least squares and the assembly alone: n ∈ {1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128,
//! 129} (where A does not fit in llvmpipe's shared memory the refusal is checked), a singular
//! member (a zero row of A: pivot exactly 0) and an indefinite one (negative weights)
//! failing alone among the others, outputs NaN-poisoned before the launch, k not a multiple
//! of the staged columns and k < n, one to three refinement steps, several problems per
//! group with the last group not full.

use crate::common;

use crate::common::batched::{
    Problems, assert_agrees_with_default, check_assembly, check_least_squares as check_members,
    default_least_squares,
};

use symraster::batched::BatchOptions;
use symraster::batched::device::{Inputs, Poison, run};
use symraster::batched::plan::{
    AssemblyTiling, Job, Plan, Residual, StagedLoads, resident_columns, residual,
};
use symraster::gl::ComputeLimits;

const ORDERS: [usize; 12] = [1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128, 129];

const RESIDUALS: [Residual; 3] = [Residual::Restaged, Residual::Resident, Residual::Direct];

/// `plan` with `residual`, or None where a resident A is refused: then the message says
/// so and A (with the triangle) really passes the device's shared memory.
fn chosen(plan: Plan, residual: Residual, limits: &ComputeLimits) -> Option<Plan> {
    match plan.with_residual(residual, limits) {
        Ok(p) => {
            assert_eq!(p.residual, residual);
            assert_eq!(
                p.defines().contains("#define RESIDENT\n"),
                residual == Residual::Resident
            );
            assert_eq!(
                p.defines().contains("#define DIRECT_RESIDUAL\n"),
                residual == Residual::Direct
            );
            Some(p)
        }
        Err(e) => {
            assert_eq!(residual, Residual::Resident, "n {}: {e}", plan.n);
            assert!(e.to_string().contains("cannot keep A resident"), "{e}");
            // What a resident problem declares in shared memory: the vector V, the triangle,
            // A (rows padded by one) and d; the least squares' x (f64), b and the residuals.
            let (n, kr) = (plan.n, resident_columns(plan.k, plan.staged_columns));
            let mut bytes = 4 * n + 4 * n * (n + 1) / 2 + 4 * n * (kr + 1) + 4 * kr;
            if plan.job == Job::LeastSquares {
                bytes += 8 * n + 4 * kr + 8 * kr;
            }
            assert!(
                plan.problems_per_group * bytes > limits.max_shared_bytes as usize,
                "n {} k {} refused: {e}",
                plan.n,
                plan.k
            );
            None
        }
    }
}

/// Runs a least-squares plan on `problems` (poisoned outputs) and checks every member: the
/// failing ones' INFO and NaN x, the others' x against the f64 reference.
fn check_least_squares(problems: &Problems, count: usize, plan: &Plan, kernels_run: &Runner) {
    let n = problems.n;
    let shape = format!(
        "n {n} k {} {:?} refine {} KC {} T {} P {}",
        problems.k,
        plan.residual,
        plan.refine,
        plan.staged_columns,
        plan.threads,
        plan.problems_per_group,
    );
    let out = kernels_run(plan, &problems.inputs(), count);
    check_members(problems, count, &out, &shape);
}

type Runner<'a> = dyn Fn(&Plan, &Inputs<'_>, usize) -> symraster::batched::device::Outputs + 'a;

#[test]
fn resident_least_squares_matches_the_reference_per_problem() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let runner = |plan: &Plan, inputs: &Inputs<'_>, count: usize| {
        run(&kernels, plan, inputs, count, Poison::Nan).unwrap()
    };
    let mut resident_orders = Vec::new();
    for n in ORDERS {
        let count = if n > 64 { 4 } else { 5 };
        // k a multiple of 16 or not (the resident columns padded with zeros).
        for k in [2 * n, 2 * n + 5] {
            let problems = Problems::new(n as u64 + k as u64, count, n, k);
            for refine in [1, 2] {
                let base = Plan::fused(Job::LeastSquares, n, k, refine, limits).unwrap();
                for r in RESIDUALS {
                    if let Some(plan) = chosen(base, r, limits) {
                        if r == Residual::Resident {
                            resident_orders.push(n);
                        }
                        check_least_squares(&problems, count, &plan, &runner);
                    }
                }
            }
        }
    }
    // The resident A ran at every order up to 32 at least.
    for n in [1, 2, 3, 7, 8, 16, 31, 32] {
        assert!(resident_orders.contains(&n), "n {n}: {resident_orders:?}");
    }
}

/// Several problems per group (the last group not full), other invocation counts (T/n not
/// whole) and wider staged blocks, three refinement steps, with A resident and read
/// directly; the direct residual also with more observations than invocations (several
/// blocks of T).
#[test]
fn resident_group_shapes_match_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let runner = |plan: &Plan, inputs: &Inputs<'_>, count: usize| {
        run(&kernels, plan, inputs, count, Poison::Nan).unwrap()
    };
    let count = 5;
    let mut ran = 0;
    for (n, k) in [(8, 19), (8, 75), (17, 37), (17, 150), (32, 67)] {
        let problems = Problems::new(300 + n as u64, count, n, k);
        let shapes = [(32, 3, 16), (64, 2, 16), (128, 1, 32), (64, 1, 64)];
        for ((threads, problems_per_group, columns), residual) in shapes
            .into_iter()
            .flat_map(|s| [(s, Residual::Resident), (s, Residual::Direct)])
        {
            let Ok(plan) = Plan::fused(Job::LeastSquares, n, k, 3, limits)
                .unwrap()
                .with_problems_per_group(1, limits)
                .and_then(|p| p.with_threads(threads, limits))
                .and_then(|p| p.with_staged_columns(columns, limits))
                .and_then(|p| p.with_problems_per_group(problems_per_group, limits))
            else {
                continue;
            };
            let Some(plan) = chosen(plan, residual, limits) else {
                continue;
            };
            ran += 1;
            check_least_squares(&problems, count, &plan, &runner);
        }
    }
    assert!(ran >= 20, "{ran} shapes ran");
}

/// The assembly alone with A resident: every entry written (zeros above the diagonal), the
/// lower triangle against the f64 reference, k not a multiple of the staged columns and
/// k < n.
#[test]
fn resident_assembly_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    for n in ORDERS {
        let count = 3;
        for k in [2 * n + 3, n.div_ceil(2)] {
            let problems = Problems::new(100 + n as u64, count, n, k);
            let base = Plan::new(Job::Assemble, n, k, 0, limits).unwrap();
            let Some(plan) = chosen(base, Residual::Resident, limits) else {
                continue;
            };
            let c = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan)
                .unwrap()
                .matrix;
            check_assembly(&problems, count, &c, &format!("n {n} k {k}"));
        }
    }
}

/// The public API keeps A resident by default where it is small (n = 8 with 16
/// observations), and its answers agree with the restaged residual's to within rounding.
#[test]
fn the_resident_default_agrees_with_the_restaged_residual() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    assert_eq!(residual(32, 64), Residual::Direct);
    let (n, count) = (8, 5);
    assert_eq!(residual(n, 2 * n), Residual::Resident);
    let plan = Plan::fused(Job::LeastSquares, n, 2 * n, 1, limits).unwrap();
    assert_eq!(plan.residual, Residual::Resident);
    let problems = Problems::new(7, count, n, 2 * n);
    let default = default_least_squares(&kernels, &problems, count);
    let restaged = plan.with_residual(Residual::Restaged, limits).unwrap();
    assert!(!restaged.defines().contains("RESIDENT"));
    let other = run(&kernels, &restaged, &problems.inputs(), count, Poison::Nan).unwrap();
    assert_agrees_with_default(&other, &default, count, n);
    // Vector loads and register tiles stage A block by block: the plan falls back to the
    // restaged residual, and asking for a resident A with them is refused.
    let vector = plan.with_staged_loads(StagedLoads::Vector, limits).unwrap();
    assert_eq!(vector.residual, Residual::Restaged);
    assert!(vector.with_residual(Residual::Resident, limits).is_err());
    let tiled = plan.with_assembly_tiling(AssemblyTiling::Tiles4).unwrap();
    assert_eq!(tiled.residual, Residual::Restaged);
    assert!(tiled.with_residual(Residual::Resident, limits).is_err());
    // The factor reads no observations: never resident; the assembly has no residual to read
    // directly.
    let factor = Plan::new(Job::Cholesky, n, 0, 0, limits).unwrap();
    assert_eq!(factor.residual, Residual::Restaged);
    assert!(factor.with_residual(Residual::Resident, limits).is_err());
    let assembly = Plan::new(Job::Assemble, n, 2 * n, 0, limits).unwrap();
    assert!(assembly.with_residual(Residual::Direct, limits).is_err());
    // Past the resident default's size the fused least squares reads A directly, and the
    // restaged residual stays selectable.
    assert_eq!(residual(128, 256), Residual::Direct);
    let big = Plan::fused(Job::LeastSquares, 128, 256, 1, limits).unwrap();
    assert_eq!(big.residual, Residual::Direct);
    assert!(
        big.defines()
            .contains("#define DIRECT_RESIDUAL\n#define RL 4\n")
    );
    let back = big.with_residual(Residual::Restaged, limits).unwrap();
    assert_eq!(back.residual, Residual::Restaged);
    assert!(!back.defines().contains("RESIDUAL"));
}
