//! The status word the factor kernels write their first failing column into: two u32 on the
//! GPU, (column, pivot bits), read once after a whole factorization or inversion instead of
//! after every block.

use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, Context};

/// "No column failed" in the status word's first entry.
pub const NO_FAILURE: u32 = u32::MAX;

/// The status word of a factorization on the GPU (bound where its kernels expect it).
pub struct StatusWord {
    buffer: Buffer<u32>,
}

impl StatusWord {
    /// A cleared status word.
    pub fn new(ctx: &Context) -> Result<Self> {
        Ok(Self {
            buffer: Buffer::new(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                &[NO_FAILURE, 0],
            )?,
        })
    }

    /// Clears it before a run.
    pub fn reset(&self) -> Result<()> {
        self.buffer.write(0, &[NO_FAILURE, 0])
    }

    /// Binds it to storage-buffer binding `index`.
    pub fn bind_base(&self, index: u32) {
        self.buffer.bind_base(index);
    }

    /// Reads it back: the first failing column and its pivot, or `None`.
    pub fn failure(&self) -> Result<Option<(usize, f32)>> {
        let s = self.buffer.download()?;
        Ok(failure_in([s[0], s[1]]))
    }

    /// Copies its two words, on the GPU, to `dst` from index `offset` on (as f32 bits), so
    /// that they come back with other values in one read ([`failure_in`] reads them).
    pub fn copy_to(&self, dst: &Buffer<f32>, offset: usize) -> Result<()> {
        dst.copy_range_from(&self.buffer, 0, offset, 2)
    }
}

/// The first failing column and its pivot in a status word's two words, or `None`.
pub fn failure_in(words: [u32; 2]) -> Option<(usize, f32)> {
    (words[0] != NO_FAILURE).then(|| (words[0] as usize, f32::from_bits(words[1])))
}
