//! A symmetric matrix's lower triangle held in one storage buffer, in full row-major storage or
//! LAPACK's RFP (TRANSR = 'N', UPLO = 'L'), with the block views the factorization works on.

use super::parts::{Parts, Region};
use super::view::{View, split_point};
use crate::error::{DeviceError, Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage, ComputeLimits, Context};
use crate::layout::rfp;
use crate::matrix::Matrix;

/// How the triangle is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// m x m row-major with row stride `full_ld`; the upper triangle (and the padding) is
    /// never read or written.
    Full,
    /// LAPACK's rectangular full packed array (TRANSR = 'N', UPLO = 'L'), m(m+1)/2 values.
    Rfp,
}

impl Storage {
    /// Values an order-m matrix takes (full storage: m rows of `full_ld`).
    pub fn len(self, m: usize) -> usize {
        match self {
            Storage::Full => m * full_ld(m),
            Storage::Rfp => rfp::len(m),
        }
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Full => "full",
            Storage::Rfp => "rfp",
        }
    }
}

/// The row stride of full storage of order m: m. (Padding the rows by 1 to 128 values
/// changed nothing in full storage's Cholesky at m = 16384, so rows are not padded; measured in
/// docs/results.md.)
pub fn full_ld(m: usize) -> usize {
    m
}

/// A lower triangle split for the factorization: one square view (split anywhere), or the fixed
/// 2 x 2 blocks [B11; B21 B22] of RFP, B22 a transposed view (LAPACK's spftrf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    /// A square view, recursively split at [`split_point`].
    Square(View),
    /// Blocks B11 (n1 x n1), B21 (n2 x n1), B22 (n2 x n2).
    Blocks([View; 3]),
}

impl Triangle {
    /// The order.
    pub fn order(&self) -> usize {
        match self {
            Triangle::Square(v) => v.rows,
            Triangle::Blocks([b11, b21, _]) => b11.rows + b21.rows,
        }
    }

    /// The blocks to recurse on, or `None` for a square view of order ≤ nb (a leaf).
    pub fn split(&self, nb: usize) -> Option<[View; 3]> {
        match *self {
            Triangle::Square(v) if v.rows <= nb => None,
            Triangle::Square(v) => Some(v.split(split_point(v.rows, nb))),
            Triangle::Blocks(b) => Some(b),
        }
    }
}

/// The RFP array of order n (TRANSR = 'N', UPLO = 'L') as the blocks spftrf works on: L11 and
/// L21 column-major, L22 the transpose of the upper triangle in the array's top block.
pub fn rfp_blocks(n: usize) -> [View; 3] {
    if n.is_multiple_of(2) {
        let (k, ld) = (n / 2, n + 1);
        [
            View::col_major(1, k, k, ld),
            View::col_major(k + 1, k, k, ld),
            View::col_major(0, k, k, ld).t(),
        ]
    } else {
        let (n1, n2) = (n - n / 2, n / 2);
        [
            View::col_major(0, n1, n1, n),
            View::col_major(n1, n2, n1, n),
            View::col_major(n, n2, n2, n).t(),
        ]
    }
}

/// The most bytes one storage buffer may hold here: GL_MAX_SHADER_STORAGE_BLOCK_SIZE, and GL's
/// 32-bit buffer sizes through glow.
pub fn max_buffer_bytes(max_storage_block_bytes: u64) -> u64 {
    max_storage_block_bytes.min(i32::MAX as u64)
}

/// The bytes of one part of a [`TiledMatrix`] (and of one block of A's columns):
/// [`max_buffer_bytes`], lowered to `limit` where the tuning sets one
/// ([`Tuning::max_buffer_bytes`](crate::tuning::Tuning::max_buffer_bytes): several buffers at
/// small orders).
pub fn part_bytes(max_storage_block_bytes: u64, limit: Option<u64>) -> u64 {
    let max = max_buffer_bytes(max_storage_block_bytes);
    limit.map_or(max, |n| max.min(n.max(4)))
}

/// Without GL_NVX_gpu_memory_info the GPU's memory is not known: the tiled matrices are then
/// bounded by this many storage buffers of the device's largest size.
pub const UNKNOWN_MEMORY_BUFFERS: u64 = 16;

