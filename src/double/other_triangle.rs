//! The triangle a factor written into a caller's square leaves alone
//! ([`Gpu::cholesky_double_into`](crate::Gpu::cholesky_double_into)): handed to the caller's
//! own writer, which fills it (scipy's `cho_factor` keeps `a`'s entries there) on a thread of
//! its own while the GPU factors.

use crate::layout::by_rows::SharedRows;
use std::marker::PhantomData;

/// The strict triangle of an order-n row-major square outside a factor's: above L's diagonal,
/// or below U's. Row by row; the factor's own triangle is never reachable from here.
pub struct OtherTriangle<'a> {
    square: *mut f64,
    n: usize,
    upper: bool,
    _square: PhantomData<&'a mut [f64]>,
}

// SAFETY: it writes only the strict triangle that the factor's writer never touches, and only
// while the square it was made from is borrowed.
unsafe impl Send for OtherTriangle<'_> {}

impl<'a> OtherTriangle<'a> {
    /// The other triangle of `square` (order n, row-major) for a factor U (`upper`) or L.
    /// `square` is written elsewhere at the same time only in the factor's triangle.
    pub(crate) fn new(square: &SharedRows<f64>, n: usize, upper: bool) -> Self {
        Self {
            square: square.at(0),
            n,
            upper,
            _square: PhantomData,
        }
    }

    /// The square's order.
    pub fn order(&self) -> usize {
        self.n
    }

    /// Whether the factor is U (this is then the strict lower triangle) or L (the strict upper).
    pub fn factor_is_upper(&self) -> bool {
        self.upper
    }

    /// Row i's entries outside the factor's triangle and the column of the first: columns
    /// 0..i below U, i+1..n above L.
    pub fn row(&mut self, i: usize) -> (usize, &mut [f64]) {
        assert!(i < self.n, "row {i} of an order-{} square", self.n);
        let (j0, len) = match self.upper {
            true => (0, i),
            false => (i + 1, self.n - i - 1),
        };
        // SAFETY: within the square (i < n, j0 + len <= n), in the strict triangle no one else
        // writes, and borrowed from `self` so no two rows handed out overlap.
        let row = unsafe { std::slice::from_raw_parts_mut(self.square.add(i * self.n + j0), len) };
        (j0, row)
    }
}
