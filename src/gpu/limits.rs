//! [`Limits`]: the largest problems a device holds per method and format, found once when the
//! [`Gpu`](super::Gpu) opens ([`Gpu::limits`](super::Gpu::limits)).

use crate::error::Result;
use crate::gl::{ComputeLimits, Context, DeviceInfo};
use crate::layout::max_packed_order;
use crate::tiled::Storage;
use crate::tiled::storage::{device_memory, max_order};

/// The largest order m each method holds on this device (what `symraster info` prints).
/// Every operation checks its own problem before it allocates ([`Options::method_on`] runs
/// that check alone); these are the bounds those checks apply.
///
/// [`Options::method_on`]: super::Options::method_on
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The methods that draw, full format: GL_MAX_TEXTURE_SIZE as used
    /// ([`DeviceInfo::max_texture_size`]).
    pub full: usize,
    /// The methods that draw, the paper's packed format (one less for an even limit).
    pub packed: usize,
    /// The tiled method, where the device has compute shaders (OpenGL 4.3).
    pub tiled: Option<TiledLimits>,
}

/// The tiled method's largest orders: its storage buffers are bounded by the GPU's memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TiledLimits {
    /// Full storage (m² values).
    pub full: usize,
    /// LAPACK's RFP (m(m+1)/2 values), the packed format of the tiled method.
    pub rfp: usize,
    /// Where the bound comes from: the GPU's memory as the driver reports it, or a number of
    /// storage buffers where it does not.
    pub bound: String,
}

impl Limits {
    /// The methods that draw, from the texture limit alone (no tiled limits yet).
    pub(crate) fn of_textures(max_texture_size: usize) -> Self {
        Self {
            full: max_texture_size,
            packed: max_packed_order(max_texture_size),
            tiled: None,
        }
    }

    /// Every method's limits on `context`, whose texture limit `info` gives as used.
    pub(crate) fn query(context: &Context, info: &DeviceInfo) -> Result<Self> {
        let tiled = if info.has_compute() {
            let (memory, bound) = device_memory(&ComputeLimits::query(context)?);
            Some(TiledLimits {
                full: max_order(Storage::Full, memory),
                rfp: max_order(Storage::Rfp, memory),
                bound,
            })
        } else {
            None
        };
        Ok(Self {
            tiled,
            ..Self::of_textures(info.max_texture_size)
        })
    }
}
