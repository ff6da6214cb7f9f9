//! LAPACK's Rectangular Full Packed format (Gustavson et al.; `?trttf`, `?pftrf`), TRANSR = 'N',
//! UPLO = 'L': the interchange form of our packed texture.
//!
//! RFP and the paper's packed format (section 3.3) share the trapezoid of the first columns;
//! the trailing triangle is *transposed* into the spare corner in RFP and *rotated* by 180° in
//! the paper. The array is column-major, of length n(n+1)/2. With 0-based (i, j), i ≥ j:
//! - n even, k = n/2 ((n+1) x k array): j < k at `(i+1) + j(n+1)`, j ≥ k at `(j-k) + (i-k)(n+1)`;
//! - n odd, n1 = n - n/2 (n x n1 array): j < n1 at `i + j·n`, j ≥ n1 at `(j-n1) + (i-n1+1)·n`.

use super::PackedMatrix;
use crate::error::{Error, InputError, Result};
use crate::matrix::Matrix;

/// The position in the RFP array (TRANSR = 'N', UPLO = 'L') of entry (i, j), j ≤ i < n.
pub fn index(n: usize, i: usize, j: usize) -> usize {
    debug_assert!(
        j <= i && i < n,
        "({i}, {j}) is not in the lower triangle of order {n}"
    );
    if n.is_multiple_of(2) {
        let k = n / 2;
        if j < k {
            (i + 1) + j * (n + 1)
        } else {
            (j - k) + (i - k) * (n + 1)
        }
    } else {
        let n1 = n - n / 2;
        if j < n1 {
            i + j * n
        } else {
            (j - n1) + (i - n1 + 1) * n
        }
    }
}

/// The length of an RFP array of order n: n(n+1)/2.
pub fn len(n: usize) -> usize {
    n * (n + 1) / 2
}

/// The order n of an RFP array of length `len`, or [`InputError::NotTriangular`].
pub fn order_of_len(len: usize) -> Result<usize> {
    // The largest n with n(n+1)/2 ≤ len, from the float root then corrected.
    let mut n = ((((8 * len + 1) as f64).sqrt() - 1.0) / 2.0) as usize;
    while self::len(n + 1) <= len {
        n += 1;
    }
    while self::len(n) > len {
        n -= 1;
    }
    if self::len(n) == len {
        Ok(n)
    } else {
        Err(Error::from(InputError::NotTriangular {
            len,
            n_below: n,
            below: self::len(n),
            n_above: n + 1,
            above: self::len(n + 1),
        }))
    }
}

/// The RFP array of the lower triangle (with diagonal) of the square `c`; the upper triangle is
/// not read.
pub fn from_lower<T: Copy + Default>(c: &Matrix<T>) -> Result<Vec<T>> {
    let (n, cols) = c.shape();
    if n != cols {
        return Err(Error::shape(format!(
            "RFP holds a square matrix's lower triangle, but this one is {n}x{cols}"
        )));
    }
    let mut arf = vec![T::default(); len(n)];
    for i in 0..n {
        for j in 0..=i {
            arf[index(n, i, j)] = c[(i, j)];
        }
    }
    Ok(arf)
}

/// The lower-triangular matrix (upper triangle zero) held by the RFP array `arf`, its order
/// taken from the length.
pub fn to_lower<T: Copy + Default>(arf: &[T]) -> Result<Matrix<T>> {
    let n = order_of_len(arf.len())?;
    let mut c = Matrix::filled(n, n, T::default());
    for i in 0..n {
        for j in 0..=i {
            c[(i, j)] = arf[index(n, i, j)];
        }
    }
    Ok(c)
}

/// [`to_lower`] for an array that must be of order `n`: a wrong length is an
/// [`InputError::Length`] naming the length n needs.
pub fn to_lower_of_order<T: Copy + Default>(n: usize, arf: &[T]) -> Result<Matrix<T>> {
    if arf.len() != len(n) {
        return Err(Error::from(InputError::Length {
            what: "an RFP array".into(),
            n,
            expected: len(n),
            actual: arf.len(),
        }));
    }
    to_lower(arf)
}

impl PackedMatrix {
    /// This packed triangle as LAPACK's RFP array (TRANSR = 'N', UPLO = 'L'), e.g. a packed
    /// factor for `spftrs`/`spftri`: the trapezoid carries over, the rotated corner is transposed.
    pub fn to_rfp(&self) -> Vec<f32> {
        let n = self.order();
        let mut arf = vec![0.0; len(n)];
        for i in 0..n {
            for j in 0..=i {
                arf[index(n, i, j)] = self.get(i, j).expect("entry of the lower triangle");
            }
        }
        arf
    }

