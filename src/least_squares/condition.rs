//! Hager's 1-norm estimator (Higham's refinement, as in LAPACK's dlacon): ‖B‖₁ of a matrix
//! known only through products with it, here C = AD²Aᵀ and C⁻¹ through the factor, for the
//! condition estimate κ₁(C) that turns a backward error into a forward-error estimate.

use std::convert::Infallible;

/// An estimate (a lower bound, usually within a factor of 3) of ‖B‖₁ for a symmetric m x m B
/// given `apply(v)` = B·v: at most five products. (B symmetric, so Bᵀ·v = B·v.)
pub fn estimate_norm_1(m: usize, mut apply: impl FnMut(&[f64]) -> Vec<f64>) -> f64 {
    let Ok(estimate) = estimate_norm_1_batched(m, |vs| {
        Ok::<_, Infallible>(vs.iter().map(|v| apply(v)).collect())
    });
    estimate
}

/// The estimator's two vectors that depend on no product: (1/m, …, 1/m), where Hager's
/// iteration starts, and Higham's alternative ±(1 + i/(m−1)), which guards against its bad
/// cases. [`estimate_norm_1_batched`] applies them first, in one call.
pub fn independent_vectors(m: usize) -> [Vec<f64>; 2] {
    let alt = (0..m)
        .map(|i| {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            sign * (1.0 + i as f64 / (m.max(2) - 1) as f64)
        })
        .collect();
    [vec![1.0 / m as f64; m], alt]
}

/// [`estimate_norm_1`] given `apply_many(vs)` = B·v for each v of `vs`, for products that cost
/// a round trip per call rather than per vector: the first call carries both
/// [`independent_vectors`], the later ones one vector each, so the estimate (the same products,
/// the same value as [`estimate_norm_1`]) takes one call fewer. An error ends it.
pub fn estimate_norm_1_batched<E>(
    m: usize,
    mut apply_many: impl FnMut(&[&[f64]]) -> Result<Vec<Vec<f64>>, E>,
) -> Result<f64, E> {
    if m == 0 {
        return Ok(0.0);
    }
    let [x, alt] = independent_vectors(m);
    let [first, alt_product] = <[Vec<f64>; 2]>::try_from(apply_many(&[&x, &alt])?)
        .unwrap_or_else(|p| panic!("two vectors applied, {} products back", p.len()));
    let mut estimate = NormEstimate::new(first, alt_product);
    while let Some(v) = estimate.pending() {
        let mut products = apply_many(&[v])?;
        assert_eq!(products.len(), 1, "one vector applied");
        estimate.give(products.remove(0));
    }
    Ok(estimate.value().expect("no product pending"))
}

/// [`estimate_norm_1_batched`] one product at a time, for a caller that applies each pending
/// vector where it likes (beside products of its own): made from the products of the
/// [`independent_vectors`], it asks for at most nine more ([`NormEstimate::pending`]), each
/// depending on the one before.
#[derive(Clone, Debug)]
pub struct NormEstimate {
    x: Vec<f64>,
    estimate: f64,
    last_index: usize,
    iteration: usize,
    alt_product: Vec<f64>,
    want: Want,
}

/// The product a [`NormEstimate`] waits for, or its value.
#[derive(Clone, Debug)]
enum Want {
    /// B·x, Hager's next y.
    Y,
    /// B·sign(y).
    Z(Vec<f64>),
    Done(f64),
}

impl NormEstimate {
    /// The estimate from B·(1/m, …) and B·(Higham's alternative vector), m > 0.
    pub fn new(first: Vec<f64>, alt_product: Vec<f64>) -> Self {
        let m = first.len();
        let [x, _] = independent_vectors(m);
        let mut e = Self {
            x,
            estimate: 0.0,
            last_index: usize::MAX,
            iteration: 0,
            alt_product,
            want: Want::Y,
        };
        e.give(first);
        e
    }

    /// The vector whose product is wanted next; `None` once the estimate is known.
    pub fn pending(&self) -> Option<&[f64]> {
        match &self.want {
            Want::Y => Some(&self.x),
            Want::Z(signs) => Some(signs),
            Want::Done(_) => None,
        }
    }

    /// The estimate, once no product is pending.
    pub fn value(&self) -> Option<f64> {
        match self.want {
            Want::Done(v) => Some(v),
            _ => None,
        }
    }

