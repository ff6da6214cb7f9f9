//! Tuning of the methods as typed parameters ([`Tuning`], given to [`GpuBuilder::tuning`]):
//! the product kernel's shape, the tiled Cholesky's block sizes and split order, the size of one
//! storage buffer, mapped uploads, a lowered texture limit. `None` (the default) leaves each to
//! the device. Every value is checked by one rule ([`Tuning::validate`]: its range, then the
//! kernels' work groups and shared memory against the device's limits) when the `Gpu` is made,
//! and a tiling other than the device's default is tried on a small problem against the f64
//! reference before it is used (the `Gpu`'s self-check, `src/gpu/tiled.rs`). The library reads no environment variable:
//! the program maps its `SYMRASTER_*` variables onto a `Tuning` with [`Tuning::set`], the same
//! rule ([`GpuBuilder::vars`]).
//!
//! [`GpuBuilder::tuning`]: crate::gpu::GpuBuilder::tuning
//! [`GpuBuilder::vars`]: crate::gpu::GpuBuilder::vars

use crate::error::{DeviceError, Error, Result};
use crate::gl::{Context, DeviceInfo};
use crate::tiled::KernelConfig;
use crate::tiled::TiledTuning;
pub use crate::tiled::tuning::{GroupLimits, check_kernel_config};

/// The product kernel's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelShape {
    /// The device's: shared-memory tiles on GPUs, texel tiles on software renderers.
    #[default]
    Auto,
    /// 128 x 128 output tiles through shared memory (`KernelConfig::GPU`).
    SharedTiles,
    /// Register-only tiles with no shared memory or barriers (`KernelConfig::CPU`).
    RegisterTiles,
    /// Register tiles read through buffer textures (`KernelConfig::TEXEL`).
    TexelTiles,
    /// Explicit tile sizes.
    Custom(KernelConfig),
}

impl KernelShape {
    /// The tile sizes this shape stands for on a device.
    pub fn config(self, info: &DeviceInfo) -> KernelConfig {
        match self {
            KernelShape::Auto => KernelConfig::for_device(info),
            KernelShape::SharedTiles => KernelConfig::GPU,
            KernelShape::RegisterTiles => KernelConfig::CPU,
            KernelShape::TexelTiles => KernelConfig::TEXEL,
            KernelShape::Custom(c) => c,
        }
    }
}