/// The bytes of GPU memory a tiled matrix may take, and where that bound comes from: the GPU's
/// dedicated memory (GL_NVX_gpu_memory_info), else [`UNKNOWN_MEMORY_BUFFERS`] buffers.
pub fn device_memory(limits: &ComputeLimits) -> (u64, String) {
    match limits.device_memory_bytes {
        Some(bytes) if bytes > 0 => (
            bytes,
            format!("the GPU has {bytes} bytes of memory (GL_NVX_gpu_memory_info)"),
        ),
        _ => {
            let one = max_buffer_bytes(limits.max_storage_block_bytes);
            let bytes = one * UNKNOWN_MEMORY_BUFFERS;
            (
                bytes,
                format!(
                    "the driver does not report the GPU's memory (no GL_NVX_gpu_memory_info), \
                     so the tiled path uses at most {UNKNOWN_MEMORY_BUFFERS} storage buffers of \
                     {one} bytes (GL_MAX_SHADER_STORAGE_BLOCK_SIZE): {bytes} bytes"
                ),
            )
        }
    }
}

/// The largest order whose storage fits in `max_bytes`.
pub fn max_order(storage: Storage, max_bytes: u64) -> usize {
    let max_len = (max_bytes / 4) as usize;
    let mut m = (max_len as f64).sqrt() as usize * if storage == Storage::Rfp { 2 } else { 1 };
    while storage.len(m + 1) <= max_len {
        m += 1;
    }
    while m > 0 && storage.len(m) > max_len {
        m -= 1;
    }
    m
}

/// Refuses, before anything is allocated, `len` f32 values for `what` in one storage buffer
/// beyond `max_bytes` (naming the limit and the largest order in each storage).
pub fn check_fits(what: &str, len: usize, max_bytes: u64) -> Result<()> {
    refuse_past(what, (len as u64).saturating_mul(4), max_bytes, || {
        format!(
            "the largest symmetric matrix in one buffer is m = {} in full storage and m = {} in RFP",
            max_order(Storage::Full, max_bytes),
            max_order(Storage::Rfp, max_bytes)
        )
    })
}

/// Refuses, before anything is allocated, `len` f64 values for `what` in one storage buffer
/// beyond `max_bytes` (naming the limit and the largest f64 square it holds).
pub fn check_fits_f64(what: &str, len: usize, max_bytes: u64) -> Result<()> {
    refuse_past(what, (len as u64).saturating_mul(8), max_bytes, || {
        format!(
            "{} f64 values, a square of order {} at most",
            max_bytes / 8,
            (max_bytes / 8).isqrt()
        )
    })
}

/// `bytes` for `what` in one storage buffer refused beyond `max_bytes`, the error naming the
/// limit and then `largest` (what fits).
fn refuse_past(
    what: &str,
    bytes: u64,
    max_bytes: u64,
    largest: impl FnOnce() -> String,
) -> Result<()> {
    if bytes <= max_bytes {
        return Ok(());
    }
    Err(Error::from(DeviceError::Unsupported {
        what: format!("hold {what} ({bytes} bytes) in one storage buffer"),
        why: format!(
            "one shader storage buffer holds at most {max_bytes} bytes here \
             (GL_MAX_SHADER_STORAGE_BLOCK_SIZE and 32-bit GL sizes); {}",
            largest()
        ),
    }))
}

/// Refuses, before anything is allocated, an order-m matrix in `storage` that the GPU cannot
/// hold: more bytes than [`device_memory`] allows, or a row (full) / RFP array column larger
/// than one part of `part_bytes`.
pub fn check_order(
    m: usize,
    storage: Storage,
    part_bytes: u64,
    limits: &ComputeLimits,
) -> Result<()> {
    // Counted in u128: an m whose storage overflows usize is refused here, never a panic.
    let len = match storage {
        Storage::Full => m as u128 * full_ld(m) as u128,
        Storage::Rfp => m as u128 * (m as u128 + 1) / 2,
    };
    let bytes = u64::try_from(len * 4).unwrap_or(u64::MAX);
    let (memory, source) = device_memory(limits);
    if bytes <= memory {
        return part_starts(m, storage, part_bytes).map(|_| ());
    }
    Err(Error::from(DeviceError::Unsupported {
        what: format!(
            "hold the m = {m} matrix in {} storage ({bytes} bytes)",
            storage.name()
        ),
        why: format!(
            "{source}; the largest symmetric matrix is m = {} in full storage and m = {} in RFP",
            max_order(Storage::Full, memory),
            max_order(Storage::Rfp, memory)
        ),
    }))
}

