//! The batched least-squares tests' problems: batches of small weighted least-squares
//! problems with a singular and an indefinite member, and their f64 solutions.

use super::widen;
use symraster::batched::device::Inputs;
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