    /// The packed triangle held by an RFP array (TRANSR = 'N', UPLO = 'L'), its order taken from
    /// the length (which must be n(n+1)/2).
    pub fn from_rfp(arf: &[f32]) -> Result<Self> {
        let n = order_of_len(arf.len())?;
        let layout = crate::layout::Layout::packed(n);
        let (w, _) = layout.texture_size();
        let mut data = vec![0.0; arf.len()];
        for i in 0..n {
            for j in 0..=i {
                let (x, y) = layout.texel_of(i, j);
                data[y * w + x] = arf[index(n, i, j)];
            }
        }
        PackedMatrix::from_raw(n, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry (i, j) coded as 10i + j, as in LAPACK's documentation of `dpftrf`.
    fn coded(n: usize) -> Matrix<f64> {
        Matrix::from_fn(n, n, |i, j| if j <= i { (10 * i + j) as f64 } else { -1.0 })
    }

    /// The column-major RFP array as rows of its (rows x cols) picture.
    fn picture(arf: &[f64], rows: usize, cols: usize) -> Vec<Vec<u32>> {
        (0..rows)
            .map(|r| (0..cols).map(|c| arf[r + c * rows] as u32).collect())
            .collect()
    }

    /// LAPACK's `dpftrf` documentation, N = 6, TRANSR = 'N', UPLO = 'L': a 7 x 3 array.
    #[test]
    fn matches_lapack_documentation_n6() {
        let arf = from_lower(&coded(6)).unwrap();
        let expected = [
            [33, 43, 53],
            [0, 44, 54],
            [10, 11, 55],
            [20, 21, 22],
            [30, 31, 32],
            [40, 41, 42],
            [50, 51, 52],
        ];
        assert_eq!(picture(&arf, 7, 3), expected.map(|r| r.to_vec()).to_vec());
    }

    /// LAPACK's `dpftrf` documentation, N = 5, TRANSR = 'N', UPLO = 'L': a 5 x 3 array.
    #[test]
    fn matches_lapack_documentation_n5() {
        let arf = from_lower(&coded(5)).unwrap();
        let expected = [
            [0, 33, 43],
            [10, 11, 44],
            [20, 21, 22],
            [30, 31, 32],
            [40, 41, 42],
        ];
        assert_eq!(picture(&arf, 5, 3), expected.map(|r| r.to_vec()).to_vec());
    }

    #[test]
    fn index_is_a_bijection_and_round_trips() {
        for n in 0..=30 {
            let mut seen = vec![false; len(n)];
            for i in 0..n {
                for j in 0..=i {
                    assert!(!std::mem::replace(&mut seen[index(n, i, j)], true));
                }
            }
            assert!(seen.iter().all(|&s| s));
            let c = coded(n);
            let arf = from_lower(&c).unwrap();
            assert_eq!(order_of_len(arf.len()).unwrap(), n);
            assert_eq!(to_lower(&arf).unwrap(), c.map(|v| v.max(0.0)));
        }
    }

    #[test]
    fn packed_and_rfp_convert_both_ways() {
        for n in 1..=17 {
            let c = Matrix::from_fn(n, n, |i, j| (100 * i + j) as f32);
            let packed = PackedMatrix::from_lower(&c).unwrap();
            let arf = packed.to_rfp();
            assert_eq!(arf, from_lower(&c).unwrap());
            let back = PackedMatrix::from_rfp(&arf).unwrap();
            assert_eq!(back, packed);
            assert_eq!(back.to_lower(), c.lower_triangle());
        }
    }

    #[test]
    fn bad_lengths_are_typed_errors() {
        match order_of_len(11) {
            Err(Error::Input(InputError::NotTriangular {
                n_below, n_above, ..
            })) => assert_eq!((n_below, n_above), (4, 5)),
            other => panic!("expected NotTriangular, got {other:?}"),
        }
        assert!(matches!(
            PackedMatrix::from_rfp(&[0.0; 8]),
            Err(Error::Input(InputError::NotTriangular { len: 8, .. }))
        ));
        assert!(matches!(
            to_lower_of_order(4, &[0.0f32; 6]),
            Err(Error::Input(InputError::Length {
                expected: 10,
                actual: 6,
                ..
            }))
        ));
        assert!(matches!(
            from_lower(&Matrix::<f32>::zeros(2, 3)),
            Err(Error::Input(InputError::Shape(_)))
        ));
    }
}
