//! Powers of two that bring the least-squares data into f32's range for the GPU (exact
//! scaling), and C = AD²Aᵀ's diagonal computed without overflow or underflow.

use crate::error::{NumericalError, Result};
use crate::least_squares::design::Design;
use crate::matrix::MatrixView;
use crate::scaling::{exponent_of, norm_inf, times_power_of_two};

/// Powers of two that bring A and d, and so C = A·diag(d)·Aᵀ, into f32's range for the GPU:
/// A' = 2^e·A and d' = 2^f·d give C' = 4^e·2^f·C. Scaling by powers of two is exact, so
/// wherever the unscaled data would have fit, every f32 result is the exact scaled image of
/// the unscaled one (the paper's tables do not change); where it would not, the solve works
/// instead of overflowing or flushing to zero. The refinement itself runs on the unscaled
/// f64 data.
pub(super) struct RangeScaling {
    /// 2^e.
    pub(super) a: f64,
    /// 2^f.
    pub(super) d: f64,
    /// 2e + f: C' = 2^(2e+f)·C.
    pub(super) exponent: i32,
}

/// C's diagonal without overflow or underflow: C(j,j) = vⱼ·2^kⱼ, vⱼ = Σₖ (A(j,k)·2^-pⱼ)²·
/// d(k)·2^-q with max|A(j,·)|·2^-pⱼ and max|d|·2^-q in [1, 2), kⱼ = 2pⱼ + q.
pub(super) struct DiagonalParts {
    parts: Vec<(f64, i32)>,
    /// max |A(j, k)| over all entries (NaN-propagating), found on the way.
    largest: f64,
}

impl DiagonalParts {
    /// The parts of AD²Aᵀ's diagonal, O(mn) on all cores, from A where it lies: row by row,
    /// or by sweeps over Aᵀ's rows where A lies by columns.
    pub(super) fn of(a: &Design<'_>, d: &[f64]) -> Self {
        use rayon::prelude::*;
        let exponent = |x: f64| if x > 0.0 { exponent_of(x) } else { 0 };
        let q = Self::d_exponent(d);
        let d: Vec<f64> = d.iter().map(|&v| times_power_of_two(v, -q)).collect();
        // times_power_of_two(a, −p) as two factors made once per row (the same products, bit
        // for bit).
        let factors = |p: i32| (2f64.powi(-p / 2), 2f64.powi(-p - (-p / 2)));
        let parts = match *a {
            Design::Rows(a) => (0..a.rows())
                .into_par_iter()
                .map(|j| {
                    let row_max = norm_inf(a.row(j));
                    let p = exponent(row_max);
                    let (f1, f2) = factors(p);
                    // Summed in eight lanes.
                    let mut lanes = [0.0f64; 8];
                    let row = a.row(j);
                    let split = row.len() - row.len() % 8;
                    for (a, d) in row[..split].chunks_exact(8).zip(d[..split].chunks_exact(8)) {
                        for l in 0..8 {
                            let v = a[l] * f1 * f2;
                            lanes[l] += v * v * d[l];
                        }
                    }
                    let tail: f64 = row[split..]
                        .iter()
                        .zip(&d[split..])
                        .map(|(&a, d)| (a * f1 * f2).powi(2) * d)
                        .sum();
                    let v = lanes.iter().sum::<f64>() + tail;
                    ((v, 2 * p + q), row_max)
                })
                .collect::<Vec<_>>(),
            Design::Columns(t) => {
                // Row j of A is column j of Aᵀ: each row of Aᵀ adds to all m rows' values.
                let nan_max = |x: f64, y: f64| {
                    if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else {
                        x.max(y)
                    }
                };
                let row_max = sweep(
                    t,
                    |acc, line, _| {
                        for (x, &v) in acc.iter_mut().zip(line) {
                            *x = nan_max(*x, v.abs());
                        }
                    },
                    nan_max,
                );
                let p: Vec<i32> = row_max.iter().map(|&r| exponent(r)).collect();
                let f: Vec<(f64, f64)> = p.iter().map(|&p| factors(p)).collect();
                let sums = sweep(
                    t,
                    |acc, line, k| {
                        for ((x, &v), &(f1, f2)) in acc.iter_mut().zip(line).zip(&f) {
                            let v = v * f1 * f2;
                            *x += v * v * d[k];
                        }
                    },
                    |x, y| x + y,
                );
                sums.into_iter()
                    .zip(p)
                    .zip(row_max)
                    .map(|((v, p), r)| ((v, 2 * p + q), r))
                    .collect()
            }
        };
        let largest = parts.iter().map(|&(_, r)| r).fold(0.0, |x: f64, y| {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.max(y)
            }
        });
        Self {
            parts: parts.into_iter().map(|(p, _)| p).collect(),
            largest,
        }
    }

    /// The parts as the GPU computed them ([`DeviceResidual::diagonal_parts`]).
    ///
    /// [`DeviceResidual::diagonal_parts`]: super::residual::DeviceResidual::diagonal_parts
    pub(super) fn from_rows(rows: Vec<(f64, i32, f64)>) -> Self {
        let largest = rows.iter().map(|r| r.2).fold(0.0, f64::max);
        Self {
            parts: rows.into_iter().map(|(v, k, _)| (v, k)).collect(),
            largest,
        }
    }

    /// The binary exponent q of max |d| that the parts use (d·2^-q in [1, 2)).
    pub(super) fn d_exponent(d: &[f64]) -> i32 {
        let max = norm_inf(d);
        if max > 0.0 { exponent_of(max) } else { 0 }
    }

    /// The (v_j, k_j) of each row, C(j,j) = v_j·2^k_j.
    #[cfg(test)]
    pub(super) fn raw(&self) -> &[(f64, i32)] {
        &self.parts
    }

    /// max |A(j, k)|, NaN where A has one.
    pub(super) fn largest_entry(&self) -> f64 {
        self.largest
    }

    /// The diagonal of 2^s·C in f64.
    pub(super) fn scaled(&self, s: i32) -> Vec<f64> {
        self.parts
            .iter()
            .map(|&(v, k)| times_power_of_two(v, k + s))
            .collect()
    }
}