/// The tuning of a `Gpu`'s methods; `None` leaves a value to the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// The product kernel's shape.
    pub kernel: KernelShape,
    /// The order of the diagonal blocks the tiled Cholesky factors and inverts in one work
    /// group (a multiple of 16 from 16 to 128; default 64 with the GPUs' kernels, 32 with
    /// software renderers': `KernelConfig::default_diagonal_block`); set, it is also the
    /// chained Cholesky's tile order unless [`Tuning::chain_tile`] names another.
    pub diagonal_block: Option<usize>,
    /// The tiled Cholesky's outer block-column width, the rank of its trailing updates (1 to
    /// 65536, rounded up to a multiple of the diagonal blocks; default 512).
    pub outer_block: Option<usize>,
    /// Whether the tiled Cholesky's inner updates also factor the next diagonal block in the
    /// same launch where the kernels can (one dependent launch fewer per block; default no:
    /// with the GPUs' blocks of 64 the fused launch is slower,
    /// `figures/h200/experiments/cholesky_diag_sweep.csv`).
    pub fused_diagonal: Option<bool>,
    /// How the tiled Cholesky factors and inverts its diagonal blocks (default
    /// `KernelConfig::default_diagonal_factor`: column by column).
    pub diagonal_factor: Option<crate::tiled::DiagonalFactor>,
    /// The order from which full storage is factored with RFP's split (default 16384).
    pub split_order: Option<usize>,
    /// The most bytes of one storage buffer of a tiled matrix or of A's column blocks (at
    /// least 4; it never raises the device's limit): several buffers at small orders.
    pub max_buffer_bytes: Option<u64>,
    /// Whether transfers from [`Tuning::staged_from_bytes`] on go through mappings filled or
    /// emptied on all cores (default yes).
    pub mapped_upload: Option<bool>,
    /// The size in bytes from which transfers go through the staging buffers, mapped and
    /// filled or emptied on all cores, rather than glBufferSubData and glGetBufferSubData
    /// (default [`DEFAULT_STAGED_FROM_BYTES`]).
    pub staged_from_bytes: Option<u64>,
    /// The bytes per chunk of a staged transfer, at most 32 MiB (default 32 MiB).
    pub staging_chunk_bytes: Option<u64>,
    /// A texture limit below the driver's GL_MAX_TEXTURE_SIZE (it can never raise it), so that
    /// the size limits can be tried with small matrices.
    pub max_texture_size: Option<usize>,
    /// The packed-panel product's variant (k-slice depth, tile order, padded panels, register
    /// double buffering, unroll pragma, A·√d packed once; default
    /// `PanelVariant::DEFAULT`).
    pub panel: Option<crate::tiled::PanelVariant>,
    /// How the tiled Cholesky of full storage is scheduled: blocked launches, one chained
    /// launch, or chained panels with trailing products (default on GPUs
    /// `GPU_CHOLESKY_SCHEDULE`, Auto; on
    /// software renderers `CholeskySchedule::Blocked`).
    pub cholesky_schedule: Option<crate::tiled::schedule::CholeskySchedule>,
    /// Whether the chained Cholesky (glsl/tiled/potrf_chain.comp, and the f64 chain of
    /// glsl/double/potrf_chain.comp on its tiles of 32) folds each sub-diagonal
    /// tile's last product L_{j+1,j} = acc·L_jj⁻ᵀ into the work group of the next diagonal
    /// tile: one flag hand-off fewer per diagonal step on its critical path (default: with
    /// tiles of 32 or less, [`Tuning::chain_fold_for`]).
    pub chain_fold: Option<bool>,
    /// How the chained Cholesky's (f32 and f64) waiting invocation polls a tile's ready flag
    /// (the f64 chain: by loads, else by atomic reads; default
    /// `ChainPoll::Load`, the fastest measured:
    /// `figures/h200/experiments/cholesky_path.txt`).
    pub chain_poll: Option<crate::tiled::ChainPoll>,
    /// With [`Tuning::chain_fold`]: whether the diagonal group publishes the folded tile
    /// L_{j+1,j} as soon as it is written, before its own update from it, so that the next
    /// sub-diagonal tile's sum (on the critical path) does not wait for that update (default no).
    pub chain_fold_early: Option<bool>,
    /// Whether the chained Cholesky drops the barrier after each term's last slice where the
    /// next term's wait (a barrier itself) follows: one barrier fewer per term (default yes).
    pub chain_lean: Option<bool>,
    /// The largest half `CholeskySchedule::Split`
    /// factors by one chained launch (larger halves are split again; default
    /// `SPLIT_CHAIN_ORDER`).
    pub split_chain_order: Option<usize>,
    /// How the split Cholesky solves L21 below a chained leaf (default
    /// `SplitSolve::DEFAULT`: by rows, one
    /// launch per outer block of 512 columns).
    pub split_solve: Option<crate::tiled::schedule::SplitSolve>,
    /// How many terms after one it waited for the chained Cholesky's work group (f32 and f64)
    /// checks at once, one flag per invocation, before it waits again (0: a wait for every
    /// term; the f64 chain takes at most 128; at most
    /// `CHAIN_AHEAD_MAX` and half the chain's work
    /// group; default `CHAIN_AHEAD`, or half the work
    /// group where that is smaller).
    pub chain_ahead: Option<usize>,
    /// The order of the chained Cholesky's tiles (a multiple of 16 from 16 to 128; default
    /// [`Tuning::diagonal_block`] where that is set, else the kernels'
    /// `KernelConfig::default_chain_tile`):
    /// the blocked Cholesky (RFP's) keeps [`Tuning::diagonal_block`].
    pub chain_tile: Option<usize>,
    /// The largest order whose right sides of several columns (up to 32) are solved by a
    /// chain per column side by side; past it, by one chain for all the columns (default
    /// `COLUMN_CHAINS_ORDER`).
    pub column_chains_order: Option<usize>,
}

