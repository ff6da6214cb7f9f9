//! [`Batch`]: B problems' matrices (or vectors) of one shape in one contiguous row-major
//! array, the batch outer, as NumPy's (B, rows, cols) and (B, len) arrays.

use crate::error::{Error, InputError, Result};
use crate::matrix::{Element, Matrix, single_precision_error};
use crate::scaling::times_power_of_two;

/// B matrices of `rows` x `cols` (a vector is a matrix of one column), stored one after the
/// other, each row-major: entry (p, i, j) at `(p·rows + i)·cols + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch<T = f32> {
    count: usize,
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T: Copy> Batch<T> {
    /// `count` matrices of `rows` x `cols` from `data` (row-major, the batch outer); a length
    /// other than count·rows·cols is [`InputError::Shape`].
    pub fn new(count: usize, rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        let expected = count
            .checked_mul(rows)
            .and_then(|v| v.checked_mul(cols))
            .ok_or_else(|| {
                Error::shape(format!(
                    "a batch of {count} matrices of {rows}x{cols} is too large to address"
                ))
            })?;
        if data.len() != expected {
            return Err(Error::shape(format!(
                "a batch of {count} matrices of {rows}x{cols} holds {expected} values, but \
                 {} were given",
                data.len()
            )));
        }
        Ok(Self {
            count,
            rows,
            cols,
            data,
        })
    }

    /// `count` vectors of `len` entries (shape (count, len)), as [`Batch::new`] with one
    /// column.
    pub fn vectors(count: usize, len: usize, data: Vec<T>) -> Result<Self> {
        Self::new(count, len, 1, data)
    }

    /// The batch of these matrices, which must all have one shape (at least one matrix).
    pub fn from_matrices(matrices: &[Matrix<T>]) -> Result<Self> {
        let Some(first) = matrices.first() else {
            return Err(Error::shape(
                "a batch made from matrices needs at least one (use Batch::new for an empty one)",
            ));
        };
        let (rows, cols) = first.shape();
        let mut data = Vec::with_capacity(matrices.len() * rows * cols);
        for (p, m) in matrices.iter().enumerate() {
            if m.shape() != (rows, cols) {
                return Err(Error::shape(format!(
                    "a batch holds matrices of one shape, but matrix 0 is {rows}x{cols} and \
                     matrix {p} is {}x{}",
                    m.rows(),
                    m.cols()
                )));
            }
            data.extend_from_slice(m.as_slice());
        }
        Self::new(matrices.len(), rows, cols, data)
    }

    /// B, the number of problems.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Rows of each matrix (a vector's length).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of each matrix (1 for vectors).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// (count, rows, cols).
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.count, self.rows, self.cols)
    }

    /// All values, row-major, the batch outer.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The values, consumed.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Problem p's values (rows·cols of them).
    pub fn problem(&self, p: usize) -> &[T] {
        let size = self.rows * self.cols;
        &self.data[p * size..(p + 1) * size]
    }

    /// Problem p's matrix.
    pub fn matrix(&self, p: usize) -> Matrix<T> {
        Matrix::from_row_major(self.rows, self.cols, self.problem(p).to_vec())
            .expect("rows*cols values")
    }
}

impl<T: Element> Batch<T> {
    /// The values in f32 for the GPU, after checking that each is finite and within float32's
    /// range (naming `input`, the problem and the position); with `lower_only`, entries
    /// above the diagonal are neither read nor checked (they become 0). The operations call
    /// it; a caller may too, to check a batch before the GPU is opened.
    pub fn single(&self, input: &str, lower_only: bool) -> Result<Vec<f32>> {
        self.single_scaled(input, lower_only, None)
    }

    /// [`Batch::single`] with problem p divided by 2^`exponents[p]` first (exact wherever the
    /// result is a normal number), the checks applied to the scaled values.
    pub(crate) fn single_scaled(
        &self,
        input: &str,
        lower_only: bool,
        exponents: Option<&[i32]>,
    ) -> Result<Vec<f32>> {
        use rayon::prelude::*;
        let (rows, cols) = (self.rows, self.cols);
        let size = rows * cols;
        let mut out =
            crate::memory::zeros::<f32>(self.data.len(), || format!("{input} rounded to float32"))?;
        if size == 0 {
            return Ok(out);
        }
        // Problem by problem over all cores; a problem with a bad value stops at its first one,
        // and the first such problem is reported.
        let bad = out
            .par_chunks_mut(size)
            .zip(self.data.par_chunks(size))
            .enumerate()
            .with_min_len(64)
            .filter_map(|(p, (out, values))| {
                let e = exponents.map_or(0, |e| e[p]);
                for i in 0..rows {
                    let width = if lower_only { cols.min(i + 1) } else { cols };
                    let row = &values[i * cols..i * cols + width];
                    for (j, (o, &v)) in out[i * cols..].iter_mut().zip(row).enumerate() {
                        let value = times_power_of_two(v.into(), -e);
                        if value.is_nan() || value.abs() > f64::from(f32::MAX) {
                            return Some((p, i, j, value));
                        }
                        *o = value as f32;
                    }
                }
                None
            })
            .min_by_key(|&(p, ..)| p);
        if let Some((p, i, j, value)) = bad {
            let position = || {
                if cols == 1 {
                    format!("problem {p}, index {i} (0-based)")
                } else {
                    format!("problem {p}, row {i}, column {j} (0-based)")
                }
            };
            if let Some(e) = single_precision_error(input, &position, value) {
                return Err(e);
            }
        }
        Ok(out)
    }
}

/// Checks that `batch` holds `count` problems of `rows` x `cols`, naming `input` and `what`
/// the shape follows from.
pub(crate) fn check_shape<T: Copy>(
    input: &str,
    batch: &Batch<T>,
    count: usize,
    rows: usize,
    cols: usize,
    what: &str,
) -> Result<()> {
    if batch.shape() != (count, rows, cols) {
        let want = if cols == 1 {
            format!("({count}, {rows})")
        } else {
            format!("({count}, {rows}, {cols})")
        };
        let got = if batch.cols == 1 {
            format!("({}, {})", batch.count, batch.rows)
        } else {
            format!("({}, {}, {})", batch.count, batch.rows, batch.cols)
        };
        return Err(
            InputError::Shape(format!("{input} must be {want} ({what}), but is {got}")).into(),
        );
    }
    Ok(())
}
