//! Hager's 1-norm estimator (Higham's refinement, as in LAPACK's dlacon): ‖B‖₁ of a matrix
//! known only through products with it, here C = AD²Aᵀ and C⁻¹ through the factor, for the
//! condition estimate κ₁(C) that turns a backward error into a forward-error estimate.

/// An estimate (a lower bound, usually within a factor of 3) of ‖B‖₁ for a symmetric m x m B
/// given `apply(v)` = B·v: at most five products. (B symmetric, so Bᵀ·v = B·v.)
pub fn estimate_norm_1(m: usize, mut apply: impl FnMut(&[f64]) -> Vec<f64>) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let mut x = vec![1.0 / m as f64; m];
    let mut estimate = 0.0;
    let mut last_index = usize::MAX;
    for _ in 0..5 {
        let y = apply(&x);
        let norm: f64 = y.iter().map(|v| v.abs()).sum();
        if !norm.is_finite() {
            return norm;
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
    // Higham's alternative vector guards against the estimator's bad cases.
    let alt: Vec<f64> = (0..m)
        .map(|i| {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            sign * (1.0 + i as f64 / (m.max(2) - 1) as f64)
        })
        .collect();
    let y = apply(&alt);
    let alt_estimate = 2.0 * y.iter().map(|v| v.abs()).sum::<f64>() / (3.0 * m as f64);
    // NaN-propagating: a NaN product must not read as a small norm.
    if alt_estimate.is_nan() {
        return alt_estimate;
    }
    estimate.max(alt_estimate)
}

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
}
