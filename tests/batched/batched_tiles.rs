//! The batched assembly's register tiles and wider staged blocks
//! (`Plan::with_assembly_tiling`, `Plan::with_staged_columns`) against f64 references problem
//! by problem, in the fused least squares and the assembly alone: n ∈ {1, 2, 3, 7, 8, 16, 31,
//! 32, 33, 64, 129} (129 in the global work buffer on llvmpipe), a singular member (a zero row
//! of A: pivot exactly 0) and an indefinite one (negative weights) failing alone among the
//! others, outputs NaN-poisoned before the launch, k not a multiple of the staged columns and
//! k < n, several problems per group with the last group not full, both staged loads.

use crate::common;

use crate::common::batched::{
    Problems, assert_agrees_with_default, check_assembly, check_least_squares as check_members,
    default_least_squares,
};

use symraster::batched::BatchOptions;
use symraster::batched::device::{Inputs, Poison, run};
use symraster::batched::plan::{AssemblyTiling, Job, MAX_TILE_SUMS, Plan, StagedLoads, tile_split};
use symraster::gl::ComputeLimits;

const ORDERS: [usize; 11] = [1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 129];

/// The new choices: (tiling, staged columns).
const CHOICES: [(AssemblyTiling, usize); 6] = [
    (AssemblyTiling::Rows, 64),
    (AssemblyTiling::Tiles2, 16),
    (AssemblyTiling::Tiles2, 64),
    (AssemblyTiling::Tiles4, 16),
    (AssemblyTiling::Tiles4, 32),
    (AssemblyTiling::Tiles4, 64),
];

/// `plan` with `tiling` and `columns`, or None where wider staged blocks are refused (the
/// invocations not a multiple of them, or the blocks past shared memory: the message says
/// so); the tilings themselves and 16 columns are never refused at these orders.
fn chosen(
    plan: Plan,
    tiling: AssemblyTiling,
    columns: usize,
    limits: &ComputeLimits,
) -> Option<Plan> {
    let plan = plan.with_assembly_tiling(tiling).unwrap();
    match plan.with_staged_columns(columns, limits) {
        Ok(p) => Some(p),
        Err(e) => {
            assert_ne!(columns, 16, "n {}: {e}", plan.n);
            assert!(
                e.to_string().contains("cannot stage"),
                "n {} {tiling:?} {columns}: {e}",
                plan.n
            );
            None
        }
    }
}

/// Runs a least-squares plan on `problems` (poisoned outputs) and checks every member: the
/// failing ones' INFO and NaN x, the others' x against the f64 reference after one step.
fn check_least_squares(problems: &Problems, count: usize, plan: &Plan, kernels_run: &Runner) {
    let n = problems.n;
    let shape = format!(
        "n {n} k {} {:?} KC {} T {} P {} {:?}",
        problems.k,
        plan.assembly_tiling,
        plan.staged_columns,
        plan.threads,
        plan.problems_per_group,
        plan.staged_loads
    );
    let out = kernels_run(plan, &problems.inputs(), count);
    check_members(problems, count, &out, &shape);
}

type Runner<'a> = dyn Fn(&Plan, &Inputs<'_>, usize) -> symraster::batched::device::Outputs + 'a;

#[test]
fn tiled_least_squares_matches_the_reference_per_problem() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let runner = |plan: &Plan, inputs: &Inputs<'_>, count: usize| {
        run(&kernels, plan, inputs, count, Poison::Nan).unwrap()
    };
    for n in ORDERS {
        let count = if n > 64 { 4 } else { 5 };
        let problems = Problems::new(n as u64, count, n, 2 * n);
        let base = Plan::fused(Job::LeastSquares, n, 2 * n, 1, limits).unwrap();
        for (tiling, columns) in CHOICES {
            if let Some(plan) = chosen(base, tiling, columns, limits) {
                check_least_squares(&problems, count, &plan, &runner);
            }
        }
    }
}

/// The tiles dealt out both ways at one order: the staged columns split among up to four
/// invocations per tile (more invocations than tiles), and several tiles per invocation
/// (fewer), with three problems per group and both staged loads.
#[test]
fn every_tile_split_matches_the_reference() {
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
    for n in [17, 32] {
        let problems = Problems::new(60 + n as u64, count, n, 2 * n + 5);
        let mut splits = std::collections::HashSet::new();
        for tiling in [AssemblyTiling::Tiles2, AssemblyTiling::Tiles4] {
            for threads in [32, 64, 128, 144] {
                for (problems_per_group, loads) in
                    [(1, StagedLoads::Scalar), (3, StagedLoads::Vector)]
                {
                    let Ok(plan) = Plan::fused(Job::LeastSquares, n, 2 * n + 5, 1, limits)
                        .unwrap()
                        .with_staged_loads(loads, limits)
                        .unwrap()
                        .with_problems_per_group(1, limits)
                        .unwrap()
                        .with_threads(threads, limits)
                        .and_then(|p| p.with_assembly_tiling(tiling))
                        .and_then(|p| p.with_problems_per_group(problems_per_group, limits))
                    else {
                        // Refused only past the device's invocations or past the tiles one
                        // invocation holds.
                        let tile = tiling.tile().unwrap();
                        let held = tile_split(n, tile, threads).1;
                        assert!(
                            threads * problems_per_group > limits.max_invocations as usize
                                || held * tile * tile > MAX_TILE_SUMS,
                            "n {n} {tiling:?} T {threads}"
                        );
                        continue;
                    };
                    splits.insert(tile_split(n, tiling.tile().unwrap(), plan.threads));
                    check_least_squares(&problems, count, &plan, &runner);
                }
            }
        }
        // Both ways of dealing the tiles ran: a split past one, and several tiles held.
        assert!(
            splits.iter().any(|&(split, _)| split > 1),
            "n {n}: {splits:?}"
        );
        assert!(
            splits.iter().any(|&(_, held)| held > 1),
            "n {n}: {splits:?}"
        );
    }
}

#[test]
fn tiled_assembly_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    for n in ORDERS {
        let count = 3;
        // k not a multiple of the staged columns, and k < n too.
        for k in [2 * n + 3, n.div_ceil(2)] {
            let problems = Problems::new(100 + n as u64, count, n, k);
            let base = Plan::new(Job::Assemble, n, k, 0, limits).unwrap();
            for (tiling, columns) in CHOICES {
                let Some(plan) = chosen(base, tiling, columns, limits) else {
                    continue;
                };
                let c = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan)
                    .unwrap()
                    .matrix;
                check_assembly(
                    &problems,
                    count,
                    &c,
                    &format!("n {n} k {k} {tiling:?} KC {columns}"),
                );
            }
        }
    }
}

/// The public API runs the default plan (the tiles, slower on the H200, are the benchmarks'
/// choice) and gives the same answers as the tiled plan to within rounding.
#[test]
fn the_tiled_plan_agrees_with_the_default() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let limits = kernels.limits();
    let (n, count) = (32, 4);
    let problems = Problems::new(7, count, n, 2 * n);
    let default = default_least_squares(&kernels, &problems, count);
    let plan = Plan::fused(Job::LeastSquares, n, 2 * n, 1, limits)
        .unwrap()
        .with_assembly_tiling(AssemblyTiling::Tiles4)
        .unwrap();
    let tiled = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan).unwrap();
    assert_agrees_with_default(&tiled, &default, count, n);
}
