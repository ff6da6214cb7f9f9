//! Plain data as GL stores it: the only place where slices are viewed as bytes.

use crate::error::Result;

mod sealed {
    pub trait Sealed {}
}

/// Plain old data: no padding, no pointers, and every bit pattern (all zeros included) is a
/// valid value, so a slice of it can be handed to GL as bytes and read back from bytes.
///
/// Implemented here, and only here, for the numbers GL stores and arrays of them; a vertex
/// type describes itself as one of these (see [`VertexFormat`](super::VertexFormat)), so
/// code outside `gl` never needs `unsafe`.
pub trait Pod: sealed::Sealed + Copy + Send + Sync + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Pod for $t {}
    )*};
}
pod!(u8, i8, u16, i16, u32, i32, f32, f64);

// An array of plain data is plain data: its size is N times the element's, with no padding.
impl<T: Pod, const N: usize> sealed::Sealed for [T; N] {}
impl<T: Pod, const N: usize> Pod for [T; N] {}

/// The bytes of `data`.
pub(crate) fn bytes<T: Pod>(data: &[T]) -> &[u8] {
    // SAFETY: T is plain data (no padding, so every byte is initialized), and the length is
    // the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

/// The bytes of `data`, writable.
pub(crate) fn bytes_mut<T: Pod>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `bytes`, and every bit pattern written through the bytes is a valid T.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), std::mem::size_of_val(data)) }
}

/// `len` values of all-zero bits, or [`crate::Error::OutOfMemory`] naming `what` (host memory for
/// a transfer: a download's destination, an upload's zeros).
pub(crate) fn zeroed<T: Pod>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>> {
    // SAFETY: all-zero bits are a valid value of any plain-data type.
    Ok(unsafe { crate::memory::zeroed(len, what) }?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_the_values_in_memory_order() {
        let v = [[1.0f32, 2.0], [3.0, 4.0]];
        assert_eq!(bytes(&v).len(), 16);
        assert_eq!(&bytes(&v)[4..8], &2.0f32.to_ne_bytes());
        let mut w = zeroed::<[u8; 4]>(2, String::new).unwrap();
        bytes_mut(&mut w)[5] = 7;
        assert_eq!(w, [[0; 4], [0, 7, 0, 0]]);
    }
}
