//! The assembly in a launch of its own (`Plan::with_assembly_pass`,
//! AssemblyPass::Separate, glsl/batched/gram.comp: C and g in register tiles of T x T sums, L
//! invocations per tile along the observations, through a NaN-poisoned gram buffer) against
//! f64 references problem by problem: the fused least squares and the assembly alone at
//! n ∈ {1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128, 129} (129: the triangle in the global work
//! buffer), observations a multiple of 4 (vector loads) or not, fewer than n (the assembly),
//! every tile order and several lane counts (tiles of 8 with lanes halve the group), a
//! singular member (a zero row of A) and an indefinite one (negative weights) failing alone,
//! the last work group not full, and the plan's rules (a resident A gives way, the jobs that
//! read C refuse it).

use crate::common;

use crate::common::batched::{
    Problems, assert_agrees_with_default, check_assembly, check_least_squares,
    default_least_squares, kernels,
};

use symraster::batched::device::{Poison, run};
use symraster::batched::gram::GramShape;
use symraster::batched::plan::{AssemblyPass, Job, MAX_F64_TILE, Plan, Residual};

const ORDERS: [usize; 12] = [1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 128, 129];

/// The shapes tried at order n: every tile order with one lane, and a few lane counts.
fn shapes(n: usize) -> Vec<GramShape> {
    let mut s = vec![
        GramShape::new(2, 1).unwrap(),
        GramShape::new(4, 1).unwrap(),
        GramShape::new(8, 1).unwrap(),
        GramShape::new(4, 8).unwrap(),
        GramShape::new(8, 4).unwrap(),
        GramShape::STAGED,
    ];
    if n <= 33 {
        s.push(GramShape::new(2, 32).unwrap());
        s.push(GramShape::new(4, 2).unwrap());
    }
    s
}

#[test]
fn separate_least_squares_matches_the_reference_per_problem() {
    let gpu = common::gpu();
    let kernels = kernels(&gpu);
    let limits = kernels.limits();
    let mut ran = 0;
    for n in ORDERS {
        let count = if n > 64 { 4 } else { 6 };
        // k a multiple of 4 (vector loads) or not.
        for k in [2 * n, 2 * n + 3] {
            let problems = Problems::new(40 + n as u64 + k as u64, count, n, k);
            for (i, shape) in shapes(n).into_iter().enumerate() {
                let refine = 1 + i % 2;
                let plan = Plan::new(Job::LeastSquares, n, k, refine, limits)
                    .unwrap()
                    .with_assembly_pass(AssemblyPass::Separate(shape), limits)
                    .unwrap();
                assert_eq!(plan.gram_shape(), Some(shape));
                assert!(plan.defines().contains("#define GRAM\n"));
                assert_ne!(plan.residual, Residual::Resident, "n {n}");
                let defines = plan.gram_defines().unwrap();
                let v4 = k % 4 == 0 && !shape.staged;
                assert_eq!(defines.contains("#define V4\n"), v4, "{defines}");
                assert!(defines.contains("#define RHS\n"));
                // The residual from A directly and, where the tiles form f64 sums, from the
                // normal equations.
                let mut plans = vec![plan.with_residual(Residual::Direct, limits).unwrap()];
                if shape.tile <= MAX_F64_TILE {
                    let normal = plan.with_residual(Residual::Normal, limits).unwrap();
                    assert!(normal.gram_defines().unwrap().contains("#define F64\n"));
                    assert!(normal.defines().contains("#define NORMAL_RESIDUAL\n"));
                    plans.push(normal);
                } else {
                    assert!(plan.with_residual(Residual::Normal, limits).is_err());
                }
                for plan in plans {
                    let out = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan).unwrap();
                    let what = format!("n {n} k {k} {shape:?} {:?} refine {refine}", plan.residual);
                    check_least_squares(&problems, count, &out, &what);
                    ran += 1;
                }
            }
        }
    }
    assert!(ran >= 200, "{ran} plans ran");
}

/// The assembly alone from the separate launch: every entry written (zeros above the
/// diagonal), the lower triangle against the f64 reference, k not a multiple of 4 and k < n.
#[test]
fn separate_assembly_matches_the_reference() {
    let gpu = common::gpu();
    let kernels = kernels(&gpu);
    let limits = kernels.limits();
    for n in ORDERS {
        let count = 3;
        for k in [2 * n + 3, n.div_ceil(2), 4 * n] {
            let problems = Problems::new(200 + n as u64, count, n, k);
            for shape in [
                GramShape::new(4, 1).unwrap(),
                GramShape::new(8, 4).unwrap(),
                GramShape::STAGED,
            ] {
                let plan = Plan::new(Job::Assemble, n, k, 0, limits)
                    .unwrap()
                    .with_assembly_pass(AssemblyPass::Separate(shape), limits)
                    .unwrap();
                assert!(!plan.gram_defines().unwrap().contains("RHS"));
                let c = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan)
                    .unwrap()
                    .matrix;
                check_assembly(&problems, count, &c, &format!("n {n} k {k} {shape:?}"));
            }
        }
    }
}

/// Many problems (several launches' worth of groups on no device, but the last group of
/// tiles not full), and the separate pass's answers agree with the fused default's to within
/// rounding; the plan's rules: a resident A gives way to the direct residual, asking for it
/// with the separate pass is refused, the jobs that read C refuse the separate pass, and the
/// fused pass comes back.
#[test]
fn the_separate_pass_agrees_with_the_fused_one() {
    let gpu = common::gpu();
    let kernels = kernels(&gpu);
    let limits = kernels.limits();
    for (n, count) in [(8, 301), (16, 97), (32, 45)] {
        let problems = Problems::new(9 + n as u64, count, n, 2 * n);
        let default = default_least_squares(&kernels, &problems, count);
        for pass in [
            AssemblyPass::Fused,
            AssemblyPass::Separate(GramShape::new(4, 1).unwrap()),
            AssemblyPass::Separate(GramShape::new(2, 4).unwrap()),
            AssemblyPass::Separate(GramShape::STAGED),
        ] {
            let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, limits)
                .unwrap()
                .with_assembly_pass(pass, limits)
                .unwrap();
            let out = run(&kernels, &plan, &problems.inputs(), count, Poison::Nan).unwrap();
            assert_agrees_with_default(&out, &default, count, n);
        }
    }
    let resident = Plan::new(Job::LeastSquares, 8, 16, 1, limits)
        .unwrap()
        .with_assembly_pass(AssemblyPass::Fused, limits)
        .unwrap()
        .with_residual(Residual::Resident, limits)
        .unwrap();
    let separate = resident
        .with_assembly_pass(AssemblyPass::Separate(GramShape::default_for(8)), limits)
        .unwrap();
    assert_eq!(separate.residual, Residual::Direct);
    let e = separate
        .with_residual(Residual::Resident, limits)
        .unwrap_err();
    assert!(e.to_string().contains("launch of its own"), "{e}");
    let fused = separate
        .with_assembly_pass(AssemblyPass::Fused, limits)
        .unwrap();
    assert_eq!(fused.gram_shape(), None);
    assert!(!fused.defines().contains("GRAM"));
    for job in [Job::Cholesky, Job::SpdSolve] {
        let plan = Plan::new(job, 8, 0, 1, limits).unwrap();
        assert!(
            plan.with_assembly_pass(AssemblyPass::Separate(GramShape::default_for(8)), limits)
                .is_err()
        );
        assert_eq!(plan.gram_defines(), None);
    }
}
