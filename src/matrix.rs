//! A small dense row-major host matrix, the type users hand to and get back from the GPU.

use crate::error::{Error, InputError, Result};
use std::ops::{Index, IndexMut};

/// A dense matrix stored row by row: entry (i, j) is `data[i * cols + j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T = f32> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T: Copy> Matrix<T> {
    /// Wraps row-major data; fails when `data.len() != rows * cols`.
    pub fn from_row_major(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::shape(format!(
                "{rows}x{cols} matrix needs {} values, got {}",
                rows.saturating_mul(cols),
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    /// Builds a matrix from column-major data (Fortran order).
    pub fn from_col_major(rows: usize, cols: usize, data: &[T]) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::shape(format!(
                "{rows}x{cols} matrix needs {} values, got {}",
                rows.saturating_mul(cols),
                data.len()
            )));
        }
        Ok(Self::from_fn(rows, cols, |i, j| data[i + j * rows]))
    }

    /// Builds a matrix whose entry (i, j) is `f(i, j)`.
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut data = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            for j in 0..cols {
                data.push(f(i, j));
            }
        }
        Self { rows, cols, data }
    }

    /// A matrix with every entry equal to `value`.
    pub fn filled(rows: usize, cols: usize, value: T) -> Self {
        Self {
            rows,
            cols,
            data: vec![value; rows * cols],
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// (rows, cols).
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The row-major data.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The row-major data, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Gives back the row-major data.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Row `i` as a slice.
    pub fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Applies `f` to every entry.
    pub fn map<U: Copy>(&self, mut f: impl FnMut(T) -> U) -> Matrix<U> {
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|&x| f(x)).collect(),
        }
    }

    /// [`Matrix::map`] on all cores for large matrices (the order of calls is unspecified): the
    /// host passes around the GPU's work (scaling, rounding) of order-4096 and larger inputs.
    pub fn par_map<U: Copy + Send>(&self, f: impl Fn(T) -> U + Sync + Send) -> Matrix<U>
    where
        T: Sync,
    {
        use rayon::prelude::*;
        let data = if self.data.len() < 1 << 18 {
            self.data.iter().map(|&x| f(x)).collect()
        } else {
            self.data
                .par_iter()
                .with_min_len(1 << 16)
                .map(|&x| f(x))
                .collect()
        };
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data,
        }
    }

    /// [`Matrix::par_map`] into an allocation made first, so that a matrix the memory cannot
    /// hold is [`Error::OutOfMemory`] naming `what` ("C rounded to float32"), not an abort.
    pub fn try_map<U: Copy + Send>(
        &self,
        f: impl Fn(T) -> U + Sync + Send,
        what: impl FnOnce() -> String,
    ) -> Result<Matrix<U>>
    where
        T: Sync,
    {
        let data = crate::memory::par_map(
            &self.data,
            |&x| f(x),
            || format!("{} ({}x{})", what(), self.rows, self.cols),
        )?;
        Ok(Matrix {
            rows: self.rows,
            cols: self.cols,
            data,
        })
    }

    /// A copy, or [`Error::OutOfMemory`] naming `what`.
    pub fn try_clone(&self, what: impl FnOnce() -> String) -> Result<Self> {
        let data = crate::memory::copy(&self.data, || {
            format!("{} ({}x{})", what(), self.rows, self.cols)
        })?;
        Ok(Matrix {
            rows: self.rows,
            cols: self.cols,
            data,
        })
    }

    /// The transpose.
    pub fn transpose(&self) -> Self {
        Self::from_fn(self.cols, self.rows, |i, j| self[(j, i)])
    }

    /// The data in column-major (Fortran) order.
    pub fn to_col_major(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.data.len());
        for j in 0..self.cols {
            for i in 0..self.rows {
                out.push(self[(i, j)]);
            }
        }
        out
    }
}