/// What the boundaries between parts fall on, in rows (full) or RFP array columns: multiples
/// of the default diagonal blocks at least (so none is cut, and the results are one buffer's),
/// of the outer block columns where that costs no extra part (so no launch inside an outer
/// block is cut).
const PART_ALIGN: [usize; 5] = [512, 256, 128, 64, 32];

/// Where each part of an order-m matrix in `storage` starts (indices of the storage array),
/// each part at most `part_bytes`: whole rows of full storage, whole columns of the RFP array
/// (its L11 and L21 columns, its L22 rows). As few parts as fit, of even size, their rows (or
/// columns) a multiple of the largest of `PART_ALIGN` that keeps the parts that few. One
/// part when the whole matrix fits.
pub fn part_starts(m: usize, storage: Storage, part_bytes: u64) -> Result<Vec<usize>> {
    let len = storage.len(m);
    let max_len = (part_bytes / 4) as usize;
    if len <= max_len {
        return Ok(vec![0]);
    }
    // A unit: a row of full storage or a column of the RFP array.
    let (unit, what) = match storage {
        Storage::Full => (full_ld(m), "row"),
        Storage::Rfp => (
            if m.is_multiple_of(2) { m + 1 } else { m },
            "column of the RFP array",
        ),
    };
    let per = max_len / unit;
    if per == 0 {
        return Err(Error::from(DeviceError::Unsupported {
            what: format!(
                "hold the m = {m} matrix in {} storage split over storage buffers",
                storage.name()
            ),
            why: format!(
                "one {what} ({} bytes) is larger than one storage buffer ({part_bytes} bytes)",
                unit * 4
            ),
        }));
    }
    let units = len.div_ceil(unit);
    // The fewest parts, then the largest alignment: parts of ceil(units / parts) rounded up to
    // it (never past `per`, since `per` rounded down to it gives that many parts already).
    let (parts, align) = PART_ALIGN
        .iter()
        .filter(|&&a| a <= per)
        .map(|&a| (units.div_ceil(per / a * a), a))
        .min_by_key(|&(parts, a)| (parts, usize::MAX - a))
        .unwrap_or((units.div_ceil(per), 1));
    let per = units.div_ceil(parts).div_ceil(align) * align;
    Ok((0..len).step_by(per * unit).collect())
}

/// [`TiledMatrix::download_lower_scaled`]'s result.
pub struct LowerReadBack {
    /// The lower triangle times the scale, the upper triangle zero.
    pub l: Matrix<f32>,
    /// The diagonal as stored (not scaled).
    pub diagonal: Vec<f32>,
    /// Whether every scaled entry of the lower triangle is finite and its diagonal positive.
    pub sound: bool,
}

/// The lower triangle of a symmetric m x m matrix in storage buffers: one where it fits, else
/// consecutive ranges of the storage array in several ([`part_starts`]).
pub struct TiledMatrix {
    buffers: Vec<Buffer<f32>>,
    starts: Vec<usize>,
    order: usize,
    storage: Storage,
    // Full storage's row stride (fixed at allocation).
    ld: usize,
}