/// A tuning value's name as the program takes it, its meaning and range.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// The environment variable the program maps onto it.
    pub name: &'static str,
    /// What its value must be, for the error message.
    pub expected: &'static str,
    /// The smallest value allowed.
    pub min: u64,
    /// The largest value allowed.
    pub max: u64,
    /// A multiple the value must be of (1: any).
    pub multiple_of: u64,
    // Where the value goes.
    field: Field,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    DiagonalBlock,
    OuterBlock,
    FusedDiagonal,
    DiagonalFactor,
    SplitOrder,
    MaxBufferBytes,
    MappedUpload,
    StagedFromBytes,
    StagingChunkBytes,
    MaxTextureSize,
}

impl Knob {
    /// `text` as a value of this knob: a number in its range, else a one-line
    /// [`DeviceError::BadEnvironment`].
    pub fn parse(&self, text: &str) -> Result<u64> {
        match text.trim().parse::<u64>() {
            Ok(n) if (self.min..=self.max).contains(&n) && n % self.multiple_of == 0 => Ok(n),
            _ => Err(DeviceError::BadEnvironment {
                name: self.name,
                value: text.to_string(),
                expected: self.expected,
            }
            .into()),
        }
    }

    fn get(&self, t: &Tuning) -> Option<u64> {
        match self.field {
            Field::DiagonalBlock => t.diagonal_block.map(|v| v as u64),
            Field::OuterBlock => t.outer_block.map(|v| v as u64),
            Field::FusedDiagonal => t.fused_diagonal.map(u64::from),
            Field::DiagonalFactor => t.diagonal_factor.map(|f| match f {
                crate::tiled::DiagonalFactor::Columns => 0,
                crate::tiled::DiagonalFactor::Panels => 1,
                crate::tiled::DiagonalFactor::Lanes => 2,
                crate::tiled::DiagonalFactor::Pairs => 3,
                crate::tiled::DiagonalFactor::Quads => 4,
            }),
            Field::SplitOrder => t.split_order.map(|v| v as u64),
            Field::MaxBufferBytes => t.max_buffer_bytes,
            Field::MappedUpload => t.mapped_upload.map(u64::from),
            Field::StagedFromBytes => t.staged_from_bytes,
            Field::StagingChunkBytes => t.staging_chunk_bytes,
            Field::MaxTextureSize => t.max_texture_size.map(|v| v as u64),
        }
    }

    fn put(&self, t: &mut Tuning, v: u64) {
        let n = usize::try_from(v).unwrap_or(usize::MAX);
        match self.field {
            Field::DiagonalBlock => t.diagonal_block = Some(n),
            Field::OuterBlock => t.outer_block = Some(n),
            Field::FusedDiagonal => t.fused_diagonal = Some(v != 0),
            Field::DiagonalFactor => {
                t.diagonal_factor = Some(match v {
                    0 => crate::tiled::DiagonalFactor::Columns,
                    1 => crate::tiled::DiagonalFactor::Panels,
                    2 => crate::tiled::DiagonalFactor::Lanes,
                    3 => crate::tiled::DiagonalFactor::Pairs,
                    _ => crate::tiled::DiagonalFactor::Quads,
                })
            }
            Field::SplitOrder => t.split_order = Some(n),
            Field::MaxBufferBytes => t.max_buffer_bytes = Some(v),
            Field::MappedUpload => t.mapped_upload = Some(v != 0),
            Field::StagedFromBytes => t.staged_from_bytes = Some(v),
            Field::StagingChunkBytes => t.staging_chunk_bytes = Some(v),
            Field::MaxTextureSize => t.max_texture_size = Some(n),
        }
    }
}

