//! Triangles packed by rows (LAPACK's packed storage, row-major): the lower triangle's row i
//! holds columns 0..=i, the upper's columns i..n, one row after another. The index helpers and
//! the host rows a packed read-back writes into, shared by the f64 and the batched paths.

/// Where row i of an order-n triangle packed by rows starts (the lower triangle's row i holds
/// entries 0..=i, the upper's entries i..n).
pub(crate) fn row_start(n: usize, upper: bool, i: usize) -> usize {
    if upper {
        i * n - i * i.saturating_sub(1) / 2
    } else {
        i * (i + 1) / 2
    }
}

/// The row holding entry `first` of an order-n triangle packed by rows, and its place there.
pub(crate) fn row_of(n: usize, upper: bool, first: usize) -> (usize, usize) {
    let (mut lo, mut hi) = (0, n);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if row_start(n, upper, mid) <= first {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, first - row_start(n, upper, lo))
}

/// The first column a row of a triangle packed by rows holds (i in the upper triangle, 0 in the
/// lower).
pub(crate) fn first_column(upper: bool, i: usize) -> usize {
    if upper { i } else { 0 }
}

/// Walks `len` entries from entry `first` of an order-n triangle packed by rows (`upper`: the
/// upper one), calling `run(i, k, at, take)` for each stretch of one row: `take` entries of row
/// i from its `k`-th on (column [`first_column`] + k), the `at`-th to come from `first`.
pub(crate) fn runs(
    n: usize,
    upper: bool,
    first: usize,
    len: usize,
    mut run: impl FnMut(usize, usize, usize, usize),
) {
    if len == 0 {
        return;
    }
    let (mut i, mut k) = row_of(n, upper, first);
    let mut at = 0;
    while at < len {
        let width = if upper { n - i } else { i + 1 };
        let take = (width - k).min(len - at);
        run(i, k, at, take);
        (at, i, k) = (at + take, i + 1, 0);
    }
}

/// Walks `len` entries from entry `first` of a batch of order-n lower triangles packed by rows
/// one after another, calling `run(p, i, j, at, take)` for each stretch of one row: `take`
/// entries of problem p's row i from column j on, the `at`-th to come from `first`.
pub(crate) fn lower_runs(
    n: usize,
    first: usize,
    len: usize,
    mut run: impl FnMut(usize, usize, usize, usize, usize),
) {
    let per_problem = n * (n + 1) / 2;
    if per_problem == 0 {
        return;
    }
    let mut p = first / per_problem;
    let (mut i, mut j) = row_of(n, false, first % per_problem);
    let mut at = 0;
    while at < len {
        let take = (i + 1 - j).min(len - at);
        run(p, i, j, at, take);
        at += take;
        (i, j) = (i + 1, 0);
        if i == n {
            (p, i) = (p + 1, 0);
        }
    }
}

/// The host rows the read-back of a packed triangle writes into, from all cores.
pub(crate) struct SharedRows<T>(*mut T);

// SAFETY: the callers write disjoint entries, each once, while the rows are alive.
unsafe impl<T: Send> Sync for SharedRows<T> {}

impl<T> SharedRows<T> {
    /// The rows of `values` (which must outlive every write through them).
    pub(crate) fn new(values: &mut [T]) -> Self {
        Self(values.as_mut_ptr())
    }

    /// Where entry `index` lies (the callers keep it within the rows).
    pub(crate) fn at(&self, index: usize) -> *mut T {
        self.0.wrapping_add(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_found_from_any_entry() {
        for n in [1, 2, 7, 8, 9] {
            for upper in [false, true] {
                let mut entry = 0;
                for i in 0..n {
                    let width = if upper { n - i } else { i + 1 };
                    for at in 0..width {
                        assert_eq!(row_of(n, upper, entry), (i, at), "n {n} upper {upper}");
                        entry += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn runs_cover_every_entry_once_in_either_triangle() {
        for n in [1, 2, 3, 8] {
            let total = n * (n + 1) / 2;
            for upper in [false, true] {
                for first in 0..total {
                    for len in 0..=total - first {
                        let mut seen = Vec::new();
                        runs(n, upper, first, len, |i, k, at, take| {
                            let j = first_column(upper, i) + k;
                            assert!(if upper {
                                j >= i && j + take <= n
                            } else {
                                j + take <= i + 1
                            });
                            assert_eq!(at, seen.len());
                            seen.extend((0..take).map(|t| row_start(n, upper, i) + k + t));
                        });
                        assert_eq!(seen, (first..first + len).collect::<Vec<_>>(), "n {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn lower_runs_cover_every_entry_once_across_problems() {
        for n in [1, 2, 3, 8] {
            let per_problem = n * (n + 1) / 2;
            let total = 3 * per_problem;
            for first in 0..total {
                for len in 0..=total - first {
                    let mut seen = Vec::new();
                    lower_runs(n, first, len, |p, i, j, at, take| {
                        assert!(j + take <= i + 1);
                        assert_eq!(at, seen.len());
                        seen.extend(
                            (0..take).map(|k| p * per_problem + row_start(n, false, i) + j + k),
                        );
                    });
                    assert_eq!(seen, (first..first + len).collect::<Vec<_>>(), "n {n}");
                }
            }
        }
    }
}