impl TiledMatrix {
    /// Allocates an order-m matrix whose contents are undefined, in parts of at most
    /// `part_bytes` each (refused before allocation where the GPU cannot hold it:
    /// [`check_order`]).
    pub fn uninitialized(
        ctx: &Context,
        m: usize,
        storage: Storage,
        part_bytes: u64,
    ) -> Result<Self> {
        check_order(m, storage, part_bytes, &ComputeLimits::query(ctx)?)?;
        let len = storage.len(m);
        let starts = part_starts(m, storage, part_bytes)?;
        let buffers = starts
            .iter()
            .enumerate()
            .map(|(p, &s)| {
                let end = starts.get(p + 1).copied().unwrap_or(len);
                Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, end - s)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            buffers,
            starts,
            order: m,
            storage,
            ld: full_ld(m),
        })
    }

    /// The one buffer of full storage held in a single part (row-major, row stride the
    /// order), else `None`.
    pub(crate) fn single_full_part(&self) -> Option<&Buffer<f32>> {
        match (self.storage, self.buffers.as_slice()) {
            (Storage::Full, [one]) if self.ld == self.order => Some(one),
            _ => None,
        }
    }

    /// Uploads the lower triangle of `c` (the upper one is not read; in full storage it goes up
    /// as NaN, so any read of it would show).
    pub fn from_lower(
        ctx: &Context,
        c: &Matrix<f32>,
        storage: Storage,
        part_bytes: u64,
    ) -> Result<Self> {
        let m = c.rows();
        let mut matrix = Self::uninitialized(ctx, m, storage, part_bytes)?;
        let data = match storage {
            Storage::Full => {
                // The lower triangle; the upper one and the padding NaN.
                let ld = matrix.ld;
                let mut data = vec![f32::NAN; m * ld];
                for i in 0..m {
                    data[i * ld..i * ld + i + 1].copy_from_slice(&c.row(i)[..=i]);
                }
                data
            }
            Storage::Rfp => rfp::from_lower(c)?,
        };
        matrix.upload(ctx, &data)?;
        Ok(matrix)
    }

    /// An order-m matrix whose lower triangle `row(i, out)` writes (out = row i's entries
    /// 0..=i), rows over all cores into the storage array (full storage's upper triangle NaN),
    /// or through a lower triangle for RFP; then one upload through a mapping.
    pub fn from_rows(
        ctx: &Context,
        m: usize,
        storage: Storage,
        part_bytes: u64,
        row: impl Fn(usize, &mut [f32]) + Sync,
    ) -> Result<Self> {
        Self::from_row_blocks(ctx, m, storage, part_bytes, |(i0, i1), ld, out| {
            for (i, r) in (i0..i1).zip(out.chunks_mut(ld)) {
                row(i, &mut r[..=i]);
            }
        })
    }

    /// [`TiledMatrix::from_rows`] with the rows made a block at a time: `rows((i0, i1), ld,
    /// out)` writes entries j = 0..=i of rows i0..i1, row i at (i − i0)·ld of `out` (a
    /// source that reads by columns, an upper triangle, then reads each stored row once a
    /// block).
    pub fn from_row_blocks(
        ctx: &Context,
        m: usize,
        storage: Storage,
        part_bytes: u64,
        rows: impl Fn((usize, usize), usize, &mut [f32]) + Sync,
    ) -> Result<Self> {
        use rayon::prelude::*;
        if storage == Storage::Full {
            // Each part's values computed straight into the upload's staging memory
            // ([`Buffer::filled`]): row i's lower triangle from `row`, NaN above it and in the
            // padding.
            check_order(m, storage, part_bytes, &ComputeLimits::query(ctx)?)?;
            let (len, ld) = (storage.len(m), full_ld(m));
            let starts = part_starts(m, storage, part_bytes)?;
            // Whole rows of the piece written in place as one block, a row cut by either end
            // through a row of its own.
            let fill = |first: usize, out: &mut [f32]| {
                out.fill(f32::NAN);
                let end = first + out.len();
                let whole = (first.div_ceil(ld), (end / ld).min(m));
                let mut values = vec![f32::NAN; ld];
                let mut cut_row = |i: usize, out: &mut [f32]| {
                    let (s, e) = ((i * ld).max(first), ((i + 1) * ld).min(end));
                    if i < m && s < e {
                        values.fill(f32::NAN);
                        rows((i, i + 1), ld, &mut values);
                        out[s - first..e - first].copy_from_slice(&values[s - i * ld..e - i * ld]);
                    }
                };
                if whole.0 < whole.1 {
                    let at = whole.0 * ld - first;
                    rows(whole, ld, &mut out[at..at + (whole.1 - whole.0) * ld]);
                    if !first.is_multiple_of(ld) {
                        cut_row(first / ld, out);
                    }
                    if !end.is_multiple_of(ld) {
                        cut_row(end / ld, out);
                    }
                } else {
                    // The piece lies within one or two rows.
                    cut_row(first / ld, out);
                    if (end - 1) / ld != first / ld {
                        cut_row((end - 1) / ld, out);
                    }
                }
            };
            let buffers = starts
                .iter()
                .enumerate()
                .map(|(p, &s)| {
                    let end = starts.get(p + 1).copied().unwrap_or(len);
                    Buffer::filled(
                        ctx,
                        BufferTarget::Storage,
                        BufferUsage::Static,
                        end - s,
                        |first, out| fill(s + first, out),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(Self {
                buffers,
                starts,
                order: m,
                storage,
                ld,
            });
        }
        // RFP: the lower triangle on the host, rearranged.
        let mut matrix = Self::uninitialized(ctx, m, storage, part_bytes)?;
        let mut lower = Matrix::zeros(m, m);
        lower
            .as_mut_slice()
            .par_chunks_mut(m.max(1))
            .enumerate()
            .for_each(|(i, r)| rows((i, i + 1), m, r));
        matrix.upload(ctx, &rfp::from_lower(&lower)?)?;
        Ok(matrix)
    }

    /// Wraps a buffer holding an RFP array of order m.
    pub fn from_rfp(ctx: &Context, m: usize, arf: &[f32], part_bytes: u64) -> Result<Self> {
        if arf.len() != rfp::len(m) {
            return Err(Error::from(crate::error::InputError::Length {
                what: "an RFP array".into(),
                n: m,
                expected: rfp::len(m),
                actual: arf.len(),
            }));
        }
        let mut matrix = Self::uninitialized(ctx, m, Storage::Rfp, part_bytes)?;
        matrix.upload(ctx, arf)?;
        Ok(matrix)
    }

    /// Writes the whole storage array (row-major m x m, or the RFP array).
    /// Each part goes into a new buffer ([`Buffer::new`]: large ones through a mapping on all
    /// cores; re-specifying the old one would be a glBufferData from pageable memory, several
    /// times slower: `figures/h200/experiments/transfers.csv`).
    fn upload(&mut self, ctx: &Context, data: &[f32]) -> Result<()> {
        let starts = self.starts.clone();
        for (p, buffer) in self.buffers.iter_mut().enumerate() {
            let s = starts[p];
            let len = buffer.len();
            *buffer = Buffer::new(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                &data[s..s + len],
            )?;
        }
        Ok(())
    }

    /// The order m.
    pub fn order(&self) -> usize {
        self.order
    }

    /// How it is stored.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// The buffer of a matrix held in one (the first part of a split one: see
    /// [`TiledMatrix::parts`]).
    pub fn buffer(&self) -> &Buffer<f32> {
        debug_assert_eq!(self.buffers.len(), 1, "a split matrix has several buffers");
        &self.buffers[0]
    }

    /// The buffers holding the storage array, and where each one's range starts.
    pub fn parts(&self) -> Parts<'_> {
        Parts::new(&self.buffers, &self.starts)
    }

    /// The buffers holding the storage array, each with the index where its range starts.
    pub fn buffers(&self) -> impl Iterator<Item = (usize, &Buffer<f32>)> {
        self.starts.iter().copied().zip(&self.buffers)
    }

    /// The storage-array index of entry (i, j), j ≤ i, of the lower triangle.
    pub fn index(&self, i: usize, j: usize) -> usize {
        debug_assert!(j <= i && i < self.order);
        match self.storage {
            Storage::Full => i * self.ld + j,
            Storage::Rfp => rfp::index(self.order, i, j),
        }
    }

    /// How many buffers hold it.
    pub fn part_count(&self) -> usize {
        self.buffers.len()
    }

    /// Copies `src`'s contents (same order, storage and parts) on the GPU.
    pub fn copy_from(&self, src: &TiledMatrix) -> Result<()> {
        let layout = |t: &TiledMatrix| (t.starts.clone(), t.order, t.storage, t.ld);
        if layout(src) != layout(self) {
            return Err(Error::shape(
                "copy between tiled matrices of different layouts",
            ));
        }
        for (dst, src) in self.buffers.iter().zip(&src.buffers) {
            dst.copy_from(src)?;
        }
        Ok(())
    }

    /// Fills the whole storage with `value` (NaN to poison it before a run).
    pub fn fill(&mut self, value: f32) -> Result<()> {
        for buffer in &mut self.buffers {
            let len = buffer.len();
            buffer.upload(&vec![value; len])?;
        }
        Ok(())
    }

    /// The whole matrix as a square view (full storage) or as RFP's blocks.
    pub fn triangle(&self) -> Triangle {
        match self.storage {
            Storage::Full => Triangle::Square(View {
                rs: self.ld,
                ..View::row_major(self.order, self.order)
            }),
            Storage::Rfp => Triangle::Blocks(rfp_blocks(self.order)),
        }
    }

    /// `view` of this matrix (indices of the whole storage array).
    pub fn region(&self, view: View) -> Region<'_> {
        self.parts().region(view)
    }

    /// The lower triangle (upper triangle zero), read back.
    pub fn download_lower(&self) -> Result<Matrix<f32>> {
        let m = self.order;
        let data = self.download_raw()?;
        match self.storage {
            Storage::Full => {
                use rayon::prelude::*;
                let mut c = Matrix::from_row_major(m, m, data)?;
                c.as_mut_slice()
                    .par_chunks_mut(m.max(1))
                    .enumerate()
                    .for_each(|(i, row)| row[i + 1..].fill(0.0));
                Ok(c)
            }
            Storage::Rfp => rfp::to_lower_of_order(m, &data),
        }
    }

    /// The lower triangle read back times `scale` (a power of two, so exact where the result
    /// is a normal f32) with the upper triangle zero, in one pass over all cores straight
    /// from the staging mapping into the result; `None` where the matrix is not one part of
    /// full storage ([`TiledMatrix::download_lower`] then).
    pub fn download_lower_scaled(&self, scale: f32) -> Result<Option<LowerReadBack>> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let m = self.order;
        let Some(buffer) = self.single_full_part().filter(|b| b.len() == m * m && m > 0) else {
            return Ok(None);
        };
        let what = || format!("reading back a factor of order {m}");
        let mut data = crate::memory::with_capacity::<f32>(m * m, what)?;
        let mut diagonal = crate::memory::with_capacity::<f32>(m, what)?;
        let out = data.spare_capacity_mut().as_mut_ptr() as usize;
        let diag = diagonal.spare_capacity_mut().as_mut_ptr() as usize;
        let sound = AtomicBool::new(true);
        buffer.read_pieces(&|first, values| {
            use std::mem::MaybeUninit;
            let mut ok = true;
            let (mut at, mut rest) = (first, values);
            while !rest.is_empty() {
                let (i, j0) = (at / m, at % m);
                let (row, tail) = rest.split_at((m - j0).min(rest.len()));
                let start = (out as *mut MaybeUninit<f32>).wrapping_add(at);
                // SAFETY: the pieces are disjoint ranges of the m·m values `data` has room
                // for (a piece read twice writes the same values again).
                let dst = unsafe { std::slice::from_raw_parts_mut(start, row.len()) };
                let lower = (i + 1).saturating_sub(j0).min(row.len());
                for (d, &v) in dst[..lower].iter_mut().zip(&row[..lower]) {
                    let scaled = v * scale;
                    d.write(scaled);
                    ok &= scaled.is_finite();
                }
                for d in &mut dst[lower..] {
                    d.write(0.0);
                }
                if (j0..j0 + row.len()).contains(&i) {
                    let v = row[i - j0];
                    // SAFETY: entry i of the m values `diagonal` has room for, written by
                    // the one piece holding (i, i).
                    unsafe { (*(diag as *mut MaybeUninit<f32>).add(i)).write(v) };
                    ok &= v * scale > 0.0;
                }
                (at, rest) = (at + row.len(), tail);
            }
            if !ok {
                sound.store(false, Ordering::Relaxed);
            }
        })?;
        // SAFETY: read_pieces returned Ok, so every value of the buffer (m·m, the diagonal
        // among them) was handed to the closure, which wrote each to its place.
        unsafe {
            data.set_len(m * m);
            diagonal.set_len(m);
        }
        Ok(Some(LowerReadBack {
            l: Matrix::from_row_major(m, m, data)?,
            diagonal,
            sound: sound.into_inner(),
        }))
    }

    /// The raw contents: row-major m x m (the padding of the rows dropped), or the RFP array.
    pub fn download_raw(&self) -> Result<Vec<f32>> {
        let mut data = match &self.buffers[..] {
            [one] => one.download()?,
            buffers => {
                let total = buffers.iter().map(Buffer::len).sum();
                let mut data = crate::memory::with_capacity(total, || {
                    format!("reading back a factor of order {}", self.order)
                })?;
                for buffer in buffers {
                    data.extend(buffer.download()?);
                }
                data
            }
        };
        let (m, ld) = (self.order, self.ld);
        if self.storage == Storage::Full && ld != m {
            // The rows' padding dropped in place.
            for i in 1..m {
                data.copy_within(i * ld..i * ld + m, i * m);
            }
            data.truncate(m * m);
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfp_blocks_address_entries_where_lapack_puts_them() {
        for n in 1..12 {
            let [b11, b21, b22] = rfp_blocks(n);
            let n1 = b11.rows;
            assert_eq!(n1 + b22.rows, n);
            assert_eq!((b21.rows, b21.cols), (b22.rows, n1));
            for i in 0..n {
                for j in 0..=i {
                    let at = if j < n1 && i < n1 {
                        b11.index(i, j)
                    } else if j < n1 {
                        b21.index(i - n1, j)
                    } else {
                        b22.index(i - n1, j - n1)
                    };
                    assert_eq!(at, rfp::index(n, i, j), "n {n} ({i},{j})");
                }
            }
        }
    }

    #[test]
    fn the_largest_orders_fit_and_one_more_does_not() {
        let bytes = 2_147_483_647u64;
        for s in [Storage::Full, Storage::Rfp] {
            let m = max_order(s, bytes);
            assert!(s.len(m) as u64 * 4 <= bytes && s.len(m + 1) as u64 * 4 > bytes);
            assert!(check_fits("x", s.len(m), bytes).is_ok());
            assert!(check_fits("x", s.len(m + 1), bytes).is_err());
        }
        assert_eq!(max_order(Storage::Full, bytes), 23170);
        // f64: an order-16383 square fits, 16384 does not, and the message says so.
        assert!(check_fits_f64("x", 16383 * 16383, bytes).is_ok());
        let e = check_fits_f64("the f64 matrix", 16384 * 16384, bytes).unwrap_err();
        assert!(e.to_string().contains("a square of order 16383 at most"), "{e}");
    }

    #[test]
    fn full_rows_are_not_padded() {
        for m in [0, 1, 8192, 16383, 16384, 16385, 23170, 32768, 40000] {
            assert_eq!(full_ld(m), m);
        }
        assert_eq!(Storage::Full.len(16384), 16384 * 16384);
    }

    #[test]
    fn parts_hold_whole_aligned_rows_and_rfp_columns() {
        // m = 40000 full in 2^31 − 1 byte buffers (13421 rows each at most): 3 parts of 13376
        // rows (a multiple of 64; 512 would take 4 parts); RFP: 2 of 10240 array columns.
        let one = i32::MAX as u64;
        let starts = part_starts(40000, Storage::Full, one).unwrap();
        assert_eq!(starts, [0, 13376 * 40000, 26752 * 40000]);
        let starts = part_starts(40000, Storage::Rfp, one).unwrap();
        assert_eq!(starts, [0, 10240 * 40001]);
        assert_eq!(part_starts(23170, Storage::Full, one).unwrap(), [0]);
        // Small parts: 256 KiB hold 93 rows of order 700: parts of 64.
        let starts = part_starts(700, Storage::Full, 256 * 1024).unwrap();
        assert_eq!(starts.len(), 11);
        assert!(starts.iter().all(|s| s % (64 * 700) == 0));
        let odd = part_starts(701, Storage::Rfp, 256 * 1024).unwrap();
        assert!(odd.iter().all(|s| s % (64 * 701) == 0) && odd.len() == 6);
        // Every part fits, whatever the order.
        for m in [100, 333, 1000, 4097] {
            for s in [Storage::Full, Storage::Rfp] {
                let bytes = 40_000;
                let starts = part_starts(m, s, bytes).unwrap();
                let mut ends = starts[1..].to_vec();
                ends.push(s.len(m));
                assert!(
                    starts
                        .iter()
                        .zip(&ends)
                        .all(|(a, b)| (b - a) * 4 <= bytes as usize)
                );
            }
        }
        assert!(part_starts(700, Storage::Full, 2000).is_err());
    }

    #[test]
    fn orders_beyond_the_gpu_memory_are_refused_naming_it() {
        let limits = ComputeLimits {
            max_storage_block_bytes: i32::MAX as u64,
            max_shared_bytes: 49152,
            max_invocations: 1024,
            max_groups_x: 65535,
            device_memory_bytes: Some(8 << 30),
        };
        assert!(check_order(40000, Storage::Full, i32::MAX as u64, &limits).is_ok());
        let e = check_order(50000, Storage::Full, i32::MAX as u64, &limits).unwrap_err();
        assert!(e.to_string().contains("GL_NVX_gpu_memory_info"), "{e}");
        assert!(e.to_string().contains("m = 46340 in full storage"), "{e}");
        let unknown = ComputeLimits {
            device_memory_bytes: None,
            ..limits
        };
        let e = check_order(200000, Storage::Rfp, i32::MAX as u64, &unknown).unwrap_err();
        assert!(e.to_string().contains("16 storage buffers"), "{e}");
    }
}
