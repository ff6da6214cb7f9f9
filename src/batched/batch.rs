//! [`Batch`]: B problems' matrices (or vectors) of one shape in one contiguous row-major
//! array, the batch outer, as NumPy's (B, rows, cols) and (B, len) arrays.

use super::view::{AsBatchRef, BatchRef};
use crate::error::{Error, InputError, Result};
use crate::matrix::{Element, Matrix};

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
        // The shape is the borrowed view's: one check, one message.
        BatchRef::new(count, rows, cols, &data)?;
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

    /// The batch lent as a [`BatchRef`] (no copy).
    pub fn view(&self) -> BatchRef<'_, T> {
        BatchRef::new(self.count, self.rows, self.cols, &self.data)
            .expect("a Batch fills its shape")
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
        let read = match lower_only {
            true => super::checks::Read::Lower { check_upper: false },
            false => super::checks::Read::All,
        };
        Ok(super::scaling::rounded(input, self.view(), read, false)?.0)
    }
}

/// Checks that `batch` holds `count` problems of `rows` x `cols`, naming `input` and `what`
/// the shape follows from.
pub(crate) fn check_shape<T: Copy>(
    input: &str,
    batch: &BatchRef<'_, T>,
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
        let (b, r, c) = batch.shape();
        let got = if c == 1 {
            format!("({b}, {r})")
        } else {
            format!("({b}, {r}, {c})")
        };
        return Err(
            InputError::Shape(format!("{input} must be {want} ({what}), but is {got}")).into(),
        );
    }
    Ok(())
}

impl<T: Copy> AsBatchRef for Batch<T> {
    type Elem = T;
    fn as_batch_ref(&self) -> BatchRef<'_, T> {
        self.view()
    }
}

impl<T: Copy> BatchRef<'_, T> {
    /// The values copied into a [`Batch`] (row-major, the batch outer).
    pub fn to_batch(&self) -> Result<Batch<T>> {
        let (count, rows, cols) = self.shape();
        let len = count * rows * cols;
        let mut data = crate::memory::with_capacity(len, || {
            format!("a copy of a {count}x{rows}x{cols} batch")
        })?;
        if self.is_compact() {
            data.extend_from_slice(&self.as_slice()[..len]);
        } else {
            for p in 0..count {
                for i in 0..rows {
                    data.extend((0..cols).map(|j| self.get(p, i, j)));
                }
            }
        }
        Batch::new(count, rows, cols, data)
    }
}
