//! The batched least-squares tests' problems: batches of small weighted least-squares
//! problems with a singular and an indefinite member, and their f64 solutions.

use super::widen;
use symraster::batched::device::{Inputs, Poison};
use symraster::least_squares::solve_with_factor;
use symraster::problems::{rng, uniform_vector};
use symraster::{Matrix, reference};

/// Values uniform in [−1, 1), exactly representable in f32.
pub fn signed(seed: u64, len: usize) -> Vec<f32> {
    uniform_vector(&mut rng(seed), len)
        .iter()
        .map(|&v| 2.0 * v - 1.0)
        .collect()
}

/// A batch of `count` problems of order n with k observations: problem 1 has A's row n/2
/// zero (C singular: INFO n/2 + 1), problem 3 negative weights (C negative definite: INFO
/// 1); the others weights in [0.5, 1.5).
pub struct Problems {
    /// The order.
    pub n: usize,
    /// Observations per problem.
    pub k: usize,
    /// Each problem's A, n x k row-major, one after another.
    pub a: Vec<f32>,
    /// The weights, k per problem.
    pub d: Vec<f32>,
    /// The right sides, k per problem.
    pub b: Vec<f32>,
}

impl Problems {
    pub fn new(seed: u64, count: usize, n: usize, k: usize) -> Self {
        let mut a = signed(seed, count * n * k);
        if count > 1 {
            let row = n / 2;
            a[(n + row) * k..(n + row + 1) * k].fill(0.0);
        }
        let mut d: Vec<f32> = uniform_vector(&mut rng(seed + 1), count * k)
            .iter()
            .map(|&v| v + 0.5)
            .collect();
        if count > 3 {
            d[3 * k..4 * k].iter_mut().for_each(|w| *w = -*w);
        }
        let b = signed(seed + 2, count * k);
        Self { n, k, a, d, b }
    }

    pub fn inputs(&self) -> Inputs<'_> {
        Inputs {
            a: Some(&self.a),
            d: Some(&self.d),
            b: Some(&self.b),
            ..Inputs::default()
        }
    }

    /// Problem p's A (n x k) and weights in f64.
    pub fn widened(&self, p: usize) -> (Matrix<f64>, Vec<f64>) {
        let (n, k) = (self.n, self.k);
        let a = Matrix::from_fn(n, k, |i, j| f64::from(self.a[p * n * k + i * k + j]));
        (a, widen(&self.d[p * k..(p + 1) * k]))
    }

    /// The INFO problem p must report (0: positive definite).
    pub fn info(&self, p: usize) -> i32 {
        match p {
            1 => self.n as i32 / 2 + 1,
            3 => 1,
            _ => 0,
        }
    }

    /// x solving problem p's f64 normal equations.
    pub fn x(&self, p: usize) -> Vec<f64> {
        let (a, d) = self.widened(p);
        let c = reference::assemble(&a, &d);
        let k = self.k;
        let b = widen(&self.b[p * k..(p + 1) * k]);
        let g: Vec<f64> = (0..self.n)
            .map(|i| (0..k).map(|j| a[(i, j)] * d[j] * b[j]).sum())
            .collect();
        solve_with_factor(&reference::cholesky(&c).unwrap(), &g)
    }
}

/// Checks a least-squares run `out` of `problems` (outputs poisoned before it) member by
/// member: INFO and x sized for `count` problems, the failing ones' INFO and NaN x, the
/// others' x against the f64 reference; `shape` names the plan in the messages.
pub fn check_least_squares(
    problems: &Problems,
    count: usize,
    out: &symraster::batched::device::Outputs,
    shape: &str,
) {
    let n = problems.n;
    assert_eq!(out.info.len(), count, "{shape}");
    assert_eq!(out.x.len(), count * n, "{shape}");
    for p in 0..count {
        let info = problems.info(p);
        assert_eq!(out.info[p], info, "{shape} p {p}");
        let x = &out.x[p * n..(p + 1) * n];
        if info != 0 {
            assert!(x.iter().all(|v| v.is_nan()), "{shape} p {p}");
            continue;
        }
        let e = super::max_relative_error(x, &problems.x(p));
        assert!(e < 1e-8 * (n as f64).max(4.0), "{shape} p {p}: {e:.2e}");
    }
}

/// Checks the assembled C of `count` problems (n × n each, outputs poisoned before the
/// launch): zeros above the diagonal (every entry written) and the lower triangle against the
/// f64 reference within 1e-6·√k; `what` names the plan in the messages.
pub fn check_assembly(problems: &Problems, count: usize, c: &[f32], what: &str) {
    let (n, k) = (problems.n, problems.k);
    for p in 0..count {
        let (a, d) = problems.widened(p);
        let c_ref = reference::assemble(&a, &d);
        let got = Matrix::from_fn(n, n, |i, j| f64::from(c[p * n * n + i * n + j]));
        for i in 0..n {
            for j in i + 1..n {
                assert_eq!(got[(i, j)], 0.0, "{what} ({i}, {j})");
            }
        }
        let e = symraster::relative_error(&got, &c_ref);
        assert!(
            e < 1e-6 * (k as f64).sqrt().max(1.0),
            "{what} p {p}: {e:.2e}"
        );
    }
}

/// The batched kernels of `gpu`'s context (the default options).
pub fn kernels(gpu: &symraster::Gpu) -> std::rc::Rc<symraster::batched::kernels::BatchedKernels> {
    gpu.batched()
        .internal_kernels(&symraster::batched::BatchOptions::default())
        .unwrap()
}

/// The public API's answer (the default plan) for `problems` with k = 2n observations.
pub fn default_least_squares(
    kernels: &symraster::batched::kernels::BatchedKernels,
    problems: &Problems,
    count: usize,
) -> symraster::batched::BatchSolution {
    let (n, k) = (problems.n, problems.k);
    let a = symraster::Batch::new(count, n, k, problems.a.clone()).unwrap();
    let d = symraster::Batch::vectors(count, k, problems.d.clone()).unwrap();
    let b = symraster::Batch::vectors(count, k, problems.b.clone()).unwrap();
    let options = symraster::batched::BatchOptions::default();
    symraster::batched::least_squares(kernels, &a, &d, &b, &options, Poison::Nan).unwrap()
}

/// `other` (a run of another plan on the same problems) gives the default's INFO, NaN where it
/// fails and x within 1e-9 of the default's elsewhere.
pub fn assert_agrees_with_default(
    other: &symraster::batched::device::Outputs,
    default: &symraster::batched::BatchSolution,
    count: usize,
    n: usize,
) {
    assert_eq!(other.info, default.info);
    for p in 0..count {
        let (x, y) = (&other.x[p * n..(p + 1) * n], default.x.problem(p));
        if default.info[p] != 0 {
            assert!(x.iter().chain(y).all(|v| v.is_nan()), "p {p}");
        } else {
            assert!(super::max_relative_error(x, y) < 1e-9, "p {p}");
        }
    }
}

/// SPD problems of order n (diagonally dominant), problem p scaled by 2^(37·p mod 121 − 60),
/// NaN above every diagonal; entries from `signed(seed, ..)`.
pub fn scaled_spd_stack(seed: u64, n: usize, count: usize) -> Vec<f32> {
    let r = signed(seed, count * n * n);
    let mut c = vec![f32::NAN; count * n * n];
    for p in 0..count {
        let f = 2f32.powi((37 * p as i32) % 121 - 60);
        for i in 0..n {
            for j in 0..=i {
                let v = r[(p * n + i) * n + j];
                c[(p * n + i) * n + j] = if i == j { n as f32 + v.abs() } else { v } * f;
            }
        }
    }
    c
}