/// Where transfers start to go through the staging buffers unless tuned
/// ([`Tuning::staged_from_bytes`]).
pub const DEFAULT_STAGED_FROM_BYTES: usize = 1 << 20;

/// [`Tuning::diagonal_block`].
pub const TILED_DIAG: Knob = Knob {
    name: "SYMRASTER_TILED_DIAG",
    expected: "a multiple of 16 from 16 to 128 (the order of the tiled Cholesky's diagonal blocks)",
    min: 16,
    max: 128,
    multiple_of: 16,
    field: Field::DiagonalBlock,
};

/// [`Tuning::outer_block`].
pub const TILED_OUTER: Knob = Knob {
    name: "SYMRASTER_TILED_OUTER",
    expected: "a number of columns from 1 to 65536 (the tiled Cholesky's outer block columns)",
    min: 1,
    max: 65536,
    multiple_of: 1,
    field: Field::OuterBlock,
};

/// [`Tuning::fused_diagonal`].
pub const TILED_FUSED: Knob = Knob {
    name: "SYMRASTER_TILED_FUSED",
    expected: "0 or 1 (whether the tiled Cholesky's inner updates factor the next diagonal block)",
    min: 0,
    max: 1,
    multiple_of: 1,
    field: Field::FusedDiagonal,
};

/// [`Tuning::diagonal_factor`].
pub const TILED_PANELS: Knob = Knob {
    name: "SYMRASTER_TILED_PANELS",
    expected: "0 to 4 (the tiled Cholesky's diagonal blocks: columns, panels, lanes, pairs, quads)",
    min: 0,
    max: 4,
    multiple_of: 1,
    field: Field::DiagonalFactor,
};

/// [`Tuning::split_order`].
pub const TILED_SPLIT: Knob = Knob {
    name: "SYMRASTER_TILED_SPLIT",
    expected: "an order from 1 to 4294967295 (where full storage is factored with RFP's split)",
    min: 1,
    max: u32::MAX as u64,
    multiple_of: 1,
    field: Field::SplitOrder,
};

/// [`Tuning::max_buffer_bytes`].
pub const TILED_MAX_BUFFER_BYTES: Knob = Knob {
    name: "SYMRASTER_TILED_MAX_BUFFER_BYTES",
    expected: "a number of bytes (≥ 4) for one storage buffer of a tiled matrix",
    min: 4,
    max: u64::MAX,
    multiple_of: 1,
    field: Field::MaxBufferBytes,
};

/// [`Tuning::mapped_upload`].
pub const MAPPED_UPLOAD: Knob = Knob {
    name: "SYMRASTER_MAPPED_UPLOAD",
    expected: "0 or 1 (whether large uploads go through a mapping)",
    min: 0,
    max: 1,
    multiple_of: 1,
    field: Field::MappedUpload,
};

/// [`Tuning::staged_from_bytes`].
pub const STAGED_FROM_BYTES: Knob = Knob {
    name: "SYMRASTER_STAGED_FROM_BYTES",
    expected: "a number of bytes from 1 to 2147483647 (from which transfers are staged)",
    min: 1,
    max: i32::MAX as u64,
    multiple_of: 1,
    field: Field::StagedFromBytes,
};

/// [`Tuning::staging_chunk_bytes`].
pub const STAGING_CHUNK_BYTES: Knob = Knob {
    name: "SYMRASTER_STAGING_CHUNK_BYTES",
    expected: "a number of bytes from 262144 to 33554432, a multiple of 262144 (a staged chunk)",
    min: 1 << 18,
    max: 32 << 20,
    multiple_of: 1 << 18,
    field: Field::StagingChunkBytes,
};

