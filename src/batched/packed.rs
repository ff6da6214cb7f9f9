//! The batched triangles on the bus: C's lower triangles go up packed by rows (read from the
//! caller's values at their strides straight into the upload), and L's or the assembled C's
//! come back packed and are unpacked into full storage straight from the read-back, so only
//! n(n+1)/2 of each problem's n² values cross the bus either way.

use super::checks::{largest_bits, magnitude_bits};
use super::plan::packed;
use super::prepare::Prepare;
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, Context};
use crate::layout::by_rows::{SharedRows, lower_runs};
use crate::scaling::times_power_of_two;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Problems `range` of `values` (n x n each, row-major with the batch outer, or at
/// `prepare`'s strides and divided by its powers of two) as a new storage buffer of their
/// lower triangles packed by rows, one problem after another; nothing above the diagonal read.
/// With `prepare`'s scan, each problem's largest magnitude is noted as it is copied (and it is
/// divided afterwards on the GPU: [`super::prepare::divided`]).
pub(crate) fn upload_lower(
    ctx: &Context,
    values: &[f32],
    prepare: Option<&Prepare<'_>>,
    range: &Range<usize>,
    n: usize,
) -> Result<Buffer<f32>> {
    let [ps, rs, cs] = prepare.map_or([n * n, n, 1], |p| p.strides);
    let exponents = prepare.and_then(|p| p.exponents);
    let scan = prepare.and_then(|p| p.scan);
    Buffer::filled(
        ctx,
        BufferTarget::Storage,
        BufferUsage::Static,
        range.len() * packed(n),
        |first, out| {
            // The largest magnitude's bits of the problem whose runs are being copied.
            let mut noted: Option<(usize, u32)> = None;
            lower_runs(n, first, out.len(), |p, i, j, at, take| {
                let p = range.start + p;
                let start = p * ps + i * rs + j * cs;
                let out = &mut out[at..at + take];
                // The run's largest magnitude from the caller's values (the mapping may be
                // slow to read).
                let bits = match exponents.map_or(0, |e| e[p]) {
                    0 if cs == 1 => {
                        let src = &values[start..start + take];
                        out.copy_from_slice(src);
                        scan.map_or(0, |_| largest_bits(src))
                    }
                    e => {
                        let mut bits = 0;
                        for (k, o) in out.iter_mut().enumerate() {
                            let v = values[start + k * cs];
                            bits = bits.max(magnitude_bits(v));
                            *o = if e == 0 {
                                v
                            } else {
                                times_power_of_two(f64::from(v), -e) as f32
                            };
                        }
                        bits
                    }
                };
                if let Some(scan) = scan {
                    // The row's values above the diagonal, where checked (never read): in the
                    // same cache lines as the row's run for a row-major stack.
                    if scan.checks_above() && j + take == i + 1 {
                        let row = p * ps + i * rs;
                        let above = ((i + 1)..n)
                            .fold(0, |m, k| m.max(magnitude_bits(values[row + k * cs])));
                        // Only whether one is not finite counts there.
                        if above > f32::MAX.to_bits() {
                            scan.note_above(p, above);
                        }
                    }
                    noted = match noted {
                        Some((q, b)) if q == p => Some((p, b.max(bits))),
                        Some((q, b)) => {
                            scan.note(q, b);
                            Some((p, bits))
                        }
                        None => Some((p, bits)),
                    };
                }
            });
            if let (Some(scan), Some((p, bits))) = (scan, noted) {
                scan.note(p, bits);
            }
        },
    )
}

/// Reads back `triangles` (order-n lower triangles packed by rows, one per problem) into `out`
/// (n x n per problem, row-major with the batch outer) from the staging mappings on all cores,
/// writing every entry once: each triangle to its place and the entries above its diagonal 0,
/// or NaN for a problem whose INFO in `info` is not 0 (its triangle is NaN too: no partial
/// factor passes for one). `out` need not be initialized: no zero fill comes first, so a
/// result's memory is touched once, by all cores.
pub(crate) fn read_lower(
    triangles: &Buffer<f32>,
    n: usize,
    info: &[i32],
    out: &mut [MaybeUninit<f32>],
) -> Result<()> {
    assert_eq!(
        triangles.len() * n * n,
        out.len() * packed(n),
        "one triangle per problem"
    );
    let rows = SharedRows::new(out);
    triangles.read_pieces(&|first, values| {
        lower_runs(n, first, values.len(), |p, i, j, at, take| {
            let row = (p * n + i) * n;
            // SAFETY: every (p, i, j) of the triangles comes once (or again with the same
            // value) and the entries above the diagonal with row i's last one, so the writes
            // are disjoint, within `out` (count problems), which outlives the read.
            unsafe {
                let to = std::slice::from_raw_parts_mut(rows.at(row + j), take);
                for (t, &v) in to.iter_mut().zip(&values[at..at + take]) {
                    t.write(v);
                }
                if j + take == i + 1 {
                    let above = match info.get(p).is_some_and(|&s| s != 0) {
                        true => f32::NAN,
                        false => 0.0,
                    };
                    std::slice::from_raw_parts_mut(rows.at(row + i + 1), n - 1 - i)
                        .fill(MaybeUninit::new(above));
                }
            }
        })
    })
}
