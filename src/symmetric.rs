//! A symmetric f64 or f32 matrix borrowed from the caller's memory by one stored triangle (as
//! LAPACK reads UPLO): rows contiguous, any row stride, no copy. The SPD solve and the
//! factorizations read C through it, so a caller's array (a numpy array, a slice of a larger
//! matrix) is used where it lies.

use crate::error::{Error, InputError, Result};
use crate::matrix::{Element, Matrix};

/// Which triangle of the stored rows holds C (the other is never read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    /// C(i, j) for j ≤ i: row i's entries 0..=i.
    Lower,
    /// C(i, j) for j ≥ i: row i's entries i..m.
    Upper,
}

/// An order-m symmetric matrix read from one triangle of row-major storage: entry (i, j) of
/// the storage is `data[i·stride + j]`. Elements are f64 (the default) or f32; values read
/// through it come out widened to f64 (exactly).
#[derive(Clone, Copy, Debug)]
pub struct SymmetricView<'a, T = f64> {
    data: &'a [T],
    order: usize,
    stride: usize,
    triangle: Triangle,
}

impl<'a, T: Element> SymmetricView<'a, T> {
    /// C of order `order` from row-major storage with `stride` values between rows (at least
    /// `order`), its `triangle` read.
    ///
    /// ```
    /// use symraster::{SymmetricView, Triangle};
    /// // [[4, 2], [garbage, 3]] by its upper triangle.
    /// let data = [4.0, 2.0, f64::NAN, 3.0];
    /// let c = SymmetricView::new(&data, 2, 2, Triangle::Upper)?;
    /// assert_eq!((c.get(1, 0), c.get(0, 1), c.get(1, 1)), (2.0, 2.0, 3.0));
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn new(data: &'a [T], order: usize, stride: usize, triangle: Triangle) -> Result<Self> {
        let needed = if order == 0 {
            0
        } else {
            (order - 1) * stride + order
        };
        if stride < order || data.len() < needed {
            return Err(Error::from(InputError::Length {
                what: format!("a symmetric matrix with row stride {stride}"),
                n: order,
                expected: needed,
                actual: data.len(),
            }));
        }
        Ok(Self {
            data,
            order,
            stride,
            triangle,
        })
    }

    /// The lower triangle of `c` (square; the caller has checked).
    pub fn lower(c: &'a Matrix<T>) -> Self {
        Self {
            data: c.as_slice(),
            order: c.rows(),
            stride: c.cols(),
            triangle: Triangle::Lower,
        }
    }

    /// m.
    pub fn order(&self) -> usize {
        self.order
    }

    /// The triangle read.
    pub fn triangle(&self) -> Triangle {
        self.triangle
    }