/// [`Tuning::max_texture_size`].
pub const MAX_TEXTURE_SIZE: Knob = Knob {
    name: "SYMRASTER_MAX_TEXTURE_SIZE",
    expected: "a positive texture size in texels (it can only lower the driver's limit)",
    min: 1,
    max: u32::MAX as u64,
    multiple_of: 1,
    field: Field::MaxTextureSize,
};

/// [`Tuning::kernel`] as "wg_x,wg_y,tm,tn,bk,reads,nb".
pub const TILED_CONFIG: &str = "SYMRASTER_TILED_CONFIG";

/// What [`TILED_CONFIG`] must hold.
const CONFIG_EXPECTED: &str = "\"wg_x,wg_y,tm,tn,bk,reads,nb\" with tm and tn multiples of 4 \
     (at most 16 each), reads 0, 1 or 2, nb a multiple of 16 up to 96 (e.g. 16,16,8,8,16,1,32)";

/// The numeric knobs, in the order they are checked.
pub const KNOBS: [Knob; 10] = [
    TILED_DIAG,
    TILED_OUTER,
    TILED_FUSED,
    TILED_PANELS,
    TILED_SPLIT,
    TILED_MAX_BUFFER_BYTES,
    MAPPED_UPLOAD,
    STAGED_FROM_BYTES,
    STAGING_CHUNK_BYTES,
    MAX_TEXTURE_SIZE,
];

impl Tuning {
    /// Sets the value a program variable names (a [`KNOBS`] name or [`TILED_CONFIG`]) from its
    /// text, by the one rule; a name that is no tuning value is
    /// [`DeviceError::BadEnvironment`] too.
    pub fn set(&mut self, name: &str, text: &str) -> Result<()> {
        if name == TILED_CONFIG {
            return match KernelConfig::parse(text) {
                Some(c) => {
                    self.kernel = KernelShape::Custom(c);
                    Ok(())
                }
                None => Err(DeviceError::BadEnvironment {
                    name: TILED_CONFIG,
                    value: text.to_string(),
                    expected: CONFIG_EXPECTED,
                }
                .into()),
            };
        }
        match KNOBS.iter().find(|k| k.name == name) {
            Some(knob) => {
                let v = knob.parse(text)?;
                knob.put(self, v);
                Ok(())
            }
            None => Err(Error::from(crate::error::InputError::Unsupported(format!(
                "{name} is no tuning value (they are {TILED_CONFIG}, {}; SYMRASTER_EGL_DEVICE \
                 picks the device)",
                KNOBS.map(|k| k.name).join(", ")
            )))),
        }
    }

    /// Whether `name` is a tuning value's name.
    pub fn is_knob(name: &str) -> bool {
        name == TILED_CONFIG || KNOBS.iter().any(|k| k.name == name)
    }

    /// Checks every value by the one rule: each in its knob's range, then the product kernel's
    /// tiles against the device's limits (where it has compute shaders).
    pub fn validate(&self, ctx: &Context, info: &DeviceInfo) -> Result<()> {
        for knob in KNOBS {
            if let Some(v) = knob.get(self) {
                knob.parse(&v.to_string())?;
            }
        }
        if let KernelShape::Custom(c) = self.kernel {
            KernelConfig::parse(&format!(
                "{},{},{},{},{},{},{}",
                c.wg_x,
                c.wg_y,
                c.tm,
                c.tn,
                c.bk,
                if c.texel { 2 } else { u8::from(c.shared) },
                c.nb
            ))
            .ok_or_else(|| {
                Error::from(DeviceError::BadTuning {
                    what: format!("the product kernel's tiles {c:?}"),
                    why: CONFIG_EXPECTED.into(),
                })
            })?;
        }
        if info.has_compute() {
            let config = self.kernel.config(info);
            check_kernel_config(
                &config,
                self.diagonal_block_for(&config),
                &GroupLimits::query(ctx)?,
            )?;
        }
        Ok(())
    }

