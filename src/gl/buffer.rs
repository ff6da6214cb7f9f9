//! Buffer objects: GPU memory holding a slice of plain data, for vertices and other targets.

use super::context::Context;
use super::pod::{self, Pod};
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::marker::PhantomData;

thread_local! {
    /// Buffer reads this thread has made ([`read_backs`]).
    static READ_BACKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The buffer reads (downloads, each a wait for the GPU's work on that buffer) this thread has
/// made so far: read before and after an operation to count its round trips.
pub fn read_backs() -> u64 {
    READ_BACKS.get()
}

/// What a buffer is bound as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferTarget {
    /// GL_ARRAY_BUFFER: vertex attributes.
    Vertices,
    /// GL_ELEMENT_ARRAY_BUFFER: the indices of indexed draws.
    Indices,
    /// GL_UNIFORM_BUFFER: a uniform block's values.
    Uniforms,
    /// GL_SHADER_STORAGE_BUFFER (GL 4.3): read and written by shaders.
    Storage,
}

impl BufferTarget {
    /// The GL enum.
    pub fn gl(self) -> u32 {
        match self {
            BufferTarget::Vertices => glow::ARRAY_BUFFER,
            BufferTarget::Indices => glow::ELEMENT_ARRAY_BUFFER,
            BufferTarget::Uniforms => glow::UNIFORM_BUFFER,
            BufferTarget::Storage => glow::SHADER_STORAGE_BUFFER,
        }
    }
}

/// How often the contents change: GL's usage hint (it never changes what works).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferUsage {
    /// Written once, used many times (a run's geometry).
    #[default]
    Static,
    /// Rewritten now and then.
    Dynamic,
    /// Rewritten for about every use (a frame's overlay).
    Stream,
}

impl BufferUsage {
    fn gl(self) -> u32 {
        match self {
            BufferUsage::Static => glow::STATIC_DRAW,
            BufferUsage::Dynamic => glow::DYNAMIC_DRAW,
            BufferUsage::Stream => glow::STREAM_DRAW,
        }
    }
}

/// A buffer object holding `len()` values of `T`; deleted on drop.
pub struct Buffer<T: Pod> {
    ctx: Context,
    raw: glow::Buffer,
    target: BufferTarget,
    usage: BufferUsage,
    len: usize,
    _data: PhantomData<T>,
}