/// Aᵀ's rows (n x m, rows contiguous) folded into m values: `step(acc, line, k)` adds row k to
/// a partial result, over all cores in fixed blocks of rows whose results `join` merges in
/// block order (the same input gives the same bits whatever the thread count).
fn sweep(
    t: MatrixView<'_, f64>,
    step: impl Fn(&mut [f64], &[f64], usize) + Sync,
    join: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    use rayon::prelude::*;
    const BLOCK: usize = 256;
    let m = t.cols();
    let blocks: Vec<Vec<f64>> = (0..t.rows().div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut acc = vec![0.0; m];
            for k in b * BLOCK..((b + 1) * BLOCK).min(t.rows()) {
                step(&mut acc, t.row(k), k);
            }
            acc
        })
        .collect();
    blocks
        .into_iter()
        .reduce(|mut x, y| {
            x.iter_mut().zip(y).for_each(|(x, y)| *x = join(*x, y));
            x
        })
        .unwrap_or_else(|| vec![0.0; m])
}

impl RangeScaling {
    /// Scales so the largest |d| and the largest diagonal entry of C' are near 1. Fails when
    /// the diagonal's own spread exceeds f32's range (no common scale fits it).
    pub(super) fn of(diagonal: &DiagonalParts, d: &[f64]) -> Result<Self> {
        let log2_c = |&(v, k): &(f64, i32)| v.abs().log2() + f64::from(k);
        let d_max = norm_inf(d);
        let d_exponent = if d_max > 0.0 {
            -(d_max.log2().round() as i32)
        } else {
            0
        };
        let largest = diagonal
            .parts
            .iter()
            .filter(|(v, _)| *v != 0.0)
            .max_by(|x, y| log2_c(x).total_cmp(&log2_c(y)));
        // C·2^f's largest diagonal entry near 1, then A by 2^e with 4^e·2^f·c_max near 1.
        let a_exponent = match largest {
            Some(c) => {
                let exponent = -(log2_c(c) + f64::from(d_exponent)).round();
                (exponent / 2.0).round() as i32
            }
            None => 0,
        };
        let exponent = 2 * a_exponent + d_exponent;
        if let Some((j, &(v, k))) = diagonal.parts.iter().enumerate().find(|(_, (v, k))| {
            *v != 0.0 && times_power_of_two(v.abs(), k + exponent) < f64::from(f32::MIN_POSITIVE)
        }) {
            let &(c_max, c_max_exponent) = largest.expect("a non-zero entry exists");
            return Err(NumericalError::OutOfRange {
                what: "C = A·diag(d)·Aᵀ",
                row: j,
                col: j,
                value: times_power_of_two(v, k),
                why: format!(
                    "more than float32's range ({:.0e}) below its largest diagonal entry {}",
                    f64::from(f32::MAX) / f64::from(f32::MIN_POSITIVE),
                    format_scaled(c_max, c_max_exponent)
                ),
                fix: "scale the rows of A to similar norms",
            }
            .into());
        }
        Ok(Self {
            a: times_power_of_two(1.0, a_exponent),
            d: times_power_of_two(1.0, d_exponent),
            exponent,
        })
    }

    /// Whether 2^e·max|A| rounds to a finite single-precision number.
    pub(super) fn fits_single(&self, max_abs_a: f64) -> bool {
        max_abs_a * self.a < f64::from(f32::MAX)
    }

    /// z = C⁻¹·r through `solve`, the single-precision factor of C' (Algorithm 1's solve, on
    /// the CPU or the GPU): C·z = r ⇔ C'·(z/2^e) = 2^e·2^f·r.
    pub(super) fn correct_with(
        &self,
        r: &[f64],
        solve: impl FnOnce(&[f32]) -> Result<Vec<f32>>,
    ) -> Result<Vec<f64>> {
        // r itself by a power of two 2^t into [1, 2) before rounding: the residuals shrink by
        // orders of magnitude per step and would otherwise underflow f32 (or overflow it).
        let into = self.a * self.d;
        let r_max = norm_inf(r) * into;
        let t = if r_max > 0.0 && r_max.is_finite() {
            -exponent_of(r_max)
        } else {
            0
        };
        let single: Vec<f32> = r
            .iter()
            .map(|&v| times_power_of_two(v * into, t) as f32)
            .collect();
        let out = self.a;
        Ok(solve(&single)?
            .into_iter()
            .map(|v| times_power_of_two(f64::from(v) * out, -t))
            .collect())
    }
}

/// x·2^k in decimal, also where it leaves f64's range ("1.234e400").
fn format_scaled(x: f64, k: i32) -> String {
    let v = times_power_of_two(x, k);
    if v.is_normal() {
        return format!("{v:.3e}");
    }
    let log10 = x.abs().log10() + f64::from(k) * 2f64.log10();
    let exponent = log10.floor();
    let sign = if x < 0.0 { "-" } else { "" };
    format!("{sign}{:.3}e{exponent}", 10f64.powf(log10 - exponent))
}