    /// Whether anything of the tiled kernels differs from the device's choice (so
    /// the `Gpu`'s self-check runs).
    pub fn tiles_tuned(&self) -> bool {
        self.kernel != KernelShape::Auto
            || self.diagonal_block.is_some()
            || self.outer_block.is_some()
            || self.fused_diagonal.is_some()
            || self.diagonal_factor.is_some()
            || self.cholesky_schedule.is_some()
            || self.chain_fold.is_some()
            || self.chain_poll.is_some()
            || self.chain_fold_early.is_some()
            || self.chain_lean.is_some()
            || self.split_chain_order.is_some()
            || self.split_solve.is_some()
            || self.chain_ahead.is_some()
            || self.chain_tile.is_some()
            || self.column_chains_order.is_some()
            || self.panel.is_some()
    }

    /// The tiled method's part of this tuning.
    pub(crate) fn tiled(&self) -> TiledTuning {
        TiledTuning {
            diagonal_block: self.diagonal_block,
            outer_block: self.outer_block,
            fused_diagonal: self.fused_diagonal,
            diagonal_factor: self.diagonal_factor,
            split_order: self.split_order,
            panel: self.panel,
            cholesky_schedule: self.cholesky_schedule,
            chain_fold: self.chain_fold,
            chain_poll: self.chain_poll,
            chain_fold_early: self.chain_fold_early,
            chain_lean: self.chain_lean,
            split_chain_order: self.split_chain_order,
            split_solve: self.split_solve,
            chain_ahead: self.chain_ahead,
            chain_tile: self.chain_tile,
            column_chains_order: self.column_chains_order,
        }
    }

    /// [`Tuning::diagonal_block`] or the default of kernels that do not fuse blocks of 64
    /// (32; [`Tuning::diagonal_block_for`] gives a configuration's).
    pub fn diagonal_block(&self) -> usize {
        self.tiled().diagonal_block()
    }

    /// [`Tuning::outer_block`] or its default, rounded up to whole diagonal blocks of
    /// [`Tuning::diagonal_block`].
    pub fn outer_block(&self) -> usize {
        self.tiled().outer_block()
    }

    /// [`Tuning::diagonal_block`] or the default of the kernels of `config`.
    pub fn diagonal_block_for(&self, config: &KernelConfig) -> usize {
        self.tiled().diagonal_block_for(config)
    }

    /// [`Tuning::outer_block`] or its default, rounded up to whole diagonal blocks of the
    /// kernels of `config`.
    pub fn outer_block_for(&self, config: &KernelConfig) -> usize {
        self.tiled().outer_block_for(config)
    }

    /// [`Tuning::diagonal_factor`] or the default of the kernels of `config`.
    pub fn diagonal_factor_for(&self, config: &KernelConfig) -> crate::tiled::DiagonalFactor {
        self.tiled().diagonal_factor_for(config)
    }

    /// [`Tuning::fused_diagonal`] or its default (no).
    pub fn fused_diagonal(&self) -> bool {
        self.tiled().fused_diagonal()
    }

