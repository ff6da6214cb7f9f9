//! A of a least-squares solve where it lies in the caller's memory, by its contiguous lines:
//! rows (the library's row-major A) or columns (the caller's observations-by-unknowns X, which
//! is Aᵀ row by row). The host's passes over A (the checks, the products, C's diagonal, the
//! rounding to f32) read it in place either way.

use crate::error::Result;
use crate::matrix::{Element, Matrix, MatrixView};
use rayon::prelude::*;

/// A (m x n) by its contiguous lines.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Design<'a> {
    /// A, its rows contiguous.
    Rows(MatrixView<'a, f64>),
    /// Aᵀ (n x m), its rows contiguous: A's columns lie contiguous.
    Columns(MatrixView<'a, f64>),
}

impl<'a> Design<'a> {
    /// `a` by its contiguous lines, or `None` where neither its rows nor its columns are.
    pub(crate) fn of(a: MatrixView<'a, f64>) -> Option<Self> {
        if a.rows_contiguous() {
            Some(Design::Rows(a))
        } else if a.transpose().rows_contiguous() {
            Some(Design::Columns(a.transpose()))
        } else {
            None
        }
    }

    /// A itself.
    pub(crate) fn view(&self) -> MatrixView<'a, f64> {
        match *self {
            Design::Rows(a) => a,
            Design::Columns(t) => t.transpose(),
        }
    }

    /// (m, n).
    pub(crate) fn shape(&self) -> (usize, usize) {
        self.view().shape()
    }

    /// A·v for v of length n, over all cores.
    pub(crate) fn times(&self, v: &[f64]) -> Vec<f64> {
        match *self {
            Design::Rows(a) => rows_times(a, v),
            Design::Columns(t) => transposed_times(t, v),
        }
    }

    /// Aᵀ·x for x of length m, over all cores.
    pub(crate) fn transposed_times(&self, x: &[f64]) -> Vec<f64> {
        match *self {
            Design::Rows(a) => transposed_times(a, x),
            Design::Columns(t) => rows_times(t, x),
        }
    }

    /// `f` of every entry of A, row-major (A's columns turned into rows as they are copied
    /// where A lies by columns), over all cores.
    pub(crate) fn map_row_major<U: Copy + Default + Send>(
        &self,
        f: impl Fn(f64) -> U + Sync,
    ) -> Matrix<U> {
        let (m, n) = self.shape();
        let mut out = vec![U::default(); m * n];
        if m * n > 0 {
            match *self {
                Design::Rows(a) => out.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
                    for (o, &v) in row.iter_mut().zip(a.row(i)) {
                        *o = f(v);
                    }
                }),
                // Bands of BAND rows of A: each row of Aᵀ gives one column of the band.
                Design::Columns(t) => {
                    const BAND: usize = 64;
                    out.par_chunks_mut(BAND * n)
                        .enumerate()
                        .for_each(|(b, band)| {
                            let (i0, height) = (b * BAND, band.len() / n);
                            for k in 0..n {
                                let line = &t.row(k)[i0..i0 + height];
                                for (r, &v) in line.iter().enumerate() {
                                    band[r * n + k] = f(v);
                                }
                            }
                        })
                }
            }
        }
        Matrix::from_row_major(m, n, out).expect("m x n values")
    }
}

/// `a` in f64 by contiguous lines: borrowed where it is f64 with rows or columns contiguous;
/// otherwise copied into `store`: f32 widened line by line (exactly, its layout kept), and a
/// view with neither rows nor columns contiguous in row-major order.
pub(crate) fn design_of<'a, T: Element>(
    a: MatrixView<'a, T>,
    store: &'a mut Vec<f64>,
) -> Result<Design<'a>> {
    if let Some(design) = T::as_double_view(a).and_then(Design::of) {
        return Ok(design);
    }
    let (m, n) = a.shape();
    let mut values = crate::memory::with_capacity(m * n, || format!("A in f64 ({m}x{n})"))?;
    let by_columns = !a.rows_contiguous() && a.transpose().rows_contiguous();
    if a.rows_contiguous() || by_columns {
        let lines = if by_columns { a.transpose() } else { a };
        for k in 0..lines.rows() {
            values.extend(lines.row(k).iter().map(|&v| v.into()));
        }
    } else {
        for i in 0..m {
            values.extend((0..n).map(|j| a.get(i, j).into()));
        }
    }
    *store = values;
    let store: &'a [f64] = store;
    Ok(if by_columns {
        Design::Columns(MatrixView::new(store, n, m, m, 1)?)
    } else {
        Design::Rows(MatrixView::new(store, m, n, n, 1)?)
    })
}

/// r·v for r with contiguous rows: one dot product per row, over all cores.
fn rows_times(r: MatrixView<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..r.rows())
        .into_par_iter()
        .map(|i| r.row(i).iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// rᵀ·v for r with contiguous rows: by column blocks, so that each thread sums its own part of
/// the result while reading r's rows along memory.
fn transposed_times(r: MatrixView<'_, f64>, v: &[f64]) -> Vec<f64> {
    const COLUMNS: usize = 512;
    let mut t = vec![0.0; r.cols()];
    t.par_chunks_mut(COLUMNS)
        .enumerate()
        .for_each(|(block, t)| {
            let j0 = block * COLUMNS;
            for (i, &vi) in v.iter().enumerate() {
                let row = &r.row(i)[j0..j0 + t.len()];
                for (t, &rij) in t.iter_mut().zip(row) {
                    *t += rij * vi;
                }
            }
        });
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A by rows and the same A by columns (through its transpose, with gaps between the
    /// lines that hold NaN) give the same products and the same rounded copy.
    #[test]
    fn both_layouts_give_the_same_products() {
        for (m, n) in [(1, 1), (3, 5), (17, 34), (130, 600)] {
            let a = Matrix::from_fn(m, n, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.5);
            // Aᵀ row by row with two NaNs after each line.
            let stride = m + 2;
            let mut data = vec![f64::NAN; n * stride];
            for k in 0..n {
                for i in 0..m {
                    data[k * stride + i] = a[(i, k)];
                }
            }
            let columns = MatrixView::new(&data, m, n, 1, stride).unwrap();
            let by_columns = Design::of(columns).unwrap();
            assert!(n == 1 || matches!(by_columns, Design::Columns(_)));
            let by_rows = Design::of((&a).into()).unwrap();
            let v: Vec<f64> = (0..n).map(|k| (k % 5) as f64 - 2.0).collect();
            let x: Vec<f64> = (0..m).map(|i| (i % 3) as f64 + 0.5).collect();
            let close = |p: &[f64], q: &[f64]| {
                p.iter()
                    .zip(q)
                    .all(|(p, q)| (p - q).abs() <= 1e-12 * q.abs().max(1.0))
            };
            assert!(close(&by_columns.times(&v), &by_rows.times(&v)));
            assert!(close(
                &by_columns.transposed_times(&x),
                &by_rows.transposed_times(&x)
            ));
            let f = |v: f64| (v * 0.25) as f32;
            assert_eq!(by_columns.map_row_major(f), a.map(f));
            let mut store = Vec::new();
            let widened = design_of(columns.transpose().transpose(), &mut store).unwrap();
            assert!(
                n == 1 || matches!(widened, Design::Columns(_)),
                "kept as it lies"
            );
        }
    }
}