impl<T: Copy + Default> Matrix<T> {
    /// A matrix of zeros (`T::default()`).
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self::filled(rows, cols, T::default())
    }

    /// The lower triangle with the diagonal; the strict upper triangle set to zero.
    pub fn lower_triangle(&self) -> Self {
        Self::from_fn(self.rows, self.cols, |i, j| {
            if j <= i { self[(i, j)] } else { T::default() }
        })
    }

    /// [`Matrix::lower_triangle`], or [`Error::OutOfMemory`] naming `what`.
    pub fn try_lower_triangle(&self, what: impl FnOnce() -> String) -> Result<Self> {
        let mut lower = self.try_clone(what)?;
        for i in 0..self.rows {
            let start = i * self.cols + (i + 1).min(self.cols);
            lower.data[start..(i + 1) * self.cols].fill(T::default());
        }
        Ok(lower)
    }

    /// The symmetric matrix whose lower triangle (with diagonal) is this one's.
    pub fn symmetric_from_lower(&self) -> Self {
        Self::from_fn(self.rows, self.cols, |i, j| {
            if j <= i { self[(i, j)] } else { self[(j, i)] }
        })
    }
}

impl Matrix<f32> {
    /// Widens every entry to f64.
    pub fn to_f64(&self) -> Matrix<f64> {
        self.par_map(f64::from)
    }
}

impl Matrix<f64> {
    /// Rounds every entry to f32.
    pub fn to_f32(&self) -> Matrix<f32> {
        self.par_map(|x| x as f32)
    }

    /// `self` times `c`, borrowed as it is where `c` is 1 (no copy of a large input for the
    /// power-of-two scalings that are usually exact no-ops).
    pub fn scaled(&self, c: f64) -> std::borrow::Cow<'_, Matrix<f64>> {
        if c == 1.0 {
            std::borrow::Cow::Borrowed(self)
        } else {
            std::borrow::Cow::Owned(self.par_map(|v| v * c))
        }
    }

    /// Frobenius norm. Large matrices are summed in fixed chunks on all cores and the chunk
    /// sums added in order, so the result does not depend on the thread count.
    pub fn frobenius_norm(&self) -> f64 {
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 16;
        let sum = |c: &[f64]| c.iter().map(|x| x * x).sum::<f64>();
        if self.data.len() <= CHUNK {
            return sum(&self.data).sqrt();
        }
        let sums: Vec<f64> = self.data.par_chunks(CHUNK).map(sum).collect();
        sums.iter().sum::<f64>().sqrt()
    }
}

/// ‖a − b‖_F / ‖b‖_F in f64 (0 when both are zero); shapes must agree.
pub fn relative_error<A, B>(a: &Matrix<A>, b: &Matrix<B>) -> f64
where
    A: Copy + Into<f64>,
    B: Copy + Into<f64>,
{
    assert_eq!(a.shape(), b.shape(), "relative_error: shapes differ");
    let mut diff = 0.0;
    let mut norm = 0.0;
    for (&x, &y) in a.as_slice().iter().zip(b.as_slice()) {
        let (x, y): (f64, f64) = (x.into(), y.into());
        diff += (x - y) * (x - y);
        norm += y * y;
    }
    if norm == 0.0 {
        diff.sqrt()
    } else {
        (diff / norm).sqrt()
    }
}

impl<T> Index<(usize, usize)> for Matrix<T> {
    type Output = T;
    fn index(&self, (i, j): (usize, usize)) -> &T {
        assert!(
            i < self.rows && j < self.cols,
            "index ({i}, {j}) out of {}x{}",
            self.rows,
            self.cols
        );
        &self.data[i * self.cols + j]
    }
}

impl<T> IndexMut<(usize, usize)> for Matrix<T> {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        assert!(
            i < self.rows && j < self.cols,
            "index ({i}, {j}) out of {}x{}",
            self.rows,
            self.cols
        );
        &mut self.data[i * self.cols + j]
    }
}