    /// [`Tuning::chain_fold`] or its default for chained tiles of order `tile`: yes up to 32
    /// (the fold speeds up tiles of 32 and slows tiles of 64:
    /// `figures/h200/experiments/chain_ahead.csv`, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_fold_for(&self, tile: usize) -> bool {
        self.tiled().chain_fold_for(tile)
    }

    /// [`Tuning::chain_poll`] or its default (`ChainPoll::Load`:
    /// the fastest measured, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_poll(&self) -> crate::tiled::ChainPoll {
        self.tiled().chain_poll()
    }

    /// [`Tuning::chain_fold_early`] or its default (no).
    pub fn chain_fold_early(&self) -> bool {
        self.tiled().chain_fold_early()
    }

    /// [`Tuning::chain_lean`] or its default (yes: the same factor, a little
    /// faster, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_lean(&self) -> bool {
        self.tiled().chain_lean()
    }

    /// [`Tuning::split_order`] or its default.
    pub fn split_order(&self) -> usize {
        self.tiled().split_order()
    }

    /// [`Tuning::cholesky_schedule`] or Blocked (the software renderers' default;
    /// [`Tuning::cholesky_schedule_for`] gives a device's).
    pub fn cholesky_schedule(&self) -> crate::tiled::schedule::CholeskySchedule {
        self.tiled().cholesky_schedule()
    }

    /// [`Tuning::cholesky_schedule`] or the default of the device: blocked on software
    /// renderers, `GPU_CHOLESKY_SCHEDULE` on GPUs.
    pub fn cholesky_schedule_for(
        &self,
        software: bool,
    ) -> crate::tiled::schedule::CholeskySchedule {
        self.tiled().cholesky_schedule_for(software)
    }

    /// [`Tuning::split_chain_order`] or its default (at least 1).
    pub fn split_chain_order(&self) -> usize {
        self.tiled().split_chain_order()
    }

    /// [`Tuning::split_solve`] or its default (by rows).
    pub fn split_solve(&self) -> crate::tiled::schedule::SplitSolve {
        self.tiled().split_solve()
    }

    /// [`Tuning::chain_tile`] or its default with the kernels of `config`.
    pub fn chain_tile_for(&self, config: &KernelConfig) -> usize {
        self.tiled().chain_tile_for(config)
    }

    /// [`Tuning::mapped_upload`] or its default (yes).
    pub fn mapped_upload(&self) -> bool {
        self.mapped_upload.unwrap_or(true)
    }

    /// [`Tuning::staged_from_bytes`] or its default.
    pub fn staged_from_bytes(&self) -> usize {
        self.staged_from_bytes
            .map_or(DEFAULT_STAGED_FROM_BYTES, |b| b as usize)
    }
}

impl From<&Tuning> for TiledTuning {
    fn from(tuning: &Tuning) -> Self {
        tuning.tiled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_take_their_range_and_nothing_else() {
        assert_eq!(TILED_OUTER.parse("512").unwrap(), 512);
        assert_eq!(TILED_OUTER.parse(" 1 ").unwrap(), 1);
        for bad in [
            "0",
            "65537",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "x",
            "",
        ] {
            let e = TILED_OUTER.parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("SYMRASTER_TILED_OUTER") && !e.contains('\n'),
                "{e}"
            );
        }
        assert!(TILED_SPLIT.parse("18446744073709551615").is_err());
        assert_eq!(TILED_DIAG.parse("64").unwrap(), 64);
        for bad in ["8", "40", "144", "0"] {
            assert!(TILED_DIAG.parse(bad).is_err(), "{bad}");
        }
        assert!(MAPPED_UPLOAD.parse("2").is_err());
        assert!(TILED_MAX_BUFFER_BYTES.parse("3").is_err());
    }