/// Copies `src` to `dst` (a mapping of at least `src.len()` bytes) in chunks on all cores.
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` bytes and not overlap `src`.
unsafe fn parallel_copy(src: &[u8], dst: *mut u8) {
    use rayon::prelude::*;
    const CHUNK: usize = 256 << 10;
    let dst = dst as usize;
    src.par_chunks(CHUNK).enumerate().for_each(|(i, chunk)| {
        // SAFETY: chunks are disjoint ranges of dst, which the caller guarantees is valid.
        unsafe {
            std::ptr::copy_nonoverlapping(chunk.as_ptr(), (dst + i * CHUNK) as *mut u8, chunk.len())
        }
    });
}

/// Storage flags of the staging buffers: host-side memory the GPU copies to or from by DMA.
const STAGING_READ: u32 = glow::MAP_READ_BIT | glow::CLIENT_STORAGE_BIT;
const STAGING_WRITE: u32 = glow::MAP_WRITE_BIT | glow::CLIENT_STORAGE_BIT;

/// The most bytes per staged chunk: the host fills (or empties) one staging buffer while the
/// GPU copies the other's chunk.
const STAGING_CHUNK: usize = 32 << 20;

/// The bytes per staged chunk of a transfer of `total` bytes: the tuned size, else
/// [`STAGING_CHUNK`] (smaller chunks, a pipeline for transfers of a few MiB, were slower on the
/// H200 in both directions: `figures/h200/experiments/frontdoor/staging_chunks.csv`).
fn staging_chunk(ctx: &Context, total: usize) -> usize {
    let chunk = ctx.staging_chunk().unwrap_or(STAGING_CHUNK);
    chunk.next_multiple_of(STAGING_PIECE_BYTES).min(total.max(1))
}

/// Bytes per task when the host fills a staging buffer on all cores: small enough that a
/// few MiB keep every core busy.
const STAGING_PIECE_BYTES: usize = 256 << 10;

/// Values of T per task when the host fills a staging buffer ([`STAGING_PIECE_BYTES`]).
const fn staging_piece<T>() -> usize {
    let values = STAGING_PIECE_BYTES / size_of::<T>();
    if values == 0 { 1 } else { values }
}

/// The two staging buffers of a transfer with storage flags `flags`, each of at least `bytes`
/// bytes (the context's kept ones where large enough); None where the context has no
/// glBufferStorage (GL 4.4) or an allocation fails. Give them back with [`keep_pair`].
fn staging_pair(ctx: &Context, bytes: i32, flags: u32) -> Option<[(glow::Buffer, i32); 2]> {
    let gl = ctx.gl();
    let v = gl.version();
    if (v.major, v.minor) < (4, 4) || v.is_embedded {
        return None;
    }
    let one = |slot: u32| -> Option<(glow::Buffer, i32)> {
        if let Some(kept) = ctx.take_staging(bytes, flags | slot << 20) {
            return Some(kept);
        }
        unsafe {
            let raw = gl.create_buffer().ok()?;
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(raw));
            gl.buffer_storage(glow::COPY_WRITE_BUFFER, bytes, None, flags);
            if gl.get_error() != glow::NO_ERROR {
                gl.delete_buffer(raw);
                return None;
            }
            Some((raw, bytes))
        }
    };
    let first = one(0)?;
    match one(1) {
        Some(second) => Some([first, second]),
        None => {
            unsafe { gl.delete_buffer(first.0) };
            None
        }
    }
}

/// Keeps a transfer's staging buffers in the context for the next one.
fn keep_pair(ctx: &Context, pair: [(glow::Buffer, i32); 2], flags: u32) {
    for (slot, (raw, size)) in pair.into_iter().enumerate() {
        ctx.keep_staging(raw, size, flags | (slot as u32) << 20);
    }
}

impl<T: Pod> Buffer<T> {
    /// Creates a buffer holding a copy of `data`. Large data (from the context's staged size, where mapped
    /// transfers are on) goes into a kept buffer of its size where there is one (no new
    /// allocation) through the staging buffers.
    pub fn new(
        ctx: &Context,
        target: BufferTarget,
        usage: BufferUsage,
        data: &[T],
    ) -> Result<Self> {
        if size_of_val(data) >= ctx.staged_from() && ctx.mapped_uploads() {
            let buffer = Self::uninitialized(ctx, target, usage, data.len())?;
            buffer.write(0, data)?;
            return Ok(buffer);
        }
        let raw = unsafe { ctx.gl().create_buffer() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "buffer",
                message,
            })
        })?;
        let mut buffer = Self {
            ctx: ctx.clone(),
            raw,
            target,
            usage,
            len: 0,
            _data: PhantomData,
        };
        buffer.specify(data, true)?;
        Ok(buffer)
    }

    /// Creates a buffer of `len` zeros.
    pub fn zeroed(
        ctx: &Context,
        target: BufferTarget,
        usage: BufferUsage,
        len: usize,
    ) -> Result<Self> {
        let zeros = pod::zeroed(len, || {
            format!("the zeros of a {target:?} buffer of {len} values")
        })?;
        Self::new(ctx, target, usage, &zeros)
    }

    /// Creates a buffer of `len` values whose contents are undefined until written (no host
    /// copy, so large storage buffers cost no host memory). GL sizes are 32-bit here, so at most
    /// `i32::MAX` bytes: a larger request is [`DeviceError::Unsupported`].
    pub fn uninitialized(
        ctx: &Context,
        target: BufferTarget,
        usage: BufferUsage,
        len: usize,
    ) -> Result<Self> {
        let bytes = checked_bytes::<T>(len)?;
        if let Some(raw) = ctx.take_spare(bytes, usage.gl()) {
            let buffer = Self {
                ctx: ctx.clone(),
                raw,
                target,
                usage,
                len,
                _data: PhantomData,
            };
            // Debug builds poison reused storage (all bits set: NaN as f32 and f64).
            #[cfg(debug_assertions)]
            unsafe {
                let gl = ctx.gl();
                gl.bind_buffer(target.gl(), Some(raw));
                gl.buffer_sub_data_u8_slice(target.gl(), 0, &vec![0xFF; bytes as usize]);
            }
            return Ok(buffer);
        }
        match Self::allocate(ctx, target, usage, len, bytes) {
            // The GPU refused: the kept buffers' memory back, and once more.
            Err(_) if ctx.release_spares() => Self::allocate(ctx, target, usage, len, bytes),
            other => other,
        }
    }

    /// [`Buffer::uninitialized`] with fresh storage.
    fn allocate(
        ctx: &Context,
        target: BufferTarget,
        usage: BufferUsage,
        len: usize,
        bytes: i32,
    ) -> Result<Self> {
        let raw = unsafe { ctx.gl().create_buffer() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "buffer",
                message,
            })
        })?;
        let buffer = Self {
            ctx: ctx.clone(),
            raw,
            target,
            usage,
            len,
            _data: PhantomData,
        };
        let gl = ctx.gl();
        unsafe {
            gl.bind_buffer(target.gl(), Some(raw));
            gl.buffer_data_size(target.gl(), bytes, usage.gl());
        }
        ctx.check_allocation(bytes as u64, || {
            format!("a {target:?} buffer of {len} values")
        })?;
        Ok(buffer)
    }

    /// Reads `len` values from index `offset` on back (waits for the GPU).
    pub fn download_range(&self, offset: usize, len: usize) -> Result<Vec<T>> {
        assert!(
            offset + len <= self.len,
            "download_range: {len} values at {offset} lie outside a buffer of {}",
            self.len
        );
        let mut out = pod::zeroed::<T>(len, || {
            format!("reading back {len} values of a {:?} buffer", self.target)
        })?;
        READ_BACKS.set(READ_BACKS.get() + 1);
        if !self.download_staged(offset, &mut out) {
            let gl = self.ctx.gl();
            let target = self.target.gl();
            unsafe {
                gl.bind_buffer(target, Some(self.raw));
                gl.get_buffer_sub_data(
                    target,
                    (offset * size_of::<T>()) as i32,
                    pod::bytes_mut(&mut out),
                );
            }
        }
        self.ctx.check(|| {
            format!(
                "reading back {len} values at {offset} of a {:?} buffer",
                self.target
            )
        })?;
        Ok(out)
    }

    /// A new buffer of `len` values computed by `fill(first, out)` (out: the values from
    /// index `first` on, of any length up to 256 KiB) on all cores: where there are
    /// staging buffers, straight into their mappings (no host copy of the whole), else into a
    /// host vector that is then uploaded. For large data computed on the fly (a rounded
    /// matrix): it saves the host allocation, its first touch and one copy of every byte.
    pub fn filled(
        ctx: &Context,
        target: BufferTarget,
        usage: BufferUsage,
        len: usize,
        fill: impl Fn(usize, &mut [T]) + Sync,
    ) -> Result<Self> {
        use rayon::prelude::*;
        let buffer = Self::uninitialized(ctx, target, usage, len)?;
        if buffer.fill_staged(0, len, &fill) {
            ctx.check(|| format!("filling a {target:?} buffer of {len} values"))?;
            return Ok(buffer);
        }
        let mut data = pod::zeroed::<T>(len, || {
            format!("filling a {target:?} buffer of {len} values")
        })?;
        data.par_chunks_mut(staging_piece::<T>())
            .enumerate()
            .for_each(|(i, piece)| fill(i * staging_piece::<T>(), piece));
        buffer.write(0, &data)?;
        Ok(buffer)
    }

    /// Replaces the whole contents with `data`, which may differ in length.
    pub fn upload(&mut self, data: &[T]) -> Result<()> {
        self.specify(data, false)
    }

    /// Gives the buffer new storage holding `data`. A new buffer's large contents go through a
    /// mapping (`mapped`); a buffer that had storage before is re-specified by glBufferData
    /// alone: on the lent H200 a mapped re-specification of a 1 GiB buffer that had been
    /// allocated before left the GPU reading zeros (the order-16384 inversion), while mapped
    /// uploads into new buffers (least squares' A, up to 1 GiB) arrived whole.
    fn specify(&mut self, data: &[T], mapped: bool) -> Result<()> {
        checked_bytes::<T>(data.len())?;
        let gl = self.ctx.gl();
        let target = self.target.gl();
        let bytes = pod::bytes(data);
        let allocated = || {
            self.ctx.check_allocation(bytes.len() as u64, || {
                format!("a {:?} buffer of {} values", self.target, data.len())
            })
        };
        unsafe {
            gl.bind_buffer(target, Some(self.raw));
            if !mapped || bytes.len() < self.ctx.staged_from() || !self.ctx.mapped_uploads() {
                gl.buffer_data_u8_slice(target, bytes, self.usage.gl());
                allocated()?;
            } else {
                // Large uploads go through staging buffers ([`Buffer::write_staged`]), else a
                // mapping filled on all cores: both are several times faster than one glBufferData
                // from pageable memory (`figures/h200/experiments/transfers.csv`).
                gl.buffer_data_size(target, bytes.len() as i32, self.usage.gl());
                allocated()?;
                if self.write_staged(0, data) {
                    gl.bind_buffer(target, Some(self.raw));
                } else {
                    let ptr = gl.map_buffer_range(
                        target,
                        0,
                        bytes.len() as i32,
                        glow::MAP_WRITE_BIT | glow::MAP_INVALIDATE_BUFFER_BIT,
                    );
                    if ptr.is_null() {
                        gl.buffer_sub_data_u8_slice(target, 0, bytes);
                    } else {
                        parallel_copy(bytes, ptr);
                        gl.unmap_buffer(target);
                    }
                }
            }
        }
        self.len = data.len();
        self.ctx.check(|| {
            format!(
                "uploading {} values to a {:?} buffer",
                data.len(),
                self.target
            )
        })
    }

    /// Overwrites the values from index `offset` on with `data` (which must fit).
    pub fn write(&self, offset: usize, data: &[T]) -> Result<()> {
        assert!(
            offset + data.len() <= self.len,
            "write: {} values at {offset} do not fit a buffer of {}",
            data.len(),
            self.len
        );
        if !self.write_staged(offset, data) {
            let gl = self.ctx.gl();
            let target = self.target.gl();
            unsafe {
                gl.bind_buffer(target, Some(self.raw));
                gl.buffer_sub_data_u8_slice(
                    target,
                    (offset * size_of::<T>()) as i32,
                    pod::bytes(data),
                );
            }
        }
        self.ctx.check(|| {
            format!(
                "writing {} values into a {:?} buffer",
                data.len(),
                self.target
            )
        })
    }

    /// Large reads (from the context's staged size, where mapped transfers are on) through two staging
    /// buffers in host memory: the GPU copies chunk k+1 into one while the host copies chunk k
    /// out of the other's mapping on all cores: several times faster than glGetBufferSubData
    /// (`figures/h200/experiments/transfers.csv`). False (nothing read) where no staging
    /// buffers could be had.
    fn download_staged(&self, offset: usize, out: &mut [T]) -> bool {
        let dst = pod::bytes_mut(out);
        let target = dst.as_mut_ptr() as usize;
        self.read_staged(offset, dst.len(), &mut |at, chunk| {
            // SAFETY: chunks are disjoint ranges of `out`, which outlives the read.
            unsafe { parallel_copy(chunk, (target + at) as *mut u8) }
        })
    }

    /// Hands `bytes` bytes from value `offset` on to `consume(byte offset, chunk)` chunk by
    /// chunk from the staging buffers' mappings (the GPU filling the next chunk meanwhile);
    /// false (the range not all read) where no staging buffers or mappings could be had, or
    /// below the context's staged size.
    fn read_staged(
        &self,
        offset: usize,
        bytes: usize,
        consume: &mut dyn FnMut(usize, &[u8]),
    ) -> bool {
        if bytes < self.ctx.staged_from() || !self.ctx.mapped_uploads() {
            return false;
        }
        let gl = self.ctx.gl();
        let chunk = staging_chunk(&self.ctx, bytes);
        let Some(pair) = staging_pair(&self.ctx, chunk as i32, STAGING_READ) else {
            return false;
        };
        let base = offset * size_of::<T>();
        let chunks = bytes.div_ceil(chunk);
        let len = |k: usize| chunk.min(bytes - k * chunk);
        let copy = |k: usize| unsafe {
            gl.bind_buffer(glow::COPY_READ_BUFFER, Some(self.raw));
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(pair[k % 2].0));
            gl.copy_buffer_sub_data(
                glow::COPY_READ_BUFFER,
                glow::COPY_WRITE_BUFFER,
                (base + k * chunk) as i32,
                0,
                len(k) as i32,
            );
            gl.flush();
        };
        copy(0);
        let mut done = true;
        for k in 0..chunks {
            if k + 1 < chunks {
                copy(k + 1);
            }
            unsafe {
                gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(pair[k % 2].0));
                let ptr = gl.map_buffer_range(
                    glow::COPY_WRITE_BUFFER,
                    0,
                    len(k) as i32,
                    glow::MAP_READ_BIT,
                );
                if ptr.is_null() {
                    done = false;
                    break;
                }
                consume(k * chunk, std::slice::from_raw_parts(ptr, len(k)));
                gl.unmap_buffer(glow::COPY_WRITE_BUFFER);
            }
        }
        keep_pair(&self.ctx, pair, STAGING_READ);
        done
    }

    /// Reads the whole contents back into `consume(first, values)` (the values from index
    /// `first` on, at most [`STAGING_PIECE_BYTES`] of them) on all cores: straight from the
    /// staging buffers' mappings where there are some (no host copy of the whole), else from a
    /// host vector. For data the caller rearranges on its way out (a packed triangle unpacked).
    /// Where a staged read stops midway the whole is read again from a host vector, so
    /// `consume` must tolerate a piece twice (writing each value to its place does).
    pub fn read_pieces(&self, consume: &(dyn Fn(usize, &[T]) + Sync)) -> Result<()> {
        use rayon::prelude::*;
        let piece = staging_piece::<T>();
        let mut aligned = true;
        let staged = self.read_staged(0, self.len * size_of::<T>(), &mut |at, chunk| {
            if !(chunk.as_ptr() as usize).is_multiple_of(align_of::<T>()) {
                aligned = false;
                return;
            }
            // SAFETY: the mapping holds whole values of T (chunks are multiples of the
            // value size), aligned (checked above), read-only until it is unmapped.
            let values = unsafe {
                std::slice::from_raw_parts(chunk.as_ptr() as *const T, chunk.len() / size_of::<T>())
            };
            let first = at / size_of::<T>();
            values
                .par_chunks(piece)
                .enumerate()
                .for_each(|(i, p)| consume(first + i * piece, p));
        });
        if !(staged && aligned) {
            let data = self.download()?;
            data.par_chunks(piece)
                .enumerate()
                .for_each(|(i, p)| consume(i * piece, p));
            return Ok(());
        }
        self.ctx.check(|| {
            format!(
                "reading back a {:?} buffer of {} values",
                self.target, self.len
            )
        })
    }

    /// Large writes through two staging buffers (as [`Buffer::download_staged`], the host
    /// filling one while the GPU copies out of the other); false (nothing written) where none
    /// could be had.
    fn write_staged(&self, offset: usize, data: &[T]) -> bool {
        self.fill_staged(offset, data.len(), &|first, out| {
            out.copy_from_slice(&data[first..first + out.len()])
        })
    }

    /// Writes `len` values from index `offset` on, computed by `fill(first, out)` (`out`: the
    /// values from index `first` of the range on, at most [`STAGING_PIECE_BYTES`]) on all cores into
    /// the two staging buffers in turn, the host filling one while the GPU copies the other
    /// into place. Only from the context's staged size, where mapped transfers are on; false (the range not
    /// all written) where no staging buffers or mappings could be had.
    fn fill_staged(
        &self,
        offset: usize,
        len: usize,
        fill: &(dyn Fn(usize, &mut [T]) + Sync),
    ) -> bool {
        use rayon::prelude::*;
        if len * size_of::<T>() < self.ctx.staged_from() || !self.ctx.mapped_uploads() {
            return false;
        }
        let chunk = staging_chunk(&self.ctx, len * size_of::<T>()).div_ceil(size_of::<T>());
        let bytes = |values: usize| (values * size_of::<T>()) as i32;
        let Some(pair) = staging_pair(&self.ctx, bytes(chunk.min(len)), STAGING_WRITE) else {
            return false;
        };
        let gl = self.ctx.gl();
        let mut done = true;
        for (k, first) in (0..len).step_by(chunk).enumerate() {
            let count = chunk.min(len - first);
            unsafe {
                // Mapping waits for the copy out of this buffer two chunks ago, not the last.
                gl.bind_buffer(glow::COPY_READ_BUFFER, Some(pair[k % 2].0));
                let ptr = gl.map_buffer_range(
                    glow::COPY_READ_BUFFER,
                    0,
                    bytes(count),
                    glow::MAP_WRITE_BIT,
                );
                if ptr.is_null() || !(ptr as usize).is_multiple_of(align_of::<T>()) {
                    if !ptr.is_null() {
                        gl.unmap_buffer(glow::COPY_READ_BUFFER);
                    }
                    done = false;
                    break;
                }
                // SAFETY: the mapping holds `count` values of T, aligned (checked above), and
                // nothing else touches it until it is unmapped below.
                let out = std::slice::from_raw_parts_mut(ptr as *mut T, count);
                out.par_chunks_mut(staging_piece::<T>())
                    .enumerate()
                    .for_each(|(i, piece)| fill(first + i * staging_piece::<T>(), piece));
                gl.unmap_buffer(glow::COPY_READ_BUFFER);
                gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(self.raw));
                gl.copy_buffer_sub_data(
                    glow::COPY_READ_BUFFER,
                    glow::COPY_WRITE_BUFFER,
                    0,
                    bytes(offset + first),
                    bytes(count),
                );
                gl.flush();
            }
        }
        keep_pair(&self.ctx, pair, STAGING_WRITE);
        done
    }

    /// Reads the whole contents back (waits for the GPU).
    pub fn download(&self) -> Result<Vec<T>> {
        let mut out = pod::zeroed::<T>(self.len, || {
            format!(
                "reading back a {:?} buffer of {} values",
                self.target, self.len
            )
        })?;
        READ_BACKS.set(READ_BACKS.get() + 1);
        if !self.download_staged(0, &mut out) {
            let gl = self.ctx.gl();
            let target = self.target.gl();
            unsafe {
                gl.bind_buffer(target, Some(self.raw));
                gl.get_buffer_sub_data(target, 0, pod::bytes_mut(&mut out));
            }
        }
        self.ctx.check(|| {
            format!(
                "reading back a {:?} buffer of {} values",
                self.target, self.len
            )
        })?;
        Ok(out)
    }

    /// Copies all of `src` (which must be no longer) to the start of this buffer, on the GPU.
    pub fn copy_from(&self, src: &Buffer<T>) -> Result<()> {
        self.copy_range_from(src, 0, 0, src.len)
    }

    /// Copies `len` values of `src` from index `src_offset` on to index `offset` on of this
    /// buffer, bit for bit, on the GPU (both ranges must lie within their buffers; `src`'s
    /// values have this buffer's size, so u32 words may travel in an f32 buffer).
    pub fn copy_range_from<U: Pod>(
        &self,
        src: &Buffer<U>,
        src_offset: usize,
        offset: usize,
        len: usize,
    ) -> Result<()> {
        assert_eq!(size_of::<U>(), size_of::<T>(), "copy_range_from: values differ in size");
        assert!(
            src_offset + len <= src.len && offset + len <= self.len,
            "copy_range_from: {len} values from {src_offset} of {} to {offset} of {}",
            src.len,
            self.len
        );
        let gl = self.ctx.gl();
        let bytes = |values: usize| (values * size_of::<T>()) as i32;
        unsafe {
            gl.bind_buffer(glow::COPY_READ_BUFFER, Some(src.raw));
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(self.raw));
            gl.copy_buffer_sub_data(
                glow::COPY_READ_BUFFER,
                glow::COPY_WRITE_BUFFER,
                bytes(src_offset),
                bytes(offset),
                bytes(len),
            );
        }
        self.ctx
            .check(|| format!("copying {len} values between buffers"))
    }

    /// The GL name, for other GL objects in this module that refer to the buffer.
    pub(super) fn raw(&self) -> glow::Buffer {
        self.raw
    }

    /// Binds it to its target.
    pub fn bind(&self) {
        unsafe { self.ctx.gl().bind_buffer(self.target.gl(), Some(self.raw)) }
    }

    /// Binds it to binding point `index` of its target (uniform and storage buffers).
    pub fn bind_base(&self, index: u32) {
        unsafe {
            self.ctx
                .gl()
                .bind_buffer_base(self.target.gl(), index, Some(self.raw))
        }
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What it is bound as.
    pub fn target(&self) -> BufferTarget {
        self.target
    }
}

/// The size in bytes of `len` values of `T`, if GL's 32-bit sizes can say it.
fn checked_bytes<T: Pod>(len: usize) -> Result<i32> {
    len.checked_mul(size_of::<T>())
        .and_then(|b| i32::try_from(b).ok())
        .ok_or_else(|| {
            Error::from(DeviceError::Unsupported {
                what: format!(
                    "hold {len} values of {} bytes in one buffer",
                    size_of::<T>()
                ),
                why: format!(
                    "one buffer holds at most {} bytes through this GL binding",
                    i32::MAX
                ),
            })
        })
}

impl<T: Pod> Drop for Buffer<T> {
    /// Large buffers go to the context's spares for reuse by [`Buffer::uninitialized`]; the
    /// rest are deleted.
    fn drop(&mut self) {
        let bytes = self.len.saturating_mul(size_of::<T>());
        let kept = i32::try_from(bytes)
            .is_ok_and(|bytes| self.ctx.keep_spare(self.raw, bytes, self.usage.gl()));
        if !kept {
            unsafe { self.ctx.gl().delete_buffer(self.raw) }
        }
    }
}