    /// B·v for the pending v. Panics where none is pending.
    pub fn give(&mut self, product: Vec<f64>) {
        match std::mem::replace(&mut self.want, Want::Y) {
            Want::Y => self.take_y(product),
            Want::Z(_) => self.take_z(product),
            Want::Done(_) => panic!("a product given to a finished norm estimate"),
        }
    }

    fn take_y(&mut self, y: Vec<f64>) {
        let norm: f64 = y.iter().map(|v| v.abs()).sum();
        if !norm.is_finite() {
            self.want = Want::Done(norm);
        } else if norm <= self.estimate {
            self.finish();
        } else {
            self.estimate = norm;
            let signs = y
                .iter()
                .map(|&v| if v < 0.0 { -1.0 } else { 1.0 })
                .collect();
            self.want = Want::Z(signs);
        }
    }

    fn take_z(&mut self, z: Vec<f64>) {
        let (j, zj) = z
            .iter()
            .enumerate()
            .fold((0, f64::NEG_INFINITY), |best, (i, &v)| {
                if v.abs() > best.1 { (i, v.abs()) } else { best }
            });
        let zx: f64 = z.iter().zip(&self.x).map(|(a, b)| a * b).sum();
        self.iteration += 1;
        if zj <= zx || j == self.last_index || self.iteration == MAX_ITERATIONS {
            self.finish();
            return;
        }
        self.last_index = j;
        self.x = vec![0.0; z.len()];
        self.x[j] = 1.0;
        self.want = Want::Y;
    }

    fn finish(&mut self) {
        let m = self.alt_product.len() as f64;
        let alt = 2.0 * self.alt_product.iter().map(|v| v.abs()).sum::<f64>() / (3.0 * m);
        // NaN-propagating: a NaN product must not read as a small norm.
        self.want = Want::Done(if alt.is_nan() {
            alt
        } else {
            self.estimate.max(alt)
        });
    }
}

/// Hager's iterations at most (each one y and one z).
const MAX_ITERATIONS: usize = 5;

