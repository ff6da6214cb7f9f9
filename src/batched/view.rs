//! [`BatchRef`]: B problems' matrices (or vectors) of one shape lent from the caller's array,
//! each entry (p, i, j) at `p·problem_stride + i·row_stride + j·col_stride`, as NumPy's
//! (B, rows, cols) arrays with non-negative strides (in elements). The batched operations read
//! it where it lies: a stack of transposed problems (least squares' X (B, k, n) read as A = Xᵀ)
//! is the same values with the row and column strides swapped, no copy.

use crate::error::{Error, Result};

/// A borrowed batch of `count` matrices of `rows` x `cols` (a vector is a matrix of one
/// column) at any non-negative strides within `data`, as faer's `MatRef` for one matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchRef<'a, T = f32> {
    data: &'a [T],
    count: usize,
    rows: usize,
    cols: usize,
    strides: [usize; 3],
}

/// What the batched operations take: a [`Batch`](super::Batch) (lending its values) or a
/// [`BatchRef`].
pub trait AsBatchRef {
    /// The element type.
    type Elem: Copy;
    /// The batch as a view.
    fn as_batch_ref(&self) -> BatchRef<'_, Self::Elem>;
}

impl<T: Copy> AsBatchRef for BatchRef<'_, T> {
    type Elem = T;
    fn as_batch_ref(&self) -> BatchRef<'_, T> {
        *self
    }
}

impl<'a, T: Copy> BatchRef<'a, T> {
    /// `count` matrices of `rows` x `cols` stored as [`Batch::new`](super::Batch::new) stores them (row-major,
    /// the batch outer, no gaps); a length other than count·rows·cols is
    /// [`InputError::Shape`](crate::InputError::Shape).
    pub fn new(count: usize, rows: usize, cols: usize, data: &'a [T]) -> Result<Self> {
        let size = rows
            .checked_mul(cols)
            .ok_or_else(|| too_large(count, rows, cols))?;
        let expected = count
            .checked_mul(size)
            .ok_or_else(|| too_large(count, rows, cols))?;
        if data.len() != expected {
            return Err(Error::shape(format!(
                "a batch of {count} matrices of {rows}x{cols} holds {expected} values, but \
                 {} were given",
                data.len()
            )));
        }
        Ok(Self {
            data,
            count,
            rows,
            cols,
            strides: [size, cols, 1],
        })
    }

    /// `count` vectors of `len` entries (shape (count, len)), as [`BatchRef::new`] with one
    /// column.
    pub fn vectors(count: usize, len: usize, data: &'a [T]) -> Result<Self> {
        Self::new(count, len, 1, data)
    }

    /// `count` matrices of `rows` x `cols` with entry (p, i, j) at `data[p·strides[0] +
    /// i·strides[1] + j·strides[2]]`; an entry past `data`'s end is
    /// [`InputError::Shape`](crate::InputError::Shape).
    pub fn from_strides(
        count: usize,
        rows: usize,
        cols: usize,
        strides: [usize; 3],
        data: &'a [T],
    ) -> Result<Self> {
        let extent =
            extent(count, rows, cols, strides).ok_or_else(|| too_large(count, rows, cols))?;
        if extent > data.len() {
            return Err(Error::shape(format!(
                "a batch of {count} matrices of {rows}x{cols} at strides {strides:?} reaches \
                 {extent} values, but {} were given",
                data.len()
            )));
        }
        Ok(Self {
            data,
            count,
            rows,
            cols,
            strides,
        })
    }

    /// Each problem's transpose (cols x rows), the same values: no copy.
    pub fn transpose(self) -> Self {
        let [p, r, c] = self.strides;
        Self {
            rows: self.cols,
            cols: self.rows,
            strides: [p, c, r],
            ..self
        }
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

    /// The strides, in elements, between problems, rows and columns.
    pub fn strides(&self) -> [usize; 3] {
        self.strides
    }

    /// The values lent (all that the strides reach and maybe more).
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    /// Whether the entries lie as [`Batch`](super::Batch) stores them (row-major, the batch outer, no
    /// gaps): the strides of one row or column do not matter where it has one entry.
    pub fn is_compact(&self) -> bool {
        compact(self.strides, self.count, self.rows, self.cols)
    }

    /// Entry (p, i, j); panics outside the shape.
    pub fn get(&self, p: usize, i: usize, j: usize) -> T {
        assert!(
            p < self.count && i < self.rows && j < self.cols,
            "entry ({p}, {i}, {j}) lies outside a batch of {:?}",
            self.shape()
        );
        let [ps, rs, cs] = self.strides;
        self.data[p * ps + i * rs + j * cs]
    }

    /// Row i of problem p where its entries are adjacent (column stride 1, or one column).
    pub(crate) fn row_slice(&self, p: usize, i: usize) -> Option<&'a [T]> {
        let [ps, rs, cs] = self.strides;
        (cs == 1 || self.cols <= 1).then(|| {
            let start = p * ps + i * rs;
            &self.data[start..start + self.cols]
        })
    }

    /// Whether each problem's values fill the span they cover (its rows and columns in either
    /// order, no gaps).
    fn problems_fill_spans(&self) -> bool {
        let [_, rs, cs] = self.strides;
        let (rows, cols) = (self.rows, self.cols);
        let rows_adjacent = rows <= 1 || rs == if cols <= 1 { 1 } else { cols };
        let cols_adjacent = cols <= 1 || cs == 1;
        let columns_first = rows > 1 && cols > 1 && rs == 1 && cs == rows;
        (rows_adjacent && cols_adjacent) || columns_first
    }

    /// Problem p's values in memory order where they fill the span they cover (its rows and
    /// columns in either order, no gaps).
    pub(crate) fn problem_span(&self, p: usize) -> Option<&'a [T]> {
        let size = self.rows * self.cols;
        (size > 0 && self.problems_fill_spans()).then(|| {
            let start = p * self.strides[0];
            &self.data[start..start + size]
        })
    }

    /// Whether problem p's values fill values p·rows·cols .. (p + 1)·rows·cols (a compact
    /// stack, or its transpose in place): the batch's span holds nothing else.
    pub(crate) fn is_dense(&self) -> bool {
        let size = self.rows * self.cols;
        (self.count <= 1 || self.strides[0] == size) && (size == 0 || self.problems_fill_spans())
    }
}

/// The values a batch of that shape and strides reaches: one past its last entry (0 when it has
/// none); `None` past the address space.
pub(crate) fn extent(count: usize, rows: usize, cols: usize, strides: [usize; 3]) -> Option<usize> {
    if count == 0 || rows == 0 || cols == 0 {
        return Some(0);
    }
    let [p, r, c] = strides;
    (count - 1)
        .checked_mul(p)?
        .checked_add((rows - 1).checked_mul(r)?)?
        .checked_add((cols - 1).checked_mul(c)?)?
        .checked_add(1)
}

fn too_large(count: usize, rows: usize, cols: usize) -> Error {
    Error::shape(format!(
        "a batch of {count} matrices of {rows}x{cols} is too large to address"
    ))
}

/// Whether values at `strides` lie row-major with the batch outer and no gaps.
pub(crate) fn compact(strides: [usize; 3], count: usize, rows: usize, cols: usize) -> bool {
    let [p, r, c] = strides;
    (count <= 1 || p == rows * cols) && (rows <= 1 || r == cols) && (cols <= 1 || c == 1)
}
