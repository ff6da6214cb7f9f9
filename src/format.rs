//! The storage formats of a symmetric or triangular matrix: the vocabulary every layer shares,
//! the errors' included (re-exported as [`crate::layout::Format`]).

use std::fmt;

/// Storage format of a symmetric or triangular matrix on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// m x m texture; entry (i, j) at texel (j, i) (section 3.2).
    #[default]
    Full,
    /// Rectangular packed: w x h with w = ceil(m/2), h = m + mod(m+1, 2); the lower-right
    /// triangle rotated by 180° into the free upper corner (section 3.3, Fig 3).
    Packed,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Full => "full",
            Format::Packed => "packed",
        })
    }
}