/// [`estimate_norm_1`] of B⁻¹ given `solve(v)` = B⁻¹·v.
pub fn estimate_inverse_norm_1(m: usize, solve: impl FnMut(&[f64]) -> Vec<f64>) -> f64 {
    estimate_norm_1(m, solve)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Matrix;

    fn norm_1(b: &Matrix<f64>) -> f64 {
        (0..b.cols())
            .map(|j| (0..b.rows()).map(|i| b[(i, j)].abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }

    #[test]
    fn estimates_are_close_lower_bounds() {
        let mut rng = crate::problems::rng(5);
        for m in [1, 2, 7, 40] {
            let a = crate::problems::uniform_matrix(&mut rng, m, m).to_f64();
            // A symmetric matrix with mixed signs.
            let b = Matrix::from_fn(m, m, |i, j| a[(i, j)] + a[(j, i)] - 1.0);
            let exact = norm_1(&b);
            let apply = |v: &[f64]| -> Vec<f64> {
                (0..m)
                    .map(|i| (0..m).map(|j| b[(i, j)] * v[j]).sum())
                    .collect()
            };
            let est = estimate_norm_1(m, apply);
            assert!(est <= exact * (1.0 + 1e-12), "m = {m}: {est} > {exact}");
            assert!(est >= exact / 3.0, "m = {m}: {est} ≪ {exact}");
        }
    }

    /// The estimator one product per call, the alternative vector last (dlacon's order): what
    /// [`estimate_norm_1_batched`] must reproduce. With whether it applied the alternative.
    fn one_at_a_time(m: usize, mut apply: impl FnMut(&[f64]) -> Vec<f64>) -> (f64, bool) {
        let [mut x, alt] = independent_vectors(m);
        let mut estimate = 0.0;
        let mut last_index = usize::MAX;
        for _ in 0..5 {
            let y = apply(&x);
            let norm: f64 = y.iter().map(|v| v.abs()).sum();
            if !norm.is_finite() {
                return (norm, false);
            }
            if norm <= estimate {
                break;
            }
            estimate = norm;
            let signs: Vec<f64> = y
                .iter()
                .map(|&v| if v < 0.0 { -1.0 } else { 1.0 })
                .collect();
            let z = apply(&signs);
            let (j, zj) = z
                .iter()
                .enumerate()
                .fold((0, f64::NEG_INFINITY), |best, (i, &v)| {
                    if v.abs() > best.1 { (i, v.abs()) } else { best }
                });
            let zx: f64 = z.iter().zip(&x).map(|(a, b)| a * b).sum();
            if zj <= zx || j == last_index {
                break;
            }
            last_index = j;
            x = vec![0.0; m];
            x[j] = 1.0;
        }
        let y = apply(&alt);
        let alt_estimate = 2.0 * y.iter().map(|v| v.abs()).sum::<f64>() / (3.0 * m as f64);
        if alt_estimate.is_nan() {
            return (alt_estimate, true);
        }
        (estimate.max(alt_estimate), true)
    }

    /// Symmetric test matrices of order m: mixed signs, a dominant column (Hager's iteration
    /// moves to it), entries whose products overflow, and a NaN.
    fn matrices(m: usize) -> Vec<Matrix<f64>> {
        let mut rng = crate::problems::rng(m as u64);
        let a = crate::problems::uniform_matrix(&mut rng, m, m).to_f64();
        let mixed = Matrix::from_fn(m, m, |i, j| a[(i, j)] + a[(j, i)] - 1.0);
        let k = m / 2;
        let dominant = Matrix::from_fn(m, m, |i, j| {
            mixed[(i, j)] + if i == k || j == k { 40.0 } else { 0.0 }
        });
        let huge = Matrix::from_fn(m, m, |i, j| mixed[(i, j)] * f64::MAX);
        let mut nan = mixed.clone();
        nan[(m - 1, 0)] = f64::NAN;
        nan[(0, m - 1)] = f64::NAN;
        vec![mixed, dominant, huge, nan, Matrix::zeros(m, m)]
    }

    #[test]
    fn batched_estimates_are_the_one_at_a_time_estimates_in_one_call_fewer() {
        let mut longest = 0;
        for m in [1, 2, 3, 7, 40, 129] {
            for (case, b) in matrices(m).iter().enumerate() {
                let product = |v: &[f64]| -> Vec<f64> {
                    (0..m)
                        .map(|i| (0..m).map(|j| b[(i, j)] * v[j]).sum())
                        .collect()
                };
                let mut alone = Vec::new();
                let (want, reached_alt) = one_at_a_time(m, |v| {
                    alone.push(v.to_vec());
                    product(v)
                });
                let mut calls: Vec<Vec<Vec<f64>>> = Vec::new();
                let got = estimate_norm_1_batched(m, |vs| {
                    calls.push(vs.iter().map(|v| v.to_vec()).collect());
                    Ok::<_, Infallible>(vs.iter().map(|v| product(v)).collect())
                })
                .unwrap();
                let what = format!("m = {m}, case {case}");
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{what}: {got} against {want}"
                );
                assert_eq!(
                    estimate_norm_1(m, product).to_bits(),
                    want.to_bits(),
                    "{what}"
                );
                // The same vectors, the alternative one moved up into the first call.
                let [start, alt] = independent_vectors(m);
                assert_eq!(calls[0], [start, alt], "{what}");
                assert!(calls[1..].iter().all(|c| c.len() == 1), "{what}");
                let middle = &alone[1..alone.len() - usize::from(reached_alt)];
                let later: Vec<Vec<f64>> = calls[1..].iter().map(|c| c[0].clone()).collect();
                assert_eq!(later, middle, "{what}");
                assert_eq!(
                    calls.len(),
                    alone.len() - usize::from(reached_alt),
                    "{what}"
                );
                longest = longest.max(calls.len());
            }
        }
        // Some case took Hager's iteration further than its first step.
        assert!(longest >= 4, "{longest}");
    }

    #[test]
    fn an_error_ends_the_estimate() {
        let mut calls = 0;
        let got = estimate_norm_1_batched(5, |vs| {
            calls += 1;
            match calls {
                1 => Ok(vs.iter().map(|v| v.to_vec()).collect()),
                _ => Err("failed"),
            }
        });
        assert_eq!((got, calls), (Err("failed"), 2));
        assert_eq!(estimate_norm_1_batched(0, |_| Err("none")), Ok(0.0));
    }
}