/// A dense matrix borrowed where it lies, as BLAS and faer's `MatRef` read one: entry (i, j)
/// is `data[i·row_stride + j·col_stride]`. A row-major or column-major array (a numpy array in
/// C or Fortran order), the transpose of either, or a block of a larger one; nothing outside
/// those positions is read.
#[derive(Clone, Copy, Debug)]
pub struct MatrixView<'a, T = f64> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, T: Copy> MatrixView<'a, T> {
    /// The rows x cols matrix at `data[i·row_stride + j·col_stride]`; a `data` too short for
    /// those positions is [`InputError::Shape`].
    ///
    /// ```
    /// use symraster::matrix::MatrixView;
    /// // The 2x3 matrix [[1, 2, 3], [4, 5, 6]] stored by columns.
    /// let a = MatrixView::new(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0], 2, 3, 1, 2)?;
    /// assert_eq!((a.get(0, 2), a.transpose().get(2, 1)), (3.0, 6.0));
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self> {
        let last = if rows == 0 || cols == 0 {
            Some(0)
        } else {
            (rows - 1)
                .checked_mul(row_stride)
                .zip((cols - 1).checked_mul(col_stride))
                .and_then(|(r, c)| r.checked_add(c)?.checked_add(1))
        };
        match last {
            Some(needed) if needed <= data.len() => Ok(Self {
                data,
                rows,
                cols,
                row_stride,
                col_stride,
            }),
            _ => Err(Error::shape(format!(
                "a {rows}x{cols} view with strides ({row_stride}, {col_stride}) reaches past \
                 the {} values given",
                data.len()
            ))),
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// (rows, cols).
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// (row stride, column stride), in values.
    pub fn strides(&self) -> (usize, usize) {
        (self.row_stride, self.col_stride)
    }

    /// Entry (i, j); panics outside the shape.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(
            i < self.rows && j < self.cols,
            "index ({i}, {j}) out of {}x{}",
            self.rows,
            self.cols
        );
        self.data[i * self.row_stride + j * self.col_stride]
    }

    /// The transpose, over the same memory.
    pub fn transpose(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether each row lies contiguous (column stride 1, or a single column).
    pub fn rows_contiguous(&self) -> bool {
        self.col_stride == 1 || self.cols <= 1
    }

    /// Row `i` as a slice, where rows are contiguous ([`MatrixView::rows_contiguous`]).
    #[inline]
    pub fn row(&self, i: usize) -> &'a [T] {
        assert!(
            self.rows_contiguous() && i < self.rows,
            "row {i} is no slice"
        );
        if self.cols == 0 {
            return &[];
        }
        &self.data[i * self.row_stride..i * self.row_stride + self.cols]
    }

    /// The entries as one slice in row-major order, where rows are contiguous and follow
    /// each other without a gap.
    pub fn as_row_major(&self) -> Option<&'a [T]> {
        let dense = self.rows_contiguous() && (self.row_stride == self.cols || self.rows <= 1);
        dense.then(|| &self.data[..self.rows * self.cols])
    }

    /// A row-major copy.
    pub fn to_matrix(&self) -> Matrix<T> {
        Matrix::from_fn(self.rows, self.cols, |i, j| self.get(i, j))
    }
}

impl<'a, T: Copy> From<&'a Matrix<T>> for MatrixView<'a, T> {
    fn from(m: &'a Matrix<T>) -> Self {
        Self {
            data: &m.data,
            rows: m.rows,
            cols: m.cols,
            row_stride: m.cols,
            col_stride: 1,
        }
    }
}

impl<T: Copy> From<Matrix<T>> for Vec<T> {
    fn from(m: Matrix<T>) -> Vec<T> {
        m.into_vec()
    }
}

/// Checks that a matrix has at least one row and one column.
pub fn check_non_empty<T>(input: &str, m: &Matrix<T>) -> Result<()> {
    if m.rows == 0 || m.cols == 0 {
        return Err(Error::from(InputError::Empty {
            input: input.to_string(),
            rows: m.rows,
            cols: m.cols,
        }));
    }
    Ok(())
}

/// Checks that a matrix is square and not empty; `what` says why it must be square.
pub fn check_square<T>(input: &str, m: &Matrix<T>, what: &str) -> Result<()> {
    check_non_empty(input, m)?;
    if m.rows != m.cols {
        return Err(Error::shape(format!(
            "{input} must be square {what}, but is {}x{}",
            m.rows, m.cols
        )));
    }
    Ok(())
}

/// Checks that every value is finite, naming the input and the first bad position.
pub fn check_finite<T: Copy + Into<f64> + Sync>(input: &str, m: &Matrix<T>) -> Result<()> {
    if let Some(p) = first_non_finite(m.as_slice()) {
        let (i, j) = (p / m.cols, p % m.cols);
        return Err(Error::from(InputError::NonFinite {
            input: input.to_string(),
            position: format!("row {i}, column {j} (0-based)"),
            value: m.data[p].into(),
        }));
    }
    Ok(())
}

