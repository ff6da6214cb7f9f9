//! Strided views of a matrix in a storage buffer: entry (i, j) at offset + i·rs + j·cs, so one
//! kernel reads row-major, column-major and transposed blocks alike (the RFP format's
//! trailing triangle is the transposed view of its top block).

/// A rows x cols block of a buffer of f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct View {
    /// Index of entry (0, 0).
    pub offset: usize,
    /// Step between rows.
    pub rs: usize,
    /// Step between columns.
    pub cs: usize,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
}

impl View {
    /// A row-major rows x cols matrix at the start of a buffer.
    pub fn row_major(rows: usize, cols: usize) -> Self {
        Self {
            offset: 0,
            rs: cols,
            cs: 1,
            rows,
            cols,
        }
    }

    /// A column-major rows x cols block at `offset` with leading dimension `ld`.
    pub fn col_major(offset: usize, rows: usize, cols: usize, ld: usize) -> Self {
        Self {
            offset,
            rs: 1,
            cs: ld,
            rows,
            cols,
        }
    }

    /// The buffer index of entry (i, j).
    pub fn index(&self, i: usize, j: usize) -> usize {
        self.offset + i * self.rs + j * self.cs
    }

    /// The rows x cols block starting at (i, j).
    pub fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Self {
        debug_assert!(i + rows <= self.rows && j + cols <= self.cols);
        Self {
            offset: self.index(i, j),
            rows,
            cols,
            ..*self
        }
    }

    /// The transpose: the same entries, rows and columns swapped.
    pub fn t(&self) -> Self {
        Self {
            offset: self.offset,
            rs: self.cs,
            cs: self.rs,
            rows: self.cols,
            cols: self.rows,
        }
    }

    /// The blocks [B11; B21 B22] of a square view split after n1 rows and columns.
    pub fn split(&self, n1: usize) -> [View; 3] {
        let n = self.rows;
        [
            self.sub(0, 0, n1, n1),
            self.sub(n1, 0, n - n1, n1),
            self.sub(n1, n1, n - n1, n - n1),
        ]
    }

    /// The largest buffer index the view touches, plus one (0 for an empty view).
    pub fn extent(&self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            0
        } else {
            self.index(self.rows - 1, self.cols - 1) + 1
        }
    }
}

/// Where a square block of order n is split in the recursive factorization and solves: the
/// first half rounded up to a multiple of the leaf size `nb`, so leaves are full blocks.
pub fn split_point(n: usize, nb: usize) -> usize {
    debug_assert!(n > nb);
    (n / 2).div_ceil(nb) * nb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_and_sub_address_the_same_entries() {
        let v = View::row_major(5, 7);
        assert_eq!(v.index(2, 3), 17);
        assert_eq!(v.t().index(3, 2), 17);
        let s = v.sub(1, 2, 3, 4);
        assert_eq!(s.index(1, 1), v.index(2, 3));
        assert_eq!(s.extent(), v.index(3, 5) + 1);
        let [b11, b21, b22] = View::col_major(1, 6, 6, 7).split(4);
        assert_eq!((b11.rows, b21.rows, b21.cols, b22.cols), (4, 2, 4, 2));
        assert_eq!(b22.index(0, 0), 1 + 4 + 4 * 7);
    }

    #[test]
    fn split_points_are_whole_leaves_inside_the_block() {
        for nb in [1, 4, 64] {
            for n in nb + 1..4 * nb + 3 {
                let n1 = split_point(n, nb);
                assert!(
                    n1 > 0 && n1 < n && n1.is_multiple_of(nb),
                    "n {n} nb {nb} n1 {n1}"
                );
            }
        }
    }
}