    /// C(i, j), read from the stored triangle whichever of (i, j) and (j, i) it holds.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (r, c) = match self.triangle {
            Triangle::Lower if j > i => (j, i),
            Triangle::Upper if j < i => (j, i),
            _ => (i, j),
        };
        self.data[r * self.stride + c].into()
    }

    /// Row i's stored entries with the diagonal: C(i, 0..=i) for the lower triangle, C(i, i..m)
    /// for the upper one (row i of the triangle packed by rows).
    #[inline]
    pub fn packed_row(&self, i: usize) -> &'a [T] {
        let row = &self.data[i * self.stride..i * self.stride + self.order];
        match self.triangle {
            Triangle::Lower => &row[..=i],
            Triangle::Upper => &row[i..],
        }
    }

    /// Row i's stored off-diagonal entries and the column of the first: C(i, 0..i) for the
    /// lower triangle, C(i, i+1..m) for the upper one.
    #[inline]
    fn stored_row(&self, i: usize) -> (usize, &'a [T]) {
        let row = &self.data[i * self.stride..i * self.stride + self.order];
        match self.triangle {
            Triangle::Lower => (0, &row[..i]),
            Triangle::Upper => (i + 1, &row[i + 1..]),
        }
    }

    /// C's lower triangle in f64 as an owned matrix (zeros above): for the paths that need a
    /// copy (the f64 fallback factor, an equilibrated C, the diagnosis of a failed factor).
    pub fn to_lower(&self) -> Matrix<f64> {
        Matrix::from_fn(self.order, self.order, |i, j| {
            if j <= i { self.get(i, j) } else { 0.0 }
        })
    }

    /// Writes `f(C(i, j))` for j = 0..=i into `out` (row i of the lower triangle); whether
    /// every value written is finite.
    #[inline]
    pub fn lower_row_into(&self, i: usize, out: &mut [f32], f: impl Fn(f64) -> f32) -> bool {
        let mut finite = true;
        match self.triangle {
            Triangle::Lower => {
                let row = &self.data[i * self.stride..i * self.stride + i + 1];
                for (o, &v) in out.iter_mut().zip(row) {
                    let y = f(v.into());
                    *o = y;
                    finite &= y.is_finite();
                }
            }
            Triangle::Upper => {
                // Column i of the stored rows 0..=i.
                for (j, o) in out.iter_mut().enumerate().take(i + 1) {
                    let y = f(self.data[j * self.stride + i].into());
                    *o = y;
                    finite &= y.is_finite();
                }
            }
        }
        finite
    }

    /// Writes `f(C(i, j))` for j = 0..=i of rows i = i0..i1 into `out`, row i at (i − i0)·ld
    /// (the rest of each row untouched); whether every value written is finite. From an upper
    /// triangle it reads the stored rows 0..i1 each once, a stretch of i1 − i0 entries at a
    /// time, rather than a column per row.
    pub fn lower_rows_into(
        &self,
        (i0, i1): (usize, usize),
        ld: usize,
        out: &mut [f32],
        f: impl Fn(f64) -> f32,
    ) -> bool {
        let mut finite = true;
        match self.triangle {
            Triangle::Lower => {
                for (i, row) in (i0..i1).zip(out.chunks_mut(ld)) {
                    finite &= self.lower_row_into(i, row, &f);
                }
            }
            Triangle::Upper => {
                for j in 0..i1 {
                    let from = i0.max(j);
                    let stored = &self.data[j * self.stride + from..j * self.stride + i1];
                    for (i, &v) in (from..i1).zip(stored) {
                        let y = f(v.into());
                        out[(i - i0) * ld + j] = y;
                        finite &= y.is_finite();
                    }
                }
            }
        }
        finite
    }

    /// An error naming `input` where C is empty or its stored triangle holds an entry that is
    /// not finite (its row and column in the storage).
    pub fn check(&self, input: &str) -> Result<()> {
        if self.order == 0 {
            return Err(InputError::Empty {
                input: input.into(),
                rows: 0,
                cols: 0,
            }
            .into());
        }
        if let Some((i, j, value)) = self.first_non_finite() {
            let triangle = match self.triangle {
                Triangle::Lower => "lower",
                Triangle::Upper => "upper",
            };
            return Err(InputError::NonFinite {
                input: format!("{input} ({triangle} triangle)"),
                position: format!("row {i}, column {j} (0-based)"),
                value,
            }
            .into());
        }
        Ok(())
    }

    /// The first entry of the stored triangle that is not finite, as (row, column, value) of
    /// the storage, in one pass over all cores.
    pub fn first_non_finite(&self) -> Option<(usize, usize, f64)> {
        use rayon::prelude::*;
        (0..self.order).into_par_iter().find_map_first(|i| {
            let (start, row) = self.stored_row(i);
            let diagonal: f64 = self.data[i * self.stride + i].into();
            if !diagonal.is_finite() {
                return Some((i, i, diagonal));
            }
            row.iter()
                .position(|&v| !v.into().is_finite())
                .map(|k| (i, start + k, row[k].into()))
        })
    }

    /// y = S·x for the symmetric S with S(i, k) = g(C(i, k)), the stored triangle read once,
    /// row by row: row i adds its dot product with x to y(i) and x(i) times itself to the
    /// y(k) of the other triangle, in its task's own accumulator, so every read is
    /// contiguous. Tasks take row ranges of about equal area over all cores; their
    /// accumulators are summed at the end. g = identity gives C·x; g = |·| with x = 1 gives
    /// C's column sums of magnitudes.
    pub fn apply(&self, x: &[f64], g: impl Fn(f64) -> f64 + Sync) -> Vec<f64> {
        use rayon::prelude::*;
        let m = self.order;
        let tasks = (rayon::current_num_threads() * 4).clamp(1, m.max(1));
        // Row bounds of equal shares of the triangle's area: the lower triangle above
        // r = m·√(t/tasks) holds t/tasks of it; the upper one mirrors that.
        let share = |t: usize| (m as f64) * (t as f64 / tasks as f64).sqrt();
        let bounds: Vec<usize> = (0..=tasks)
            .map(|t| match self.triangle {
                Triangle::Lower => share(t).round() as usize,
                Triangle::Upper => m - (share(tasks - t).round() as usize).min(m),
            })
            .map(|r| r.min(m))
            .collect();
        let parts: Vec<(usize, Vec<f64>, usize, Vec<f64>)> = (0..tasks)
            .into_par_iter()
            .map(|t| {
                let (r0, r1) = (bounds[t], bounds[t + 1].max(bounds[t]));
                // The other triangle's sums this task adds to: columns 0..r1 (lower) or
                // r0..m (upper).
                let (lo, hi) = match self.triangle {
                    Triangle::Lower => (0, r1),
                    Triangle::Upper => (r0, m),
                };
                let mut rows = vec![0.0; r1 - r0];
                let mut columns = vec![0.0; hi - lo];
                for i in r0..r1 {
                    let (start, row) = self.stored_row(i);
                    let xs = &x[start..start + row.len()];
                    let acc = &mut columns[start - lo..start - lo + row.len()];
                    let xi = x[i];
                    let mut sums = [0.0f64; 8];
                    let split = row.len() - row.len() % 8;
                    for ((a, xs), acc) in row[..split]
                        .chunks_exact(8)
                        .zip(xs[..split].chunks_exact(8))
                        .zip(acc[..split].chunks_exact_mut(8))
                    {
                        for l in 0..8 {
                            let v = g(a[l].into());
                            sums[l] += v * xs[l];
                            acc[l] += v * xi;
                        }
                    }
                    let mut s: f64 = sums.iter().sum();
                    for k in split..row.len() {
                        let v = g(row[k].into());
                        s += v * xs[k];
                        acc[k] += v * xi;
                    }
                    rows[i - r0] = s + g(self.data[i * self.stride + i].into()) * xi;
                }
                (r0, rows, lo, columns)
            })
            .collect();
        let mut y = vec![0.0; m];
        for (r0, rows, _, _) in &parts {
            y[*r0..r0 + rows.len()].copy_from_slice(rows);
        }
        for (_, _, lo, columns) in &parts {
            for (y, c) in y[*lo..].iter_mut().zip(columns) {
                *y += c;
            }
        }
        y
    }

    /// ‖C‖₁, exactly (one pass; NaN propagates).
    pub fn norm_1(&self) -> f64 {
        let ones = vec![1.0; self.order];
        self.apply(&ones, f64::abs).into_iter().fold(0.0, |n, v| {
            if n.is_nan() || v.is_nan() {
                f64::NAN
            } else {
                n.max(v)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symmetric(m: usize) -> Matrix<f64> {
        Matrix::from_fn(m, m, |i, j| {
            let (a, b) = (i.max(j) as f64, i.min(j) as f64);
            (a * 0.37 + b * 1.3).sin() + if i == j { m as f64 } else { 0.0 }
        })
    }

    #[test]
    fn both_triangles_apply_as_the_full_matrix_with_garbage_in_the_other() {
        for m in [0, 1, 2, 7, 8, 9, 33, 100] {
            let c = symmetric(m);
            let x: Vec<f64> = (0..m).map(|i| (i as f64 * 0.7).cos()).collect();
            let want = c.mul_vec(&x).unwrap();
            let norm = (0..m)
                .map(|j| (0..m).map(|i| c[(i, j)].abs()).sum::<f64>())
                .fold(0.0, f64::max);
            // Storage with a wider stride and NaN in the triangle not read.
            let stride = m + 3;
            for triangle in [Triangle::Lower, Triangle::Upper] {
                let mut data = vec![f64::NAN; m * stride];
                for i in 0..m {
                    for j in 0..m {
                        let stored = match triangle {
                            Triangle::Lower => j <= i,
                            Triangle::Upper => j >= i,
                        };
                        if stored {
                            data[i * stride + j] = c[(i, j)];
                        }
                    }
                }
                let v = SymmetricView::new(&data, m, stride, triangle).unwrap();
                let y = v.apply(&x, |a| a);
                for (y, w) in y.iter().zip(&want) {
                    assert!(
                        (y - w).abs() <= 1e-12 * (1.0 + w.abs()),
                        "{triangle:?} m {m}"
                    );
                }
                assert!((v.norm_1() - norm).abs() <= 1e-12 * norm.max(1.0));
                assert!(v.first_non_finite().is_none(), "{triangle:?} m {m}");
                assert_eq!(v.to_lower(), c.lower_triangle(), "{triangle:?} m {m}");
                for i in 0..m {
                    let mut out = vec![0.0f32; i + 1];
                    assert!(v.lower_row_into(i, &mut out, |a| a as f32));
                    for (j, o) in out.iter().enumerate() {
                        assert_eq!(*o, c[(i, j)] as f32);
                    }
                }
                // Rows in blocks, with padding past each row left as it was.
                let ld = m + 3;
                for (i0, i1) in [(0, m), (m / 3, m), (m / 2, (m / 2 + 1).min(m))] {
                    let mut out = vec![f32::NAN; (i1 - i0) * ld];
                    assert!(v.lower_rows_into((i0, i1), ld, &mut out, |a| a as f32));
                    for i in i0..i1 {
                        for j in 0..ld {
                            let o = out[(i - i0) * ld + j];
                            if j <= i {
                                assert_eq!(o, c[(i, j)] as f32, "{triangle:?} m {m} ({i}, {j})");
                            } else {
                                assert!(o.is_nan(), "{triangle:?} m {m} ({i}, {j})");
                            }
                        }
                    }
                }
                if m > 2 {
                    let mut bad = data.clone();
                    let (i, j) = match triangle {
                        Triangle::Lower => (2, 1),
                        Triangle::Upper => (1, 2),
                    };
                    bad[i * stride + j] = f64::INFINITY;
                    let v = SymmetricView::new(&bad, m, stride, triangle).unwrap();
                    assert_eq!(v.first_non_finite(), Some((i, j, f64::INFINITY)));
                    // The rows written say where a value is not finite: the block with row 2,
                    // and (for an upper triangle, whose entry (1, 2) is row 2's) only that one.
                    let mut out = vec![0.0f32; m * m];
                    assert!(!v.lower_rows_into((0, m), m, &mut out, |a| a as f32));
                    assert!(!v.lower_row_into(2, &mut out, |a| a as f32));
                    assert!(v.lower_row_into(1, &mut out, |a| a as f32));
                    // A finite C scaled past f32's range is not finite either.
                    let v = SymmetricView::new(&data, m, stride, triangle).unwrap();
                    assert!(!v.lower_rows_into((0, m), m, &mut out, |a| (a * 1e300) as f32));
                }
            }
        }
    }

    #[test]
    fn an_f32_view_reads_as_its_values_widened() {
        let m = 9;
        let stride = m + 2;
        let c = symmetric(m).map(|v| v as f32);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let mut data = vec![f32::NAN; m * stride];
            for i in 0..m {
                for j in 0..m {
                    if (triangle == Triangle::Lower) == (j <= i) || i == j {
                        data[i * stride + j] = c[(i, j)];
                    }
                }
            }
            let v: SymmetricView<'_, f32> = SymmetricView::new(&data, m, stride, triangle).unwrap();
            assert_eq!(v.to_lower(), c.lower_triangle().map(f64::from));
            assert_eq!(
                v.packed_row(3).len(),
                if triangle == Triangle::Lower { 4 } else { 6 }
            );
            let mut out = vec![0.0f32; m * m];
            v.lower_rows_into((0, m), m, &mut out, |a| a as f32);
            for i in 0..m {
                assert_eq!(&out[i * m..i * m + i + 1], &c.row(i)[..=i]);
            }
            assert!(v.first_non_finite().is_none());
            let mut bad = data.clone();
            bad[stride + 1] = f32::NEG_INFINITY;
            let v = SymmetricView::new(&bad, m, stride, triangle).unwrap();
            assert_eq!(v.first_non_finite(), Some((1, 1, f64::NEG_INFINITY)));
            assert!(v.check("C").is_err());
        }
    }

    #[test]
    fn storage_too_short_is_refused() {
        assert!(SymmetricView::new(&[1.0; 4], 2, 3, Triangle::Lower).is_err());
        assert!(SymmetricView::new(&[1.0; 5], 2, 3, Triangle::Lower).is_ok());
        assert!(SymmetricView::new(&[1.0; 4], 2, 1, Triangle::Lower).is_err());
    }
}