/// [`check_finite`] of a borrowed view, the position in the view's rows and columns: one pass
/// over its entries alone (never the gaps between them), on all cores where its rows or its
/// columns lie contiguous.
pub fn check_finite_view<T: Copy + Into<f64> + Sync>(
    input: &str,
    v: MatrixView<'_, T>,
) -> Result<()> {
    use rayon::prelude::*;
    let bad = |x: T| !x.into().is_finite();
    let in_lines = |l: MatrixView<'_, T>| match l.as_row_major() {
        Some(s) => first_non_finite(s).map(|p| (p / l.cols, p % l.cols)),
        None => (0..l.rows)
            .into_par_iter()
            .position_first(|i| !all_finite(l.row(i)))
            .map(|i| (i, l.row(i).iter().position(|&x| bad(x)).unwrap_or(0))),
    };
    let found = if v.rows_contiguous() {
        in_lines(v)
    } else if v.transpose().rows_contiguous() {
        in_lines(v.transpose()).map(|(j, i)| (i, j))
    } else {
        (0..v.rows)
            .flat_map(|i| (0..v.cols).map(move |j| (i, j)))
            .find(|&(i, j)| bad(v.get(i, j)))
    };
    match found {
        Some((i, j)) => Err(Error::from(InputError::NonFinite {
            input: input.to_string(),
            position: format!("row {i}, column {j} (0-based)"),
            value: v.get(i, j).into(),
        })),
        None => Ok(()),
    }
}

/// Whether every value is finite: one pass with no early exit, which the compiler vectorizes.
pub(crate) fn all_finite<T: Copy + Into<f64>>(c: &[T]) -> bool {
    !c.iter().fold(false, |bad, &x| bad | !x.into().is_finite())
}

/// The index of the first non-finite value: chunks over all cores checked by [`all_finite`],
/// the position searched only in a chunk that has one.
fn first_non_finite<T: Copy + Into<f64> + Sync>(v: &[T]) -> Option<usize> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 15;
    let chunk = v.par_chunks(CHUNK).position_first(|c| !all_finite(c))?;
    let start = chunk * CHUNK;
    v[start..]
        .iter()
        .position(|&x| !x.into().is_finite())
        .map(|p| start + p)
}

/// [`check_finite`] of the lower triangle (with the diagonal) only, in place: no copy of the
/// matrix is made to check it.
pub fn check_finite_lower<T: Copy + Into<f64> + Sync>(input: &str, m: &Matrix<T>) -> Result<()> {
    use rayon::prelude::*;
    let row = |i: usize| &m.data[i * m.cols..i * m.cols + m.cols.min(i + 1)];
    let bad = (0..m.rows)
        .into_par_iter()
        .position_first(|i| !all_finite(row(i)));
    if let Some(i) = bad {
        let row = row(i);
        if let Some(j) = row.iter().position(|&x| !x.into().is_finite()) {
            return Err(Error::from(InputError::NonFinite {
                input: input.to_string(),
                position: format!("row {i}, column {j} (0-based)"),
                value: row[j].into(),
            }));
        }
    }
    Ok(())
}

/// Checks that every value of a vector is finite.
pub fn check_finite_vec<T: Copy + Into<f64>>(input: &str, v: &[T]) -> Result<()> {
    if let Some(p) = v.iter().position(|&x| !x.into().is_finite()) {
        return Err(Error::from(InputError::NonFinite {
            input: input.to_string(),
            position: format!("index {p} (0-based)"),
            value: v[p].into(),
        }));
    }
    Ok(())
}

/// Why `value` cannot go to the GPU in float32, if it cannot: NaN or an infinity is
/// [`InputError::NonFinite`]; a finite f64 beyond float32's range (which would round to ±inf)
/// is [`InputError::OutOfSinglePrecision`] with the value itself, never "inf".
pub fn single_precision_error(
    input: &str,
    position: &dyn Fn() -> String,
    value: f64,
) -> Option<Error> {
    if !value.is_finite() {
        return Some(Error::from(InputError::NonFinite {
            input: input.to_string(),
            position: position(),
            value,
        }));
    }
    if value.abs() > f32::MAX as f64 {
        return Some(Error::from(InputError::OutOfSinglePrecision {
            input: input.to_string(),
            position: position(),
            value,
        }));
    }
    None
}

