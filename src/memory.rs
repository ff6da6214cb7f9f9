//! Allocations whose size is known before they are made (a matrix read from a file, a copy of
//! an input, a result read back from the GPU), made so that running out of memory is an
//! [`OutOfMemory`] error ([`crate::Error::OutOfMemory`]) instead of an abort: each reserves
//! its whole size with [`Vec::try_reserve_exact`] first, so a refused allocation is noticed
//! before anything is written.
//!
//! ```
//! use symraster::memory;
//! let v: Vec<f32> = memory::filled(4, 0.0, || "four zeros".into())?;
//! assert_eq!(v.len(), 4);
//! let e = memory::with_capacity::<u8>(usize::MAX / 2, || "half the address space".into())
//!     .unwrap_err();
//! assert!(e.to_string().starts_with("not enough memory for half the address space"));
//! # Ok::<(), symraster::memory::OutOfMemory>(())
//! ```

/// Not enough memory (on the host, or on the GPU where `what` says so) for an allocation of
/// `bytes` bytes whose size was known ahead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "not enough memory for {what} ({}); free memory or raise the process's memory limit, or \
     work on a smaller problem",
    size_text(*bytes)
)]
pub struct OutOfMemory {
    /// What was to be allocated, in the caller's terms ("C (c.npy) as a 20000x20000 float32
    /// matrix").
    pub what: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A size in messages: GiB with two decimals from 0.01 GiB on, MiB below, bytes below a KiB.
pub fn size_text(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= 0.01 * KIB * KIB * KIB {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB {
        format!("{:.2} MiB", b / (KIB * KIB))
    } else {
        format!("{bytes} bytes")
    }
}

/// The bytes of `len` values of `T` (saturated: a count past the address space is refused by
/// its size alone).
pub fn bytes_of<T>(len: usize) -> u64 {
    u64::try_from(len.saturating_mul(size_of::<T>())).unwrap_or(u64::MAX)
}

/// An empty `Vec` with room for exactly `len` values, or [`OutOfMemory`] naming `what`.
pub fn with_capacity<T>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::<T>::new();
    v.try_reserve_exact(len).map_err(|_| OutOfMemory {
        what: what(),
        bytes: bytes_of::<T>(len),
    })?;
    advise_huge_pages(v.as_mut_ptr().cast(), v.capacity() * size_of::<T>());
    Ok(v)
}

/// `len` copies of `value`, or [`OutOfMemory`].
pub fn filled<T: Clone>(
    len: usize,
    value: T,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, OutOfMemory> {
    let mut v = with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// The numbers whose all-zero bits are the value zero, for [`zeros`].
pub trait Zero: sealed::Sealed + Copy {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! zero {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Zero for $t {}
    )*};
}
zero!(u8, i8, u16, i16, u32, i32, u64, i64, usize, f32, f64);

/// `len` zeros, or [`OutOfMemory`]. The memory comes zeroed from the allocator (as `vec![0;
/// len]`'s does): a large matrix of zeros costs pages only where it is written.
pub fn zeros<T: Zero>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>, OutOfMemory> {
    // SAFETY: all-zero bits are the value zero of every `Zero` type.
    unsafe { zeroed(len, what) }
}

/// `len` values of all-zero bits, or [`OutOfMemory`] (see [`zeros`]).
///
/// # Safety
/// All-zero bits must be a valid value of `T`.
pub unsafe fn zeroed<T>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>, OutOfMemory> {
    use std::alloc::{Layout, alloc_zeroed};
    let refused = |what: String| OutOfMemory {
        what,
        bytes: bytes_of::<T>(len),
    };
    let layout = match Layout::array::<T>(len) {
        Ok(layout) => layout,
        Err(_) => return Err(refused(what())),
    };
    if layout.size() == 0 {
        let mut v = Vec::new();
        v.resize_with(len, || {
            // SAFETY: the caller guarantees that all-zero bits are a valid T.
            unsafe { std::mem::zeroed() }
        });
        return Ok(v);
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(refused(what()));
    }
    advise_huge_pages(ptr.cast(), layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with T's alignment and the size of
    // `len` values of T (the layout `Vec` uses), and its `len` values are zeroed, which the
    // caller guarantees is a valid T.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Asks Linux to back the whole 2 MiB pages inside a large new allocation with huge pages
/// before they are first touched: a fresh result of tens of MiB then costs a few page faults
/// instead of thousands, which threads writing it together would take one at a time on the
/// process's memory map. Advice only (nothing where transparent huge pages are off).
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (first, end) = (
            (ptr as usize).next_multiple_of(HUGE),
            (ptr as usize + bytes) / HUGE * HUGE,
        );
        if bytes >= 2 * HUGE && end > first {
            // SAFETY: advice on whole pages inside this allocation; it changes no contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// A copy of `values`, or [`OutOfMemory`].
pub fn copy<T: Clone>(values: &[T], what: impl FnOnce() -> String) -> Result<Vec<T>, OutOfMemory> {
    let mut v = with_capacity(values.len(), what)?;
    v.extend_from_slice(values);
    Ok(v)
}

/// The values of an iterator that knows its length, collected into one allocation of that
/// length, or [`OutOfMemory`].
pub fn collect<T>(
    values: impl ExactSizeIterator<Item = T>,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, OutOfMemory> {
    let mut v = with_capacity(values.len(), what)?;
    v.extend(values);
    Ok(v)
}

/// `f` of every value, on all cores for long slices (the order of calls is unspecified), into
/// one allocation, or [`OutOfMemory`].
pub fn par_map<T: Sync, U: Send>(
    values: &[T],
    f: impl Fn(&T) -> U + Sync + Send,
    what: impl FnOnce() -> String,
) -> Result<Vec<U>, OutOfMemory> {
    use rayon::prelude::*;
    let mut v = with_capacity(values.len(), what)?;
    if values.len() < 1 << 18 {
        v.extend(values.iter().map(f));
    } else {
        // The capacity is there: rayon's collect into it allocates nothing.
        v.par_extend(values.par_iter().with_min_len(1 << 16).map(f));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_requests_are_errors_not_aborts() {
        // Half the address space: more than any machine has, but a valid Layout size.
        let e = with_capacity::<u8>(usize::MAX / 2, || "a test".into()).unwrap_err();
        assert_eq!(e.bytes, (usize::MAX / 2) as u64);
        assert!(
            e.to_string().starts_with("not enough memory for a test ("),
            "{e}"
        );
        assert!(!e.to_string().contains('\n'));
        // Past the address space (the byte count overflows isize): the same error.
        let e = filled(usize::MAX / 4, 0f64, || "zeros".into()).unwrap_err();
        assert_eq!(e.bytes, u64::MAX);
        assert!(e.to_string().contains("zeros"), "{e}");
    }

    #[test]
    fn zeros_are_zeros_and_refused_alike() {
        let v: Vec<f64> = zeros(1 << 20, String::new).unwrap();
        assert!(v.len() == 1 << 20 && v.iter().all(|&x| x == 0.0));
        assert!(zeros::<f32>(0, String::new).unwrap().is_empty());
        let e = zeros::<f64>(usize::MAX / 16, || "a test".into()).unwrap_err();
        assert_eq!(e.bytes, (usize::MAX / 16 * 8) as u64);
        let e = zeros::<f64>(usize::MAX / 4, || "a test".into()).unwrap_err();
        assert_eq!(e.bytes, u64::MAX);
    }

    #[test]
    fn the_helpers_fill_as_asked() {
        let v = filled(3, 1.5f32, String::new).unwrap();
        assert_eq!(v, [1.5; 3]);
        assert_eq!(v.capacity(), 3);
        assert_eq!(copy(&[1, 2, 3], String::new).unwrap(), [1, 2, 3]);
        assert_eq!(
            collect((0..4).map(|k| k * 2), String::new).unwrap(),
            [0, 2, 4, 6]
        );
        let long: Vec<u32> = (0..(1 << 19)).collect();
        let doubled = par_map(&long, |&x| u64::from(x) * 2, String::new).unwrap();
        assert!(doubled.iter().enumerate().all(|(k, &x)| x == 2 * k as u64));
        assert_eq!(doubled.capacity(), long.len());
    }

    #[test]
    fn sizes_read_in_the_right_unit() {
        assert_eq!(size_text(100), "100 bytes");
        assert_eq!(size_text(3 << 20), "3.00 MiB");
        assert_eq!(size_text(3 << 30), "3.00 GiB");
        assert_eq!(size_text(1_600_000_000), "1.49 GiB");
    }
}