    #[test]
    fn program_variables_map_onto_the_tuning_by_the_one_rule() {
        let mut t = Tuning::default();
        t.set("SYMRASTER_TILED_SPLIT", "65").unwrap();
        t.set("SYMRASTER_TILED_CONFIG", "4,4,4,4,1,0,32").unwrap();
        t.set("SYMRASTER_MAPPED_UPLOAD", "0").unwrap();
        assert_eq!(t.split_order(), 65);
        assert_eq!(t.kernel, KernelShape::Custom(KernelConfig::CPU));
        assert!(!t.mapped_upload());
        assert!(t.tiles_tuned());
        // The diagonal factor: 0 column by column, 1 in panels, 2 by lanes; the default column by column.
        use crate::tiled::DiagonalFactor;
        assert_eq!(
            Tuning::default().diagonal_factor_for(&KernelConfig::GPU),
            DiagonalFactor::Columns
        );
        assert_eq!(
            Tuning::default().diagonal_factor_for(&KernelConfig::TEXEL),
            DiagonalFactor::Columns
        );
        for (text, want) in [
            ("0", DiagonalFactor::Columns),
            ("1", DiagonalFactor::Panels),
            ("2", DiagonalFactor::Lanes),
            ("3", DiagonalFactor::Pairs),
            ("4", DiagonalFactor::Quads),
        ] {
            let mut p = Tuning::default();
            p.set("SYMRASTER_TILED_PANELS", text).unwrap();
            assert_eq!(p.diagonal_factor_for(&KernelConfig::TEXEL), want);
            assert!(p.tiles_tuned());
        }
        assert!(TILED_PANELS.parse("5").is_err());
        for (name, value) in [
            ("SYMRASTER_TILED_OUTER", "18446744073709551615"),
            ("SYMRASTER_TILED_CONFIG", "8,4,1024,4,4,2,32"),
            ("SYMRASTER_TILED_LD_PAD", "3"),
        ] {
            let e = t.set(name, value).unwrap_err().to_string();
            assert!(e.contains(name) && !e.contains('\n'), "{e}");
        }
        assert_eq!(Tuning::default().outer_block(), 512);
        let t = Tuning {
            diagonal_block: Some(64),
            outer_block: Some(100),
            ..Tuning::default()
        };
        assert_eq!(t.outer_block(), 128);
        // Blocks of 64 with the GPUs' kernels, 32 with the others.
        let t = Tuning::default();
        assert_eq!(t.diagonal_block_for(&KernelConfig::GPU), 64);
        assert_eq!(t.diagonal_block_for(&KernelConfig::TEXEL), 32);
        assert_eq!(t.diagonal_block_for(&KernelConfig::CPU), 32);
        assert_eq!(t.outer_block_for(&KernelConfig::GPU), 512);
        let t = Tuning {
            outer_block: Some(100),
            ..Tuning::default()
        };
        assert_eq!(t.outer_block_for(&KernelConfig::GPU), 128);
        assert_eq!(t.outer_block_for(&KernelConfig::TEXEL), 128);
    }

    #[test]
    fn kernel_configs_beyond_the_device_are_refused() {
        let limits = GroupLimits {
            invocations: 1024,
            size: [1024, 1024],
            shared_bytes: 48 * 1024,
        };
        for c in [KernelConfig::GPU, KernelConfig::CPU, KernelConfig::TEXEL] {
            check_kernel_config(&c, 32, &limits).unwrap();
        }
        let small = GroupLimits {
            invocations: 128,
            size: [128, 128],
            shared_bytes: 8 * 1024,
        };
        let e = check_kernel_config(&KernelConfig::GPU, 32, &small)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS") && !e.contains('\n'),
            "{e}"
        );
        let narrow = GroupLimits {
            size: [8, 1024],
            ..limits
        };
        assert!(check_kernel_config(&KernelConfig::GPU, 32, &narrow).is_err());
        let tiny = GroupLimits {
            shared_bytes: 4 * 1024,
            ..limits
        };
        let e = check_kernel_config(&KernelConfig::TEXEL, 32, &tiny)
            .unwrap_err()
            .to_string();
        assert!(e.contains("diagonal blocks"), "{e}");
    }

    #[test]
    fn the_cholesky_schedule_defaults_to_auto_on_gpus_and_blocked_on_software() {
        use crate::tiled::schedule::{CholeskySchedule, GPU_CHOLESKY_SCHEDULE};
        let t = Tuning::default();
        assert_eq!(t.cholesky_schedule_for(true), CholeskySchedule::Blocked);
        assert_eq!(t.cholesky_schedule_for(false), GPU_CHOLESKY_SCHEDULE);
        assert_eq!(GPU_CHOLESKY_SCHEDULE, CholeskySchedule::Auto);
        for s in CholeskySchedule::ALL {
            let t = Tuning {
                cholesky_schedule: Some(s),
                ..Tuning::default()
            };
            assert_eq!(
                (
                    t.cholesky_schedule_for(true),
                    t.cholesky_schedule_for(false)
                ),
                (s, s)
            );
        }
    }
}