/// The matrix rounded to f32 for the GPU, after checking that every value is finite and
/// within float32's range (naming the input and the first bad position).
pub fn to_single_precision(input: &str, m: &Matrix<f64>) -> Result<Matrix<f32>> {
    check_finite(input, m)?;
    if let Some(p) = m.as_slice().iter().position(|x| x.abs() > f32::MAX as f64) {
        return Err(Error::from(InputError::OutOfSinglePrecision {
            input: input.to_string(),
            position: format!("row {}, column {} (0-based)", p / m.cols, p % m.cols),
            value: m.data[p],
        }));
    }
    m.try_map(|x| x as f32, || format!("{input} rounded to float32"))
}

/// [`to_single_precision`] for a vector.
pub fn to_single_precision_vec(input: &str, v: &[f64]) -> Result<Vec<f32>> {
    check_finite_vec(input, v)?;
    if let Some(p) = v.iter().position(|x| x.abs() > f32::MAX as f64) {
        return Err(Error::from(InputError::OutOfSinglePrecision {
            input: input.to_string(),
            position: format!("index {p} (0-based)"),
            value: v[p],
        }));
    }
    let rounded = v.iter().map(|&x| x as f32);
    Ok(crate::memory::collect(rounded, || {
        format!("{input} rounded to float32 ({} values)", v.len())
    })?)
}

/// The element types the GPU operations accept: `f32`, used as given, and `f64`, rounded to
/// f32 once on the way in (after the operation's power-of-two range scaling where it has one)
/// with a value beyond f32's range an [`InputError::OutOfSinglePrecision`]. Sealed.
pub trait Element: sealed::Sealed + Copy + Into<f64> + Default + Send + Sync + 'static {
    /// The matrix in single precision: `f32` borrowed as is, `f64` rounded (range checked).
    fn single<'a>(input: &str, m: &'a Matrix<Self>) -> Result<std::borrow::Cow<'a, Matrix<f32>>>;
    /// [`Element::single`] for a vector.
    fn single_vec<'a>(input: &str, v: &'a [Self]) -> Result<std::borrow::Cow<'a, [f32]>>;
    /// The matrix in double precision, when it is one (no copy).
    fn as_double(m: &Matrix<Self>) -> Option<&Matrix<f64>>;
    /// [`Element::as_double`] for a borrowed view.
    fn as_double_view(m: MatrixView<'_, Self>) -> Option<MatrixView<'_, f64>>;
    /// An f64 value in this type: `f32` rounded (±inf beyond its range), `f64` as is.
    fn from_double(v: f64) -> Self;
    /// Whether this is `f64` (`false`: `f32`).
    const DOUBLE: bool;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Element for f32 {
    fn single<'a>(_: &str, m: &'a Matrix<f32>) -> Result<std::borrow::Cow<'a, Matrix<f32>>> {
        Ok(std::borrow::Cow::Borrowed(m))
    }
    fn single_vec<'a>(_: &str, v: &'a [f32]) -> Result<std::borrow::Cow<'a, [f32]>> {
        Ok(std::borrow::Cow::Borrowed(v))
    }
    fn as_double(_: &Matrix<f32>) -> Option<&Matrix<f64>> {
        None
    }
    fn as_double_view(_: MatrixView<'_, f32>) -> Option<MatrixView<'_, f64>> {
        None
    }
    fn from_double(v: f64) -> Self {
        v as f32
    }
    const DOUBLE: bool = false;
}

impl Element for f64 {
    fn single<'a>(input: &str, m: &'a Matrix<f64>) -> Result<std::borrow::Cow<'a, Matrix<f32>>> {
        to_single_precision(input, m).map(std::borrow::Cow::Owned)
    }
    fn single_vec<'a>(input: &str, v: &'a [f64]) -> Result<std::borrow::Cow<'a, [f32]>> {
        to_single_precision_vec(input, v).map(std::borrow::Cow::Owned)
    }
    fn as_double(m: &Matrix<f64>) -> Option<&Matrix<f64>> {
        Some(m)
    }
    fn as_double_view(m: MatrixView<'_, f64>) -> Option<MatrixView<'_, f64>> {
        Some(m)
    }
    fn from_double(v: f64) -> Self {
        v
    }
    const DOUBLE: bool = true;
}

impl<T: Copy + Default + From<u8>> Matrix<T> {
    /// The n x n identity.
    pub fn identity(n: usize) -> Self {
        Self::from_fn(n, n, |i, j| T::from((i == j) as u8))
    }
}

impl<T> Matrix<T>
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    /// The product self·other (rows of self by columns of other); a shape mismatch is
    /// [`InputError::Shape`].
    pub fn matmul(&self, other: &Matrix<T>) -> Result<Matrix<T>> {
        if self.cols != other.rows {
            return Err(Error::shape(format!(
                "a {}x{} matrix times a {}x{} one: the inner sizes differ",
                self.rows, self.cols, other.rows, other.cols
            )));
        }
        let mut out = Matrix::zeros(self.rows, other.cols);
        for i in 0..self.rows {
            let row = &mut out.data[i * other.cols..(i + 1) * other.cols];
            for (k, &a) in self.row(i).iter().enumerate() {
                for (o, &b) in row.iter_mut().zip(other.row(k)) {
                    *o = *o + a * b;
                }
            }
        }
        Ok(out)
    }

    /// The product with a vector, self·v; a length mismatch is [`InputError::Shape`].
    pub fn mul_vec(&self, v: &[T]) -> Result<Vec<T>> {
        let v = Matrix::from_row_major(v.len(), 1, v.to_vec())?;
        Ok(self.matmul(&v)?.into_vec())
    }
}

impl<T> std::ops::Mul for &Matrix<T>
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    type Output = Matrix<T>;

    /// [`Matrix::matmul`]; panics where the inner sizes differ.
    fn mul(self, other: &Matrix<T>) -> Matrix<T> {
        self.matmul(other)
            .expect("matrix product: inner sizes differ")
    }
}

macro_rules! elementwise {
    ($trait:ident, $method:ident, $op:tt, $doc:literal) => {
        impl<T: Copy + std::ops::$trait<Output = T>> std::ops::$trait for &Matrix<T> {
            type Output = Matrix<T>;

            #[doc = $doc]
            fn $method(self, other: &Matrix<T>) -> Matrix<T> {
                assert_eq!(self.shape(), other.shape(), "matrix shapes differ");
                Matrix {
                    rows: self.rows,
                    cols: self.cols,
                    data: self.data.iter().zip(&other.data).map(|(&a, &b)| a $op b).collect(),
                }
            }
        }
    };
}

elementwise!(Add, add, +, "The entrywise sum; panics where the shapes differ.");
elementwise!(Sub, sub, -, "The entrywise difference; panics where the shapes differ.");

impl<T: Copy + Into<f64> + Sync> Matrix<T> {
    /// The largest |entry| (0 for an empty matrix; NaN where an entry is NaN), on all cores
    /// for large matrices.
    pub fn max_abs(&self) -> f64 {
        use rayon::prelude::*;
        let nan_max = |m: f64, v: f64| {
            if v.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(v.abs())
            }
        };
        let max = |c: &[T]| c.iter().fold(0.0, |m, &v| nan_max(m, v.into()));
        if self.data.len() <= 1 << 16 {
            return max(&self.data);
        }
        self.data
            .par_chunks(1 << 16)
            .map(max)
            .reduce(|| 0.0, nan_max)
    }
}

impl From<&faer::Mat<f64>> for Matrix<f64> {
    fn from(m: &faer::Mat<f64>) -> Self {
        Matrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
    }
}

impl From<faer::Mat<f64>> for Matrix<f64> {
    fn from(m: faer::Mat<f64>) -> Self {
        Matrix::from(&m)
    }
}

impl From<&Matrix<f64>> for faer::Mat<f64> {
    fn from(m: &Matrix<f64>) -> Self {
        faer::Mat::from_fn(m.rows, m.cols, |i, j| m[(i, j)])
    }
}

impl From<Matrix<f64>> for faer::Mat<f64> {
    fn from(m: Matrix<f64>) -> Self {
        faer::Mat::from(&m)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn products_sums_norms_and_faer_conversions() {
        let a = Matrix::from_row_major(2, 3, vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let at = a.transpose();
        let p = a.matmul(&at).unwrap();
        assert_eq!(p.as_slice(), &[14.0, 32.0, 32.0, 77.0]);
        assert_eq!(&a * &at, p);
        assert_eq!(a.mul_vec(&[1.0, 0.0, -1.0]).unwrap(), vec![-2.0, -2.0]);
        assert!(a.matmul(&a).is_err());
        assert!(a.mul_vec(&[1.0]).is_err());
        let i = Matrix::<f64>::identity(2);
        assert_eq!(i.matmul(&a).unwrap(), a);
        assert_eq!((&p - &p).max_abs(), 0.0);
        assert_eq!((&i + &i).as_slice(), &[2.0, 0.0, 0.0, 2.0]);
        assert_eq!(a.max_abs(), 6.0);
        let f: faer::Mat<f64> = (&a).into();
        assert_eq!((f.nrows(), f.ncols(), f[(1, 2)]), (2, 3, 6.0));
        assert_eq!(Matrix::from(f), a);
        let single = Matrix::<f32>::identity(3);
        assert_eq!(single.matmul(&single).unwrap(), single);
    }

    use super::*;

    #[test]
    fn layouts_round_trip() {
        let m = Matrix::from_row_major(2, 3, vec![1, 2, 3, 4, 5, 6]).unwrap();
        assert_eq!(m[(1, 0)], 4);
        assert_eq!(m.to_col_major(), vec![1, 4, 2, 5, 3, 6]);
        assert_eq!(Matrix::from_col_major(2, 3, &m.to_col_major()).unwrap(), m);
        assert_eq!(m.transpose()[(2, 1)], 6);
        assert!(Matrix::from_row_major(2, 3, vec![1; 5]).is_err());
    }

    #[test]
    fn par_map_is_map_below_and_above_the_parallel_size() {
        for (rows, cols) in [(3, 5), (700, 600)] {
            let m = Matrix::from_fn(rows, cols, |i, j| (i * cols + j) as f64 * 0.5 - 7.0);
            assert_eq!(m.par_map(|v| (v * 3.0) as f32), m.map(|v| (v * 3.0) as f32));
            assert_eq!(m.to_f32().to_f64(), m.map(|v| f64::from(v as f32)));
        }
    }

    #[test]
    fn max_abs_and_norm_agree_below_and_above_the_parallel_size() {
        for (rows, cols) in [(3, 5), (700, 600)] {
            let mut m = Matrix::from_fn(rows, cols, |i, j| ((i * cols + j) % 97) as f64 - 48.5);
            m[(rows - 1, 1)] = -1e3;
            assert_eq!(m.max_abs(), 1e3);
            let serial = m.as_slice().iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((m.frobenius_norm() - serial).abs() <= 1e-12 * serial);
            m[(rows / 2, 0)] = f64::NAN;
            assert!(m.max_abs().is_nan(), "a NaN entry makes the maximum NaN");
        }
        assert_eq!(Matrix::<f64>::from_fn(0, 0, |_, _| 1.0).max_abs(), 0.0);
    }

    #[test]
    fn triangles() {
        let m = Matrix::from_fn(3, 3, |i, j| (i * 3 + j) as f64);
        let l = m.lower_triangle();
        assert_eq!(l[(0, 2)], 0.0);
        assert_eq!(l[(2, 0)], 6.0);
        let s = m.symmetric_from_lower();
        assert_eq!(s[(0, 2)], 6.0);
    }

    #[test]
    fn finite_checks_name_position() {
        let m = Matrix::from_row_major(2, 2, vec![1.0f32, 2.0, f32::NAN, 0.0]).unwrap();
        let e = check_finite("A", &m).unwrap_err().to_string();
        assert!(e.contains("row 1, column 0"), "{e}");
        let mut upper_nan = Matrix::from_row_major(2, 2, vec![1.0f32, f32::NAN, 2.0, 3.0]).unwrap();
        assert!(check_finite_lower("C", &upper_nan).is_ok());
        upper_nan[(1, 1)] = f32::INFINITY;
        let e = check_finite_lower("C", &upper_nan).unwrap_err().to_string();
        assert!(e.contains("(inf) at row 1, column 1"), "{e}");
        let pos = || "index 3 (0-based)".to_string();
        let e = single_precision_error("A (A.npy)", &pos, 1e39)
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("input A (A.npy) holds 1e39 at index 3 (0-based), beyond single"),
            "{e}"
        );
        let e = single_precision_error("A", &pos, f64::NEG_INFINITY)
            .unwrap()
            .to_string();
        assert!(e.contains("non-finite value (-inf)"), "{e}");
        assert!(single_precision_error("A", &pos, -f32::MAX as f64).is_none());
        assert!(
            check_finite_vec("d", &[1.0f64, f64::INFINITY])
                .unwrap_err()
                .to_string()
                .contains("index 1")
        );
    }
}
