//! The compiled compute kernels of the tiled method and the small buffers they share: the
//! launched tile lists (cached by shape) and the status word where the diagonal-block factor
//! records the first pivot that is not positive.

use super::config::{CholeskySchedule, DiagonalFactor, KernelConfig, PanelVariant};
use super::launches::{LaunchCounts, LaunchKind};
use super::product::Product;
use super::status::StatusWord;
use super::tiles::{grouped, output_tiles_below};
use super::view::View;
use crate::error::{Error, NumericalError, Result};
use crate::gl::{
    Buffer, BufferTarget, BufferTexture, BufferUsage, ComputeLimits, ComputeProgram, Context,
    TexelWidth, Uniform,
};
use crate::timing::Preheat;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::compute_kernels as table;

/// Order of the diagonal blocks the triangular solves invert ([`TiledKernels::invert_blocks`])
/// and then apply as products: 128, the largest a work group of 16 x 16 holds in registers.
pub const SOLVE_BLOCK: usize = 128;

/// Polls a work group of the chained solve spends waiting (in all) before it gives up and the
/// solve runs the blocked way: within llvmpipe's loop limit ([`crate::gl::LOOP_LIMIT`]) with
/// room for the kernel's other loops.
pub const CHAIN_SPIN_LIMIT: usize = 40_000;

/// Loop iterations (counted as if nothing were unrolled) one invocation of the chained solve
/// runs per block it subtracts, and for the rest of its work.
const CHAIN_LOOPS_PER_BLOCK: usize = 160;
const CHAIN_LOOPS_FIXED: usize = 1024;

/// The fewest polls worth a chained solve: below, it would give up too soon to be of use.
const CHAIN_MIN_SPINS: usize = 4096;

/// The polls a chained solve over `blocks` diagonal blocks may spend waiting so that, with its
/// tile loops, no invocation passes [`crate::gl::LOOP_LIMIT`] (where llvmpipe would end its
/// loops silently): at most [`CHAIN_SPIN_LIMIT`]; `None` where too few are left, and the
/// solve runs the blocked way.
pub fn chain_spin_limit(blocks: usize) -> Option<usize> {
    let rest = crate::gl::LOOP_LIMIT
        .checked_sub(blocks.saturating_mul(CHAIN_LOOPS_PER_BLOCK) + CHAIN_LOOPS_FIXED)?;
    let limit = rest.min(CHAIN_SPIN_LIMIT);
    (limit >= CHAIN_MIN_SPINS).then_some(limit)
}

/// Loop iterations one invocation of the chained Cholesky runs per tile column (its ticket,
/// the wait and the T-deep product of one k step, constant loops unrolled) beyond the tile's
/// order, and for the rest of its work (the diagonal factor, the product with the inverse).
const FACTOR_CHAIN_LOOPS_PER_COLUMN: usize = 24;
const FACTOR_CHAIN_LOOPS_FIXED: usize = 4096;

/// The polls a work group of the chained Cholesky over `tile_columns` tile columns of order
/// `tile` may spend waiting so that no invocation passes [`crate::gl::LOOP_LIMIT`]: at most
/// [`CHAIN_SPIN_LIMIT`]; `None` where too few are left (the factorization runs blocked).
pub fn factor_chain_spin_limit(tile_columns: usize, tile: usize) -> Option<usize> {
    let per_column = tile + FACTOR_CHAIN_LOOPS_PER_COLUMN;
    let rest = crate::gl::LOOP_LIMIT
        .checked_sub(tile_columns.saturating_mul(per_column) + FACTOR_CHAIN_LOOPS_FIXED)?;
    let limit = rest.min(CHAIN_SPIN_LIMIT);
    (limit >= CHAIN_MIN_SPINS).then_some(limit)
}

/// Depth of the slices the chained Cholesky's tile products run over (it divides every
/// diagonal-block order, multiples of 16).
pub fn factor_chain_slice(tile: usize) -> usize {
    if tile.is_multiple_of(32) { 32 } else { 16 }
}

/// Shared memory of the chained Cholesky's work group with tiles of order `tile` (two padded
/// slices of [`factor_chain_slice`] columns beside the diagonal factor's own), in bytes.
pub fn factor_chain_shared_bytes(tile: usize, factor: DiagonalFactor) -> usize {
    2 * tile * (factor_chain_slice(tile) + 1) * 4 + factor.shared_bytes(tile) + 16
}

/// What a chained Cholesky ([`TiledKernels::potrf_chain`]) works on.
pub(crate) struct ChainFactor<'a> {
    /// The matrix (full storage, one buffer; or a block column [B11; B21] of it whose width is
    /// a multiple of the tiles' order), factored in place.
    pub c: Operand<'a>,
    /// Its first column in the whole matrix (for the status word).
    pub column0: usize,
    /// Tickets, the gave-up word and one ready flag per tile, zeroed (the gave-up word may be
    /// set to give up at once).
    pub sync: &'a Buffer<u32>,
    /// Two words for the diagonal factor's own status (the chain reports through the status
    /// word with atomicMin instead).
    pub scratch: &'a Buffer<u32>,
    /// Polls a work group may spend waiting in all ([`factor_chain_spin_limit`]).
    pub spin_limit: usize,
}

/// What a chained solve ([`TiledKernels::trsv_chain`]) works on.
pub(crate) struct ChainSolve<'a> {
    /// The factor's storage.
    pub l: &'a Buffer<f32>,
    /// Its inverted diagonal blocks, slot = block.
    pub inv: &'a Buffer<f32>,
    /// b in, the solution out.
    pub x: &'a Buffer<f32>,
    /// Tickets, the gave-up word and the blocks' ready flags, zeroed.
    pub sync: &'a Buffer<u32>,
    /// The order.
    pub m: usize,
    /// Rows of view 0 (m for one view).
    pub n1: usize,
    /// Blocks in the first n1 rows.
    pub blocks1: usize,
    /// All blocks.
    pub blocks: usize,
    /// Polls a work group may spend waiting in all ([`chain_spin_limit`]).
    pub spin_limit: usize,
    /// L's entries: rows below n1; rows from n1, columns below; both from n1.
    pub views: [View; 3],
}

/// Products of at least this depth run on packed panels (`PanelProducts`) where the kernels
/// have them: the assembly and the outer-rank updates of the Cholesky and its solves. The
/// inner-block updates (depth = the diagonal blocks' order) stay on the general kernel: a
/// packing launch before each would add a dependent dispatch per block for little gain.
pub const PANEL_MIN_DEPTH: usize = 64;

/// Order of the diagonal blocks that the blocked Cholesky factors and inverts in one work
/// group (its inner block-column width), for kernels other than the GPUs' (software
/// renderers: see [`GPU_DIAG_BLOCK`]): inside outer blocks (two levels beat one) 32 beat 64
/// with the schedule of the time (measured in docs/results.md).
pub const DIAG_BLOCK: usize = 32;

/// The diagonal blocks' order with the GPUs' kernels ([`KernelConfig::default_diagonal_block`]):
/// the fastest of 32, 64 and 128 (`figures/h200/experiments/cholesky_sweep.csv`). The
/// measurements of 64 above (slower than 32) ran a schedule
/// that packed its inner updates (depth 64) and so never fused them with the next block: 245
/// launches at m = 4096 where 32 took 269; now 64 takes 134 and 32 takes 262, and the diagonal
/// factor's cost per column, not the block's order, sets the serial part
/// (`figures/h200/experiments/cholesky_dispatch_profile.txt`). `scripts/h200_cholesky.sh`
/// times 32, 64 and 128 in one run.
pub const GPU_DIAG_BLOCK: usize = 64;

/// The chained Cholesky's tile order with the GPUs' kernels
/// ([`KernelConfig::default_chain_tile`]), apart from the blocked factor's [`GPU_DIAG_BLOCK`]:
/// with the look-ahead and the fold, tiles of 32 beat 64 in the chain and in the split's
/// leaves, while the blocked factor (RFP's) is faster on 64
/// (`figures/h200/experiments/chain_ahead.csv`).
pub const CHAIN_TILE: usize = 32;

/// Width of the outer block columns of the blocked Cholesky: the rank of its trailing updates
/// (the fastest of 128 to 1024; measured in docs/results.md).
pub const OUTER_BLOCK: usize = 512;

/// Below this many full-size output tiles a product runs with the small-tile kernel.
const SMALL_PRODUCT_TILES: usize = 264;

/// Launched tile lists by (rows, cols, mask shift, tile rows, tile cols, band of tile rows).
type TileLists = HashMap<(usize, usize, Option<isize>, usize, usize, usize), Buffer<[u32; 2]>>;

/// A view of a storage buffer: what a kernel reads or writes.
#[derive(Clone, Copy)]
pub struct Operand<'a> {
    /// The buffer.
    pub buffer: &'a Buffer<f32>,
    /// The block of it.
    pub view: View,
}

impl<'a> Operand<'a> {
    /// `view` of `buffer`.
    pub fn new(buffer: &'a Buffer<f32>, view: View) -> Self {
        Self { buffer, view }
    }

    /// The same buffer through another view.
    pub fn with(&self, view: View) -> Self {
        Self {
            buffer: self.buffer,
            view,
        }
    }
}

/// The product kernel that reads its operands through buffer textures ([`KernelConfig::texel`]):
/// one float per texel for any view, four along k for aligned ones, and a packing kernel that
/// makes the others aligned.
struct TexelProducts {
    // [in place][in fours along k].
    programs: [[ComputeProgram; 2]; 2],
    // Copies an operand into rows of consecutive floats on 4-float boundaries (`pack.comp`).
    pack: ComputeProgram,
    // The buffer textures of A, B, d and C (texture units 0, 1, 2, 3).
    textures: [BufferTexture; 4],
    // The packed A and B of the product being launched (grown as needed).
    packed: [RefCell<Option<Buffer<f32>>>; 2],
    // GL_MAX_TEXTURE_BUFFER_SIZE: larger buffers go through the storage-buffer kernel.
    max_texels: usize,
}

/// The most columns of depth one product launch covers: its kernels loop over the depth (at
/// most one iteration per column), and llvmpipe ends an invocation's loops silently after
/// [`crate::gl::LOOP_LIMIT`] iterations; deeper products run as several launches. A multiple of
/// 4 (the texel kernel reads d in fours from its offset).
pub const DEPTH_PER_LAUNCH: usize = crate::gl::LOOP_BUDGET;

/// `len` cut into blocks of `cut` (start, length), the last taking the rest (so every block
/// has at least `cut` where `len` does).
fn cut_blocks(len: usize, cut: usize) -> impl Iterator<Item = (usize, usize)> {
    let n = (len / cut).max(1);
    (0..n).map(move |i| (i * cut, if i + 1 == n { len - i * cut } else { cut }))
}

/// Products of a smaller depth are read one float at a time rather than packed.
const PACK_MIN_DEPTH: usize = 8;

/// Work groups of the packing kernel along its rows: GL's least maximum (65535) of 4 rows.
const PACK_MAX_ROWS: usize = 65535 * 4;

/// `x` as the texel kernel reads it: itself, or where `packed` its copy in `buffer` (rows of
/// `ld` floats).
fn packed_operand<'a>(
    x: Operand<'a>,
    packed: bool,
    buffer: Option<&'a Buffer<f32>>,
    ld: usize,
) -> Result<Operand<'a>> {
    match (packed, buffer) {
        (false, _) => Ok(x),
        (true, Some(buffer)) => Ok(Operand::new(
            buffer,
            View {
                offset: 0,
                rs: ld,
                cs: 1,
                rows: x.view.rows,
                cols: ld,
            },
        )),
        (true, None) => Err(Error::shape("a packed operand was never written")),
    }
}

/// How the texel kernel reads the operands A (rows x depth) and B (cols x depth) of a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TexelReads {
    /// One float per fetch, any strides.
    Single,
    /// Four consecutive k per fetch, straight from the operands' buffers.
    Fours,
    /// Four per fetch after copying the operands marked (`a`, `b`) into rows of `ld` floats,
    /// zeros after the depth (`ld` is the depth rounded up to 4; both are packed when it grew).
    Packed { a: bool, b: bool, ld: usize },
}

impl TexelReads {
    /// Fours where both operands are k-contiguous with rows on 4-float boundaries and the depth
    /// is a multiple of 4; else packed (column-major RFP blocks, orders off multiples of 4),
    /// unless the depth is small, or d would be read past its end.
    fn plan(av: View, bv: View, scaled: bool) -> Self {
        let depth = av.cols;
        let whole = depth.is_multiple_of(4);
        let fours = |v: View| {
            whole
                && v.cs == 1
                && v.offset.is_multiple_of(4)
                && (v.rs.is_multiple_of(4) || v.rows == 1)
        };
        match (fours(av), fours(bv)) {
            (true, true) => TexelReads::Fours,
            _ if depth < PACK_MIN_DEPTH || (scaled && !whole) => TexelReads::Single,
            _ if av.rows.max(bv.rows) > PACK_MAX_ROWS => TexelReads::Single,
            (a, b) => TexelReads::Packed {
                a: !a,
                b: !b,
                ld: depth.next_multiple_of(4),
            },
        }
    }
}

impl TexelProducts {
    fn new(ctx: &Context, config: KernelConfig) -> Result<Self> {
        let program = |in_place: bool, vec: usize| -> Result<ComputeProgram> {
            let defines = format!(
                "#define VEC {vec}\n#define IN_PLACE {}\n",
                u8::from(in_place)
            );
            let p = ComputeProgram::new(
                ctx,
                &table::GEMM_TEXEL,
                &format!("VEC {vec}, IN_PLACE {}", u8::from(in_place)),
                &config.source(&format!("{defines}{}", table::GEMM_TEXEL.source)),
            )?;
            p.set_all(&[
                ("a_tex", Uniform::I32(0)),
                ("b_tex", Uniform::I32(1)),
                ("d_tex", Uniform::I32(2)),
                ("c_tex", Uniform::I32(3)),
            ])?;
            Ok(p)
        };
        let pack = ComputeProgram::new(ctx, &table::PACK, "", &config.source(table::PACK.source))?;
        pack.set("src", Uniform::I32(0))?;
        Ok(Self {
            programs: [
                [program(false, 1)?, program(false, 4)?],
                [program(true, 1)?, program(true, 4)?],
            ],
            pack,
            textures: [
                BufferTexture::new(ctx)?,
                BufferTexture::new(ctx)?,
                BufferTexture::new(ctx)?,
                BufferTexture::new(ctx)?,
            ],
            packed: [RefCell::new(None), RefCell::new(None)],
            max_texels: BufferTexture::max_texels(ctx),
        })
    }

    /// Copies `x` into packed operand `slot` as rows of `ld` floats (k-contiguous, zeros after
    /// its columns): one launch.
    fn pack(&self, ctx: &Context, slot: usize, x: Operand<'_>, ld: usize, dry: bool) -> Result<()> {
        let v = x.view;
        let mut packed = self.packed[slot].borrow_mut();
        if packed.as_ref().is_none_or(|b| b.len() < v.rows * ld) {
            *packed = None;
            *packed = Some(Buffer::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                v.rows * ld,
            )?);
        }
        if let Some(dst) = packed.as_ref() {
            dst.bind_base(0);
        }
        self.textures[0].attach(x.buffer, TexelWidth::One, 0);
        let u = |v: usize| Uniform::U32(v as u32);
        self.pack.set_all(&[
            ("rows", u(v.rows)),
            ("cols", u(v.cols)),
            ("ld", u(ld)),
            ("s_off", u(v.offset)),
            ("s_rs", u(v.rs)),
            ("s_cs", u(v.cs)),
        ])?;
        if !dry {
            self.pack
                .dispatch([ld.div_ceil(16) as u32, v.rows.div_ceil(4) as u32, 1])?;
        }
        Ok(())
    }
}

/// The rows a packed panel of `rows` rows takes for tiles of at most `tile` rows (a power of
/// two, at least 32: the packing kernel's width): whole blocks of `tile`.
pub fn panel_rows(rows: usize, tile: usize) -> usize {
    rows.max(1).next_multiple_of(tile)
}

/// The product on packed panels (`pack_panel.comp`, `gemm_panel.comp`): each operand copied
/// once per product into a k-major panel, zero-padded to whole tiles and k-slices, d folded
/// into B's; then the product reads only vec4s with no bounds checks, prefetching the next
/// k-slice into registers while it multiplies the current one (double-buffered shared memory).
struct PanelProducts {
    pack: ComputeProgram,
    // The full-size tiles and, for products with few of them, the quarter-size tiles.
    gemm: (ComputeProgram, KernelConfig),
    small: Option<(ComputeProgram, KernelConfig)>,
    // Both with FUSED_DIAG for diagonal blocks of the given order (the Cholesky's trailing
    // update then factors the next diagonal block), where the tiles allow it.
    fused: Option<(usize, FusedPanels)>,
    // The panels of A and B (grown as needed, kept for the next product).
    panels: [RefCell<Option<Buffer<f32>>>; 2],
    // The slice depth, tile order, padding and register buffering compiled in.
    variant: PanelVariant,
}

/// The packed-panel products with FUSED_DIAG: full-size tiles and, where they exist,
/// quarter-size ones.
type FusedPanels = [Option<(ComputeProgram, KernelConfig)>; 2];

impl PanelProducts {
    /// The panel kernels of `config`, with fused variants for diagonal blocks of order `diag`
    /// where given.
    fn new(
        ctx: &Context,
        config: KernelConfig,
        limits: &ComputeLimits,
        diag: Option<usize>,
        factor: DiagonalFactor,
        panel: PanelVariant,
    ) -> Result<Option<Self>> {
        if !panel.is_valid() {
            return Err(crate::error::DeviceError::BadTuning {
                what: format!("the packed-panel product's variant {panel:?}"),
                why: "slices of 4, 8 or 16 and bands of 1 to 64 tile rows".into(),
            }
            .into());
        }
        let fits = |c: &KernelConfig| c.panels_sliced(limits.max_shared_bytes, panel.slice);
        if !fits(&config) {
            return Ok(None);
        }
        let defines = panel.defines();
        let gemm = |c: KernelConfig, variant: &str| -> Result<(ComputeProgram, KernelConfig)> {
            let c = c.panel_sliced(panel.slice);
            let k = &table::GEMM_PANEL;
            let source = format!("{defines}{}", k.source);
            Ok((ComputeProgram::new(ctx, k, variant, &c.source(&source))?, c))
        };
        let small = config.small().filter(fits);
        // The fused variants: a 16 x 16 work group (potrf_inv_fn's default) whose tile holds
        // the block, of order at most 64 (4 x 4 entries per invocation: a block of 128 in
        // 16 x 16 invocations ran out of registers, README).
        let fused = |c: KernelConfig, diag: usize, variant: &str| -> Result<_> {
            let c = c.panel_sliced(panel.slice);
            if (c.wg_x, c.wg_y) != (16, 16) || c.bm().min(c.bn()) < diag || diag > 64 {
                return Ok(None);
            }
            let k = &table::GEMM_PANEL_FUSED;
            let source = format!("{defines}{}", fused_source(k, factor));
            let c = KernelConfig { nb: diag, ..c };
            Ok(Some((ComputeProgram::new(ctx, k, variant, &c.source(&source))?, c)))
        };
        let pack = &table::PACK_PANEL;
        Ok(Some(Self {
            pack: ComputeProgram::new(ctx, pack, "", &config.source(pack.source))?,
            gemm: gemm(config, "")?,
            small: match small {
                Some(s) => Some(gemm(s, "small tiles")?),
                None => None,
            },
            fused: match diag {
                Some(d) => Some((
                    d,
                    [
                        fused(config, d, "")?,
                        match small {
                            Some(s) => fused(s, d, "small tiles")?,
                            None => None,
                        },
                    ],
                )),
                None => None,
            },
            panels: [RefCell::new(None), RefCell::new(None)],
            variant: panel,
        }))
    }
}

/// The source of a product kernel with FUSED_DIAG that then factors the diagonal block at its
/// output's corner with `factor` (its function at the kernel's `// FUSED_DIAG_FUNCTION` line,
/// the subgroup directives first).
fn fused_source(k: &crate::gl::ComputeKernel, factor: DiagonalFactor) -> String {
    format!(
        "{}#define FUSED_DIAG\n#define INV_BINDING 6\n{}",
        table::SUBGROUPS_HEADER,
        k.source
            .replace("// FUSED_DIAG_FUNCTION", factor.function())
    )
}

/// The source of the chained Cholesky for a work group of `(px, py)` (the diagonal factor's)
/// with the diagonal factor `factor` at its `// FUSED_DIAG_FUNCTION` line, each sub-diagonal
/// tile's last product folded into the next diagonal tile's group where `fold`
/// ([`TiledTuning::chain_fold`](super::TiledTuning::chain_fold); its flag set before the group's update
/// where `early`, [`TiledTuning::chain_fold_early`](super::TiledTuning::chain_fold_early)), its flags
/// polled as `poll` says ([`TiledTuning::chain_poll`](super::TiledTuning::chain_poll)), the barriers the
/// next wait makes redundant dropped where `lean` ([`TiledTuning::chain_lean`](super::TiledTuning::chain_lean)),
/// `ahead` later terms checked at once after each wait ([`TiledTuning::chain_ahead`](super::TiledTuning::chain_ahead)).
fn chain_source(
    (px, py): (usize, usize),
    diag: usize,
    factor: DiagonalFactor,
    (fold, early): (bool, bool),
    (poll, lean, ahead): (super::ChainPoll, bool, usize),
) -> String {
    let ks = factor_chain_slice(diag);
    let (fold, early, lean) = (u8::from(fold), u8::from(early), u8::from(lean));
    let (poll, every) = (poll.define(), super::config::CHAIN_GAVE_UP_EVERY);
    format!(
        "{}#define PX {px}\n#define PY {py}\n#define KS {ks}\n#define CHAIN_FOLD {fold}\n#define CHAIN_FOLD_EARLY {early}\n#define CHAIN_LEAN {lean}\n#define CHAIN_POLL {poll}\n#define CHAIN_GAVE_UP_EVERY {every}u\n#define CHAIN_AHEAD {ahead}\n#define FUSED_DIAG\n#define INV_BINDING 1\n{}",
        table::SUBGROUPS_HEADER,
        table::POTRF_CHAIN
            .source
            .replace("// FUSED_DIAG_FUNCTION", factor.function())
    )
}

/// The chain's look-ahead for its work group of `(px, py)`: `ahead`
/// ([`TiledTuning::chain_ahead`](super::TiledTuning::chain_ahead)) where the group has an invocation for
/// each flag it checks (two per term) and it is at most
/// [`CHAIN_AHEAD_MAX`](super::config::CHAIN_AHEAD_MAX), else the tuning error; without one
/// [`CHAIN_AHEAD`](super::config::CHAIN_AHEAD) or the most the group checks.
fn chain_ahead(ahead: Option<usize>, (px, py): (usize, usize)) -> Result<usize> {
    let max = super::config::CHAIN_AHEAD_MAX.min(px * py / 2);
    let Some(ahead) = ahead else {
        return Ok(super::config::CHAIN_AHEAD.min(max));
    };
    if ahead <= max {
        return Ok(ahead);
    }
    Err(crate::error::DeviceError::BadTuning {
        what: format!("the chained Cholesky's look-ahead of {ahead} terms"),
        why: format!(
            "its work group of {px} x {py} invocations checks at most {max} terms at once"
        ),
    }
    .into())
}

/// The least common multiple of two orders (both at least 1).
fn lcm(a: usize, b: usize) -> usize {
    let gcd = |mut x: usize, mut y: usize| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b).max(1) * b
}

/// `tile` ([`TiledTuning::chain_tile`](super::TiledTuning::chain_tile)) where it is an order the chain's
/// kernel takes (a multiple of 16 from 16 to 128), else the tuning error.
fn check_chain_tile(tile: usize) -> Result<()> {
    if (16..=128).contains(&tile) && tile.is_multiple_of(16) {
        return Ok(());
    }
    Err(crate::error::DeviceError::BadTuning {
        what: format!("the chained Cholesky's tiles of {tile}"),
        why: "they must be a multiple of 16 from 16 to 128".into(),
    }
    .into())
}

/// The tiled method's kernels, compiled for one context with one [`KernelConfig`].
pub struct TiledKernels {
    ctx: Context,
    config: KernelConfig,
    limits: ComputeLimits,
    gemm: ComputeProgram,
    // The product kernel with quarter-size tiles, for products too small to fill the GPU
    // with full tiles (the panel updates of the recursion).
    gemm_small: Option<(ComputeProgram, KernelConfig)>,
    // The product through buffer textures, with a texel configuration.
    texel: Option<TexelProducts>,
    // The product on packed panels, with shared-memory tiles that allow it.
    panel: Option<PanelProducts>,
    // Inverts diagonal blocks of order SOLVE_BLOCK for the solves (shared-memory tiles only).
    trtri: Option<ComputeProgram>,
    // One solve with one right-hand side in one launch, on those inverses.
    trsv_chain: Option<ComputeProgram>,
    // Solves that ran chained (tests check the chain itself ran).
    chained: Cell<u64>,
    // The Cholesky of full storage as one launch (potrf_chain.comp), where its tiles fit.
    potrf_chain: Option<ComputeProgram>,
    // Whether the Cholesky runs as that one launch, and factorizations that did so far.
    schedule: CholeskySchedule,
    chained_factors: Cell<u64>,
    // Whether the chain folds each sub-diagonal tile's last product into the next diagonal
    // tile's group (Tuning::chain_fold).
    chain_fold: bool,
    // How the chain polls its ready flags (Tuning::chain_poll).
    chain_poll: super::ChainPoll,
    // Whether the folded tile's flag is set before the diagonal group's update
    // (Tuning::chain_fold_early).
    chain_fold_early: bool,
    // Whether the chain drops the barriers the next wait makes redundant (Tuning::chain_lean).
    chain_lean: bool,
    // Later terms the chain checks at once after each wait (Tuning::chain_ahead).
    chain_ahead: usize,
    // The chain's tile order (Tuning::chain_tile; its inverted tiles are chain_tile² floats a
    // slot in `inverses`).
    chain_tile: usize,
    // The product kernel (full and small tiles) that then factors the diagonal block at its
    // output's corner (gemm.comp with FUSED_DIAG), where the tiles allow it.
    fused: Option<[(ComputeProgram, KernelConfig); 2]>,
    potrf_block: ComputeProgram,
    trsm_block: ComputeProgram,
    potrf_inv_block: ComputeProgram,
    // Order of the inverted diagonal blocks (potrf_inv_block's NB).
    diag: usize,
    // How the diagonal blocks are factored and inverted (potrf_inv_block and the fused kernels).
    factor: DiagonalFactor,
    // Outer block-column width of the blocked Cholesky (a multiple of diag).
    outer: usize,
    // The chained panels' width (TiledKernels::panel_outer).
    panel_outer: usize,
    // The order from which full storage is factored with RFP's split.
    split: usize,
    // The largest half CholeskySchedule::Split factors by one chained launch.
    split_chain: usize,
    // How the split solves L21 below a chained leaf, and the inverses of SOLVE_BLOCK its
    // block solve keeps (SOLVE_BLOCK² floats a block).
    split_solve: super::config::SplitSolve,
    solve_inverses: RefCell<Option<Buffer<f32>>>,
    // trtri_blocks.comp of orders below SOLVE_BLOCK, compiled on first use by the wide solve.
    trtri_orders: RefCell<HashMap<usize, ComputeProgram>>,
    // trsm_rows.comp per rows per work group and block order, compiled on first use.
    trsm_rows: RefCell<HashMap<(usize, usize), ComputeProgram>>,
    // The inverted diagonal blocks, diag x diag each, row-major, one slot per block column.
    inverses: RefCell<Option<Buffer<f32>>>,
    tile_lists: RefCell<TileLists>,
    // Kernel launches so far (glDispatchCompute calls), for counting what an operation costs.
    launches: Cell<u64>,
    // Of those, the packing launches of the products (texel and panel).
    packs: Cell<u64>,
    // The launches by kind, the kind the caller declared, and whether launches are skipped.
    by_kind: Cell<LaunchCounts>,
    kind: Cell<LaunchKind>,
    dry_run: Cell<bool>,
    status: StatusWord,
    no_scaling: Buffer<f32>,
    // The busy work run before timed stretches (nothing compiled on software renderers).
    preheat: Preheat,
}

impl TiledKernels {
    /// Compiles the kernels with `config` and the default block sizes (the context must have
    /// compute shaders).
    pub fn new(ctx: &Context, config: KernelConfig) -> Result<Self> {
        Self::tuned(ctx, config, super::TiledTuning::default())
    }

    /// Compiles the kernels with `config` and the Cholesky's block sizes and split order of
    /// `tuning` (the context must have compute shaders).
    pub fn tuned(
        ctx: &Context,
        config: KernelConfig,
        tuning: impl Into<super::TiledTuning>,
    ) -> Result<Self> {
        let tuning = tuning.into();
        let limits = ComputeLimits::query(ctx)?;
        let diag = tuning.diagonal_block_for(&config);
        let factor = tuning.diagonal_factor_for(&config);
        let schedule = tuning.cholesky_schedule_for(crate::gl::DeviceInfo::query(ctx)?.software);
        let chain_tile = tuning.chain_tile_for(&config);
        let chain_fold = tuning.chain_fold_for(chain_tile);
        let chain_poll = tuning.chain_poll();
        let chain_fold_early = tuning.chain_fold_early();
        let chain_lean = tuning.chain_lean();
        let chain_ahead = chain_ahead(tuning.chain_ahead, config.diagonal_group(chain_tile))?;
        let group_limits = super::tuning::GroupLimits::query(ctx)?;
        // The chained panels' width: whole tiles of both the blocked factor and the chain.
        let both_tiles = lcm(diag, chain_tile);
        super::tuning::check_kernel_config(&config, diag, &group_limits)?;
        if chain_tile != diag {
            check_chain_tile(chain_tile)?;
            super::tuning::check_kernel_config(&config, chain_tile, &group_limits)?;
        }
        let program = |kernel: &'static crate::gl::ComputeKernel| {
            ComputeProgram::new(ctx, kernel, "", &config.source(kernel.source))
        };
        Ok(Self {
            gemm: program(&table::GEMM)?,
            gemm_small: match config.small() {
                Some(small) => Some((
                    ComputeProgram::new(
                        ctx,
                        &table::GEMM,
                        "small tiles",
                        &small.source(table::GEMM.source),
                    )?,
                    small,
                )),
                None => None,
            },
            texel: match config.texel {
                true => Some(TexelProducts::new(ctx, config)?),
                false => None,
            },
            panel: PanelProducts::new(
                ctx,
                config,
                &limits,
                tuning.fused_diagonal().then_some(diag),
                factor,
                tuning.panel.unwrap_or_default(),
            )?,
            fused: match (config.small(), config.shared && !config.texel) {
                (Some(small), true)
                    if tuning.fused_diagonal()
                        && config.wg_x == 16
                        && config.wg_y == 16
                        && small.bm().min(small.bn()) >= diag =>
                {
                    let fused = |c: KernelConfig, variant: &str| -> Result<_> {
                        let k = &table::GEMM_FUSED;
                        let source = fused_source(k, factor);
                        let c = KernelConfig { nb: diag, ..c };
                        Ok((ComputeProgram::new(ctx, k, variant, &c.source(&source))?, c))
                    };
                    Some([fused(config, "")?, fused(small, "small tiles")?])
                }
                _ => None,
            },
            trtri: match config.shared && !config.texel {
                true => Some(ComputeProgram::new(
                    ctx,
                    &table::TRTRI_BLOCKS,
                    "",
                    &KernelConfig {
                        nb: SOLVE_BLOCK,
                        ..config
                    }
                    .source(table::TRTRI_BLOCKS.source),
                )?),
                false => None,
            },
            trsv_chain: match config.shared && !config.texel {
                true => Some(ComputeProgram::new(
                    ctx,
                    &table::TRSV_CHAIN,
                    "",
                    &KernelConfig {
                        nb: SOLVE_BLOCK,
                        ..config
                    }
                    .source(table::TRSV_CHAIN.source),
                )?),
                false => None,
            },
            potrf_chain: match config.shared
                && !config.texel
                && factor_chain_shared_bytes(chain_tile, factor) as u64 <= limits.max_shared_bytes
            {
                true => Some(ComputeProgram::new(
                    ctx,
                    &table::POTRF_CHAIN,
                    "",
                    &KernelConfig {
                        nb: chain_tile,
                        ..config
                    }
                    .source(&chain_source(
                        config.diagonal_group(chain_tile),
                        chain_tile,
                        factor,
                        (chain_fold, chain_fold_early),
                        (chain_poll, chain_lean, chain_ahead),
                    )),
                )?),
                false => None,
            },
            schedule,
            panel_outer: match (tuning.outer_block, schedule) {
                (None, CholeskySchedule::Auto) => super::config::PANELS_AUTO_OUTER
                    .max(tuning.outer_block_for(&config)),
                _ => tuning.outer_block_for(&config),
            }
            .div_ceil(both_tiles)
            .saturating_mul(both_tiles),
            chained_factors: Cell::new(0),
            chain_fold,
            chain_poll,
            chain_fold_early,
            chain_lean,
            chain_ahead,
            chain_tile,
            potrf_block: program(&table::POTRF_BLOCK)?,
            trsm_block: program(&table::TRSM_BLOCK)?,
            potrf_inv_block: ComputeProgram::new(
                ctx,
                &table::POTRF_INV_BLOCK,
                "",
                &KernelConfig { nb: diag, ..config }.source(&format!(
                    "{}{}{}{}",
                    table::SUBGROUPS_HEADER,
                    config.diagonal_group_defines(diag),
                    factor.function(),
                    table::POTRF_INV_BLOCK.source
                )),
            )?,
            diag,
            factor,
            outer: tuning.outer_block_for(&config),
            split: tuning.split_order(),
            split_chain: tuning.split_chain_order(),
            split_solve: tuning.split_solve(),
            solve_inverses: RefCell::new(None),
            trtri_orders: RefCell::new(HashMap::new()),
            trsm_rows: RefCell::new(HashMap::new()),
            inverses: RefCell::new(None),
            tile_lists: RefCell::new(HashMap::new()),
            launches: Cell::new(0),
            chained: Cell::new(0),
            packs: Cell::new(0),
            by_kind: Cell::new(LaunchCounts::default()),
            kind: Cell::new(LaunchKind::Other),
            dry_run: Cell::new(false),
            status: StatusWord::new(ctx)?,
            no_scaling: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &[1.0])?,
            preheat: Preheat::new(ctx)?,
            ctx: ctx.clone(),
            config,
            limits,
        })
    }

    /// The driver's binary ([`ComputeProgram::binary`]) of the chained Cholesky's kernel, where
    /// compiled: for checking on the device that the lanes factor's arrays stay in registers.
    pub fn chain_binary(&self) -> Option<Vec<u8>> {
        self.potrf_chain.as_ref()?.binary().map(|(_, bytes)| bytes)
    }

    /// The driver's binaries ([`ComputeProgram::binary`]) of the packed-panel product kernels
    /// (full-size tiles, then the quarter-size ones where compiled): for reading on the device
    /// what the compiler made of a variant.
    pub fn panel_binaries(&self) -> Vec<(String, Vec<u8>)> {
        let Some(panel) = &self.panel else {
            return Vec::new();
        };
        [Some(("gemm_panel", &panel.gemm)), panel.small.as_ref().map(|s| ("gemm_panel_small", s))]
            .into_iter()
            .flatten()
            .filter_map(|(name, (p, _))| p.binary().map(|(_, bytes)| (name.to_string(), bytes)))
            .collect()
    }

    /// The context the kernels run on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The tile sizes compiled in.
    pub fn config(&self) -> KernelConfig {
        self.config
    }

    /// The order from which full storage is factored with RFP's split.
    pub fn split_order(&self) -> usize {
        self.split
    }

    /// The largest half [`CholeskySchedule::Split`] factors by one chained launch.
    pub fn split_chain_order(&self) -> usize {
        self.split_chain
    }

    /// Later terms the chained Cholesky checks at once after each wait
    /// ([`TiledTuning::chain_ahead`](super::TiledTuning::chain_ahead)).
    pub fn chain_ahead(&self) -> usize {
        self.chain_ahead
    }

    /// The chained Cholesky's tile order ([`TiledTuning::chain_tile`](super::TiledTuning::chain_tile)).
    pub fn chain_tile(&self) -> usize {
        self.chain_tile
    }

    /// How the split Cholesky solves L21 below a chained leaf
    /// ([`TiledTuning::split_solve`](super::TiledTuning::split_solve)).
    pub fn split_solve(&self) -> super::config::SplitSolve {
        self.split_solve
    }

    /// Whether x ← x·L⁻ᵀ can run by [`super::trsm_wide`] with inverted blocks of `nb` (32,
    /// 64 or [`SOLVE_BLOCK`]): diagonal blocks inverted in one launch, products in place with
    /// them (the product's full tiles span a whole block).
    pub fn solves_by_wide_blocks(&self, nb: usize) -> bool {
        self.trtri.is_some() && [32, 64, SOLVE_BLOCK].contains(&nb) && self.config.bn() >= nb
    }

    /// The buffer of inverted blocks of order `nb` for [`super::trsm_wide`], at least
    /// `blocks` of them (kept between solves; a larger one replaces it).
    pub fn solve_inverses(
        &self,
        blocks: usize,
        nb: usize,
    ) -> Result<std::cell::Ref<'_, Buffer<f32>>> {
        let len = blocks.max(1) * nb * nb;
        {
            let mut inv = self.solve_inverses.borrow_mut();
            if inv.as_ref().is_none_or(|b| b.len() < len) {
                *inv = Some(Buffer::uninitialized(
                    &self.ctx,
                    BufferTarget::Storage,
                    BufferUsage::Dynamic,
                    len,
                )?);
            }
        }
        Ok(std::cell::Ref::map(self.solve_inverses.borrow(), |b| {
            b.as_ref().expect("just made")
        }))
    }

    /// Every diagonal block of order `nb` of the lower-triangular `l` inverted into `inv`'s
    /// slots from 0 ([`TiledKernels::invert_blocks`]' layout with blocks of `nb`), in one
    /// launch; orders below [`SOLVE_BLOCK`] compiled on first use.
    pub fn invert_blocks_of(&self, l: Operand<'_>, nb: usize, inv: &Buffer<f32>) -> Result<()> {
        if !self.solves_by_wide_blocks(nb) {
            return Err(Error::shape(format!(
                "these kernels cannot invert diagonal blocks of order {nb}"
            )));
        }
        if inv.len() < l.view.cols.div_ceil(nb) * nb * nb {
            return Err(Error::shape("too few slots for the inverted diagonal blocks"));
        }
        if nb == SOLVE_BLOCK {
            return self.invert_blocks(l, 0, inv);
        }
        let mut programs = self.trtri_orders.borrow_mut();
        let p = match programs.entry(nb) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(ComputeProgram::new(
                &self.ctx,
                &table::TRTRI_BLOCKS,
                &format!("order {nb}"),
                &KernelConfig { nb, ..self.config }.source(table::TRTRI_BLOCKS.source),
            )?),
        };
        self.dispatch_trtri(p, nb, l, 0, inv, false)
    }

    /// Whether [`TiledKernels::solve_rows`] runs here with `rows` rows per work group (a
    /// multiple of 4 from 4 to 64) and diagonal blocks of `block` (32 or 64, inverted by
    /// trtri_blocks.comp), the kernel's shared memory within the device's.
    pub fn solves_by_rows(&self, rows: usize, block: usize) -> bool {
        // The tile of L (padded) and the group's rows of a block.
        let shared = 4 * (block * (block + 1) + rows * block) as u64;
        [32, 64].contains(&block)
            && self.solves_by_wide_blocks(block)
            && rows.is_multiple_of(4)
            && (4..=64).contains(&rows)
            && shared <= self.limits.max_shared_bytes
    }

    /// x ← x·L⁻ᵀ for the lower triangle of the square `l` (its entries above the diagonal
    /// not read), `rows` rows of x per work group through all of l's columns in one launch
    /// (glsl/tiled/trsm_rows.comp), l's diagonal blocks of order `block` inverted in `inv`
    /// from slot `slot0` on ([`TiledKernels::invert_blocks_of`]); rows past the device's
    /// work-group count in several launches. Needs [`TiledKernels::solves_by_rows`].
    pub fn solve_rows(
        &self,
        x: Operand<'_>,
        l: Operand<'_>,
        (inv, slot0): (&Buffer<f32>, usize),
        (rows, block): (usize, usize),
    ) -> Result<()> {
        let (xv, lv) = (x.view, l.view);
        super::trsm_wide::check_solve_shapes("the row solve", xv, lv)?;
        if !self.solves_by_rows(rows, block) {
            return Err(Error::shape(format!(
                "these kernels cannot solve by rows of {rows} with blocks of {block}"
            )));
        }
        if xv.rows == 0 || xv.cols == 0 {
            return Ok(());
        }
        let mut programs = self.trsm_rows.borrow_mut();
        let p = match programs.entry((rows, block)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(ComputeProgram::new(
                &self.ctx,
                &table::TRSM_ROWS,
                &format!("{rows} rows, blocks of {block}"),
                &format!(
                    "#version 430\n#define D {block}\n#define R {rows}\n#define RG 4\n{}",
                    table::TRSM_ROWS.source
                ),
            )?),
        };
        x.buffer.bind_base(0);
        l.buffer.bind_base(1);
        inv.bind_base(2);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("w", u(xv.cols)),
            ("x_rs", u(xv.rs)),
            ("x_cs", u(xv.cs)),
            ("l_off", u(lv.offset)),
            ("l_rs", u(lv.rs)),
            ("l_cs", u(lv.cs)),
            ("inv_off", u(slot0 * block * block)),
        ])?;
        // Rows independent of each other: at most the device's work groups per launch.
        let per_launch = rows * self.limits.max_groups_x.max(1) as usize;
        for r0 in (0..xv.rows).step_by(per_launch) {
            let n = (xv.rows - r0).min(per_launch);
            p.set_all(&[("rows", u(n)), ("x_off", u(xv.index(r0, 0)))])?;
            self.run(p, [n.div_ceil(rows) as u32, 1, 1])?;
        }
        Ok(())
    }

    /// x ← x·L⁻ᵀ in place, L⁻¹ the inverted block of order `nb` in slot `slot` of `inv`
    /// ([`TiledKernels::invert_blocks_of`]; x has at most `nb` columns). Needs
    /// [`TiledKernels::solves_by_wide_blocks`].
    pub fn multiply_by_solve_inverse(
        &self,
        x: Operand<'_>,
        inv: &Buffer<f32>,
        slot: usize,
        nb: usize,
    ) -> Result<()> {
        let b = x.view.cols;
        if !self.solves_by_wide_blocks(nb) || b > nb {
            return Err(Error::shape(
                "these kernels cannot multiply by inverted blocks of the solve's order",
            ));
        }
        let linv = View {
            offset: slot * nb * nb,
            rs: nb,
            cs: 1,
            rows: b,
            cols: b,
        };
        // In place as in multiply_by_inverse: each work group owns whole rows of x.
        self.gemm_tiles(Product::new(x, x, Operand::new(inv, linv)), false, true)
    }

    /// The device's compute limits.
    pub fn limits(&self) -> ComputeLimits {
        self.limits
    }

    /// The product `p` (c ← α·a·diag(d)·bᵀ + β·c over `p.mask`'s entries). Where it
    /// replaces c, c is not read (it may hold anything, NaN included).
    pub fn gemm(&self, p: Product<'_, Operand<'_>>) -> Result<()> {
        self.gemm_tiles(p, true, false)
    }

    /// [`TiledKernels::gemm`], with the small-tile kernel allowed for small products or not,
    /// `in_place` when c and a are the same entries (one tile column).
    fn gemm_tiles(
        &self,
        p: Product<'_, Operand<'_>>,
        allow_small: bool,
        in_place: bool,
    ) -> Result<()> {
        let (c, a, b) = (p.c, p.a, p.b);
        let (cv, av, bv) = (c.view, a.view, b.view);
        debug_assert!(av.rows == cv.rows && bv.rows == cv.cols && av.cols == bv.cols);
        if cv.rows == 0 || cv.cols == 0 {
            return Ok(());
        }
        // The depth in launches of at most DEPTH_PER_LAUNCH (the kernels loop over it), each
        // after the first adding onto the C the one before wrote.
        let depth = av.cols;
        if depth <= DEPTH_PER_LAUNCH || in_place {
            return self.gemm_launch(p, 0, allow_small, in_place);
        }
        for k0 in (0..depth).step_by(DEPTH_PER_LAUNCH) {
            let w = (depth - k0).min(DEPTH_PER_LAUNCH);
            fn cut(x: Operand<'_>, k0: usize, w: usize) -> Operand<'_> {
                let v = x.view;
                x.with(View {
                    offset: v.offset + k0 * v.cs,
                    cols: w,
                    ..v
                })
            }
            let update = if k0 == 0 { p.update } else { p.update.onto_c() };
            let slice = p.with(c, cut(a, k0, w), cut(b, k0, w)).update(update);
            self.gemm_launch(slice, k0, allow_small, false)?;
        }
        Ok(())
    }

    /// One launch of [`TiledKernels::gemm_tiles`] (d read from entry `d_off` on, a multiple
    /// of 4), its depth within [`DEPTH_PER_LAUNCH`] or in place.
    fn gemm_launch(
        &self,
        product: Product<'_, Operand<'_>>,
        d_off: usize,
        allow_small: bool,
        in_place: bool,
    ) -> Result<()> {
        let Product { c, a, b, d, .. } = product;
        let (alpha, beta) = product.update.alpha_beta();
        let shift = product.mask.shift();
        let (cv, av, bv) = (c.view, a.view, b.view);
        let full_tiles = cv.rows.div_ceil(self.config.bm()) * cv.cols.div_ceil(self.config.bn());
        if let Some(panel) = self.panel.as_ref().filter(|_| !in_place) {
            // Blocks of at least two tiles each way, so that each runs on the panels too, and
            // only where the depth is at least a block's side.
            let tile = panel.gemm.1.bm().max(panel.gemm.1.bn());
            let cut = panel.variant.cut.max(2 * tile);
            if panel.variant.cut > 0
                && (cv.rows >= 2 * cut || cv.cols >= 2 * cut)
                && av.cols >= self.panel_min_depth().max(cut)
            {
                return self.gemm_cut(product, d_off, allow_small, cut);
            }
            let (p, config) = match &panel.small {
                Some(small) if allow_small && full_tiles < SMALL_PRODUCT_TILES => small,
                _ => &panel.gemm,
            };
            // Packing pays where each panel is read by several tiles: C more than one tile
            // each way (not the few right-hand sides of a solve, whose L blocks are read once).
            if av.cols >= self.panel_min_depth()
                && cv.rows > config.bm()
                && cv.cols > config.bn()
                && self.gemm_panel(panel, (p, *config), product, d_off, None)?
            {
                return Ok(());
            }
        }
        let scaled = d.is_some();
        let d = d.unwrap_or(&self.no_scaling);
        // The texel kernel where the buffers (and packed operands) fit a buffer texture.
        let texel = self
            .texel
            .as_ref()
            .filter(|t| {
                [a.buffer, b.buffer, d]
                    .iter()
                    .all(|x| x.len() <= t.max_texels)
            })
            .map(|t| match TexelReads::plan(av, bv, scaled) {
                TexelReads::Packed { ld, .. } if av.rows.max(bv.rows) * ld > t.max_texels => {
                    (t, TexelReads::Single)
                }
                reads => (t, reads),
            });
        if in_place && texel.is_none() && !self.config.shared {
            // Only shared memory (a barrier between reads and writes) or the texel kernel's
            // in-place variant order the reads of a row before its writes.
            return Err(Error::shape(
                "an in-place product needs a buffer texture this large or shared memory",
            ));
        }
        // Packed operands: copied first, then read in fours from their copies. B made of A's
        // first rows (the panels of a SYRK) is read from A's copy.
        let b_in_a = std::ptr::eq(a.buffer, b.buffer)
            && (bv.offset, bv.rs, bv.cs) == (av.offset, av.rs, av.cs)
            && bv.rows <= av.rows;
        if let Some((t, TexelReads::Packed { a: pa, b: pb, ld })) = texel {
            let pack = |slot, x| -> Result<()> {
                t.pack(&self.ctx, slot, x, ld, self.dry_run.get())?;
                self.launched_pack();
                Ok(())
            };
            if pa {
                pack(0, a)?;
            }
            if pb && !(pa && b_in_a) {
                pack(1, b)?;
            }
        }
        let packed = texel.map(|(t, _)| t.packed.each_ref().map(RefCell::borrow));
        let (a, b) = match (texel, &packed) {
            (Some((_, TexelReads::Packed { a: pa, b: pb, ld })), Some([pa_buf, pb_buf])) => {
                let b_buf = if pa && b_in_a { pa_buf } else { pb_buf };
                (
                    packed_operand(a, pa, pa_buf.as_ref(), ld)?,
                    packed_operand(b, pb, b_buf.as_ref(), ld)?,
                )
            }
            _ => (a, b),
        };
        let (av, bv) = (a.view, b.view);
        let (p, config) = match (&self.gemm_small, texel) {
            (_, Some((t, reads))) => (
                &t.programs[usize::from(in_place)][usize::from(reads != TexelReads::Single)],
                self.config,
            ),
            (Some((small, config)), None) if allow_small && full_tiles < SMALL_PRODUCT_TILES => {
                (small, *config)
            }
            _ => (&self.gemm, self.config),
        };
        c.buffer.bind_base(0);
        a.buffer.bind_base(1);
        b.buffer.bind_base(2);
        d.bind_base(3);
        if let Some((t, reads)) = texel {
            let width = if reads == TexelReads::Single {
                TexelWidth::One
            } else {
                TexelWidth::Four
            };
            for (unit, (texture, buffer)) in
                t.textures.iter().zip([a.buffer, b.buffer, d]).enumerate()
            {
                texture.attach(buffer, width, unit as u32);
            }
            t.textures[3].attach(c.buffer, TexelWidth::One, 3);
        }
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&product_views(cv, av, bv))?;
        p.set_all(&[
            ("alpha", Uniform::F32(alpha)),
            ("beta", Uniform::F32(beta)),
            (
                "use_d",
                Uniform::I32(i32::from(!std::ptr::eq(d, &self.no_scaling))),
            ),
            ("lower", Uniform::I32(i32::from(shift.is_some()))),
            ("shift", Uniform::I32(shift.unwrap_or(0) as i32)),
            ("d_off", u(d_off)),
        ])?;
        self.dispatch_tiles(p, config, cv, shift)
    }

    /// Launches `p` over the output tiles of `cv` (of `config`'s size) that hold an entry with
    /// j ≤ i + shift (all where `None`), the tile list bound at binding 4; several dispatches
    /// where the tiles outnumber the device's work-group count.
    fn dispatch_tiles(
        &self,
        p: &ComputeProgram,
        config: KernelConfig,
        cv: View,
        shift: Option<isize>,
    ) -> Result<()> {
        self.dispatch_tiles_grouped(p, config, cv, shift, 1)
    }

    /// [`TiledKernels::dispatch_tiles`] with the tiles in bands of `group` tile rows
    /// ([`grouped`]).
    fn dispatch_tiles_grouped(
        &self,
        p: &ComputeProgram,
        config: KernelConfig,
        cv: View,
        shift: Option<isize>,
        group: usize,
    ) -> Result<()> {
        let key = (cv.rows, cv.cols, shift, config.bm(), config.bn(), group);
        let mut lists = self.tile_lists.borrow_mut();
        let tiles = match lists.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let tiles = grouped(
                    output_tiles_below(cv.rows, cv.cols, config.bm(), config.bn(), shift),
                    group,
                );
                e.insert(Buffer::new(
                    &self.ctx,
                    BufferTarget::Storage,
                    BufferUsage::Static,
                    &tiles,
                )?)
            }
        };
        tiles.bind_base(4);
        let max = self.limits.max_groups_x.max(1) as usize;
        let mut base = 0;
        while base < tiles.len() {
            let count = (tiles.len() - base).min(max);
            p.set("tile_base", Uniform::U32(base as u32))?;
            self.run(p, [count as u32, 1, 1])?;
            base += count;
        }
        Ok(())
    }

    /// [`TiledKernels::gemm_launch`] over blocks of C of `cut` rows and columns (those at
    /// the ends up to twice that: [`cut_blocks`]), one launch each (blocks with nothing under
    /// the mask skipped), in row-major block order.
    fn gemm_cut(
        &self,
        product: Product<'_, Operand<'_>>,
        d_off: usize,
        allow_small: bool,
        cut: usize,
    ) -> Result<()> {
        let (c, a, b) = (product.c, product.a, product.b);
        let (cv, av, bv) = (c.view, a.view, b.view);
        let shift = product.mask.shift();
        for (r0, h) in cut_blocks(cv.rows, cut) {
            for (c0, w) in cut_blocks(cv.cols, cut) {
                let local = match shift.map(|s| s + r0 as isize - c0 as isize) {
                    Some(s) if s + h as isize - 1 < 0 => continue,
                    Some(s) if s >= w as isize - 1 => None,
                    s => s,
                };
                let block = product
                    .with(
                        c.with(cv.sub(r0, c0, h, w)),
                        a.with(av.sub(r0, 0, h, av.cols)),
                        b.with(bv.sub(c0, 0, w, bv.cols)),
                    )
                    .mask(super::product::Mask::from_shift(local));
                self.gemm_launch(block, d_off, allow_small, false)?;
            }
        }
        Ok(())
    }

    /// The product on packed panels: A into panel 0, B·diag(d) into panel 1 (or B read from
    /// A's panel where it is A's first rows and unscaled: the SYRKs), then one launch over the
    /// lower tiles. `Ok(false)` (nothing launched) where a panel would not fit one storage
    /// buffer or the packing launch the device's work-group counts.
    fn gemm_panel(
        &self,
        panel: &PanelProducts,
        (p, config): (&ComputeProgram, KernelConfig),
        product: Product<'_, Operand<'_>>,
        d_off: usize,
        diag: Option<(usize, usize, usize)>,
    ) -> Result<bool> {
        let Product { c, a, b, d, .. } = product;
        let (alpha, beta) = product.update.alpha_beta();
        let shift = product.mask.shift();
        let (cv, av, bv) = (c.view, a.view, b.view);
        let tile = config.bm().max(config.bn()).max(32);
        let kp = av.cols.next_multiple_of(config.bk);
        let (ra, rb) = (panel_rows(cv.rows, tile), panel_rows(cv.cols, tile));
        // Floats per block of `tile` rows: kp k-rows, and one more where padded.
        let block = (kp + usize::from(panel.variant.pad)) * tile;
        let same_source = std::ptr::eq(a.buffer, b.buffer) && (bv.rs, bv.cs) == (av.rs, av.cs);
        let same_rows = same_source && bv.offset == av.offset && bv.rows <= av.rows;
        // A·√d packed for both operands where the variant asks and d is known ≥ 0: once where
        // B is A's first rows, else each with √d (the same bits as one launch of the whole).
        let root_d = same_source && d.is_some() && panel.variant.root_d && product.d_nonnegative;
        let b_in_a = same_rows && (d.is_none() || root_d);
        let max_len =
            (super::storage::max_buffer_bytes(self.limits.max_storage_block_bytes) / 4) as usize;
        let max_groups = self.limits.max_groups_x as usize;
        if ra.max(rb) / tile * block > max_len
            || ra.max(rb) / 32 > max_groups
            || kp / 32 >= max_groups
        {
            return Ok(false);
        }
        let a_scale = if root_d { (d, d_off, true) } else { (None, 0, false) };
        self.pack_panel(panel, 0, a, a_scale, (ra, tile), (kp, block))?;
        if !b_in_a {
            self.pack_panel(panel, 1, b, (d, d_off, root_d), (rb, tile), (kp, block))?;
        }
        let panels = panel.panels.each_ref().map(RefCell::borrow);
        let (Some(pa), pb) = (panels[0].as_ref(), panels[1].as_ref()) else {
            return Err(Error::shape("a packed panel was never written"));
        };
        let pb = match (b_in_a, pb) {
            (true, _) => pa,
            (false, Some(pb)) => pb,
            (false, None) => return Err(Error::shape("a packed panel was never written")),
        };
        c.buffer.bind_base(0);
        pa.bind_base(1);
        pb.bind_base(2);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("rows", u(cv.rows)),
            ("cols", u(cv.cols)),
            ("slices", u(kp / config.bk)),
            ("block4", u(block / 4)),
            ("pt", u(tile)),
            ("c_off", u(cv.offset)),
            ("c_rs", u(cv.rs)),
            ("c_cs", u(cv.cs)),
            ("alpha", Uniform::F32(alpha)),
            ("beta", Uniform::F32(beta)),
            ("lower", Uniform::I32(i32::from(shift.is_some()))),
            ("shift", Uniform::I32(shift.unwrap_or(0) as i32)),
        ])?;
        // The fused variant: the diagonal block (order, global column, slot) at C's corner
        // factored after the update, its inverse into its slot.
        let inverses = self.inverses.borrow();
        if let Some((n, column0, slot)) = diag {
            let inv = inverses
                .as_ref()
                .filter(|inv| inv.len() >= (slot + 1) * self.diag * self.diag)
                .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
            self.status.bind_base(5);
            inv.bind_base(6);
            p.set_all(&[
                ("diag_n", u(n)),
                ("diag_column0", u(column0)),
                ("diag_inv_off", u(slot * self.diag * self.diag)),
            ])?;
        }
        self.dispatch_tiles_grouped(p, config, cv, shift, panel.variant.group)?;
        Ok(true)
    }

    /// Packs `x` (scaled by `d` along its depth where given, from entry `d_off` on, by √d
    /// where `root`) into panel `slot`: `rows` rows (x's padded to whole blocks) in k-major
    /// blocks of `tile` rows, `kp` k each, `block` floats apart, zeros past its entries. One
    /// launch.
    fn pack_panel(
        &self,
        panel: &PanelProducts,
        slot: usize,
        x: Operand<'_>,
        (d, d_off, root): (Option<&Buffer<f32>>, usize, bool),
        (rows, tile): (usize, usize),
        (kp, block): (usize, usize),
    ) -> Result<()> {
        let v = x.view;
        let len = rows / tile * block;
        let mut buffer = panel.panels[slot].borrow_mut();
        if buffer.as_ref().is_none_or(|b| b.len() < len) {
            *buffer = None;
            *buffer = Some(Buffer::uninitialized(
                &self.ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len,
            )?);
        }
        if let Some(dst) = buffer.as_ref() {
            dst.bind_base(0);
        }
        x.buffer.bind_base(1);
        d.unwrap_or(&self.no_scaling).bind_base(3);
        let u = |v: usize| Uniform::U32(v as u32);
        panel.pack.set_all(&[
            ("rows", u(v.rows)),
            ("depth", u(v.cols)),
            ("tile", u(tile)),
            ("kp", u(kp)),
            ("block", u(block)),
            ("x_off", u(v.offset)),
            ("x_rs", u(v.rs)),
            ("x_cs", u(v.cs)),
            (
                "use_d",
                Uniform::I32(match (d.is_some(), root) {
                    (false, _) => 0,
                    (true, false) => 1,
                    (true, true) => 2,
                }),
            ),
            ("d_off", Uniform::U32(d_off as u32)),
        ])?;
        if !self.dry_run.get() {
            panel
                .pack
                .dispatch([(rows / 32) as u32, kp.div_ceil(32) as u32, 1])?;
        }
        self.launched_pack();
        Ok(())
    }

    /// Factors the diagonal block `c` (order ≤ nb) in place; `column0` is its first column in
    /// the whole matrix, for the status word.
    pub fn potrf_block(&self, c: Operand<'_>, column0: usize) -> Result<()> {
        let v = c.view;
        debug_assert!(v.rows == v.cols && v.rows <= self.config.nb);
        c.buffer.bind_base(0);
        self.status.bind_base(5);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = &self.potrf_block;
        p.set_all(&[
            ("n", u(v.rows)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("column0", u(column0)),
        ])?;
        self.run(p, [1, 1, 1])?;
        Ok(())
    }

    /// x ← x·l⁻ᵀ (`backward` false) or x ← x·l⁻¹ (true) for the lower-triangular diagonal
    /// block l (order ≤ nb), nb rows of x per work group.
    pub fn trsm_block(&self, x: Operand<'_>, l: Operand<'_>, backward: bool) -> Result<()> {
        let (xv, lv) = (x.view, l.view);
        debug_assert!(lv.rows == lv.cols && lv.rows <= self.config.nb && xv.cols == lv.rows);
        if xv.rows == 0 {
            return Ok(());
        }
        x.buffer.bind_base(0);
        l.buffer.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = &self.trsm_block;
        p.set_all(&[
            ("rows", u(xv.rows)),
            ("n", u(lv.rows)),
            ("x_off", u(xv.offset)),
            ("x_rs", u(xv.rs)),
            ("x_cs", u(xv.cs)),
            ("l_off", u(lv.offset)),
            ("l_rs", u(lv.rs)),
            ("l_cs", u(lv.cs)),
            ("backward", Uniform::I32(i32::from(backward))),
        ])?;
        let groups = xv.rows.div_ceil(self.config.nb);
        let max = self.limits.max_groups_x.max(1) as usize;
        // One dispatch per at most max groups of rows.
        let mut first = 0;
        while first < groups {
            let count = (groups - first).min(max);
            let rows = (xv.rows - first * self.config.nb).min(count * self.config.nb);
            p.set_all(&[
                ("rows", u(rows)),
                ("x_off", u(xv.offset + first * self.config.nb * xv.rs)),
            ])?;
            self.run(p, [count as u32, 1, 1])?;
            first += count;
        }
        Ok(())
    }

    /// c ← c − a·bᵀ on the entries with j ≤ i (the blocked Cholesky's inner update of an
    /// outer block column), and in the same launch the diagonal block of order `n` at c's
    /// corner factored and its inverse written to `slot`, as [`TiledKernels::potrf_inv_block`]
    /// would (`column0`: its first global column). `Ok(false)`, nothing launched, where these
    /// kernels cannot (buffer-texture or register-only tiles, a product they would pack, a
    /// block larger than a tile): then run the two apart.
    pub fn update_and_factor(
        &self,
        c: Operand<'_>,
        a: Operand<'_>,
        b: Operand<'_>,
        (n, column0, slot): (usize, usize, usize),
    ) -> Result<bool> {
        let (cv, av, bv) = (c.view, a.view, b.view);
        debug_assert!(av.rows == cv.rows && bv.rows == cv.cols && av.cols == bv.cols);
        let Some(fused) = &self.fused else {
            return Ok(false);
        };
        let full_tiles = cv.rows.div_ceil(self.config.bm()) * cv.cols.div_ceil(self.config.bn());
        let (p, config) = &fused[usize::from(full_tiles < SMALL_PRODUCT_TILES)];
        if av.cols >= self.panel_min_depth()
            || n == 0
            || n > self.diag
            || n > config.bm().min(config.bn())
            || n > cv.rows.min(cv.cols)
        {
            return Ok(false);
        }
        self.reserve_inverses(slot + 1)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        c.buffer.bind_base(0);
        a.buffer.bind_base(1);
        b.buffer.bind_base(2);
        self.no_scaling.bind_base(3);
        self.status.bind_base(5);
        inv.bind_base(6);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&product_views(cv, av, bv))?;
        p.set_all(&[
            ("alpha", Uniform::F32(-1.0)),
            ("beta", Uniform::F32(1.0)),
            ("use_d", Uniform::I32(0)),
            ("lower", Uniform::I32(1)),
            ("shift", Uniform::I32(0)),
            ("diag_n", u(n)),
            ("diag_column0", u(column0)),
            ("diag_inv_off", u(slot * self.diag * self.diag)),
        ])?;
        self.dispatch_tiles(p, *config, cv, Some(0))?;
        Ok(true)
    }

    /// c ← c − a·aᵀ on the lower tiles (the blocked Cholesky's trailing update, `b` the first
    /// rows of `a`) on packed panels, and in the same launch the diagonal block of order `n` at
    /// c's corner factored and its inverse written to `slot` (`column0`: its first global
    /// column). `Ok(false)`, nothing launched, where these kernels cannot (no fused panel
    /// kernel, a block larger than its tiles, a product too shallow or too small to pack, a
    /// panel past a buffer): then run the two apart.
    pub fn trailing_and_factor(
        &self,
        c: Operand<'_>,
        a: Operand<'_>,
        b: Operand<'_>,
        (n, column0, slot): (usize, usize, usize),
    ) -> Result<bool> {
        let (cv, av) = (c.view, a.view);
        let Some(panel) = &self.panel else {
            return Ok(false);
        };
        let Some((diag, fused)) = &panel.fused else {
            return Ok(false);
        };
        let full_tiles = cv.rows.div_ceil(self.config.bm()) * cv.cols.div_ceil(self.config.bn());
        let choice = match (&fused[1], full_tiles < SMALL_PRODUCT_TILES) {
            (Some(small), true) => Some(small),
            _ => fused[0].as_ref(),
        };
        let Some((p, config)) = choice else {
            return Ok(false);
        };
        if n == 0
            || n > *diag
            || n > config.bm().min(config.bn())
            || n > cv.rows.min(cv.cols)
            || av.cols < self.panel_min_depth()
            || cv.rows <= config.bm()
            || cv.cols <= config.bn()
        {
            return Ok(false);
        }
        self.reserve_inverses(slot + 1)?;
        let product = Product::new(c, a, b).subtract().lower();
        self.gemm_panel(panel, (p, *config), product, 0, Some((n, column0, slot)))
    }

    /// Whether the triangular solves can run as products with inverted diagonal blocks
    /// ([`TiledKernels::invert_blocks`]): kernels with shared-memory tiles.
    pub fn solves_by_inverses(&self) -> bool {
        self.trtri.is_some()
    }

    /// Inverts the diagonal blocks of order [`SOLVE_BLOCK`] of the lower-triangular `l` (its
    /// leading square; the last block may be smaller) into `inv`, block g at slot `slot0 + g`
    /// (SOLVE_BLOCK² values each, row-major, zeros above the diagonal). One launch.
    pub fn invert_blocks(&self, l: Operand<'_>, slot0: usize, inv: &Buffer<f32>) -> Result<()> {
        let blocks = l.view.cols.div_ceil(SOLVE_BLOCK);
        if inv.len() < (slot0 + blocks) * SOLVE_BLOCK * SOLVE_BLOCK {
            return Err(Error::shape(
                "too few slots for the inverted diagonal blocks",
            ));
        }
        self.launch_trtri(l, slot0, inv, false)
    }

    /// Every diagonal block of [`SOLVE_BLOCK`] of the lower-triangular `l` replaced by its
    /// inverse in place (the entries above the blocks' diagonals untouched), in one launch.
    pub fn invert_blocks_in_place(&self, l: Operand<'_>) -> Result<()> {
        self.launch_trtri(l, 0, l.buffer, true)
    }

    /// One launch of `trtri_blocks.comp` over `l`'s diagonal blocks, into `inv`'s slots from
    /// `slot0` or (`in_place`, `inv` being `l`'s buffer) over the blocks themselves.
    fn launch_trtri(
        &self,
        l: Operand<'_>,
        slot0: usize,
        inv: &Buffer<f32>,
        in_place: bool,
    ) -> Result<()> {
        let p = self
            .trtri
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels do not invert diagonal blocks"))?;
        self.dispatch_trtri(p, SOLVE_BLOCK, l, slot0, inv, in_place)
    }

    /// One launch of the trtri program `p` compiled for blocks of `nb`.
    fn dispatch_trtri(
        &self,
        p: &ComputeProgram,
        nb: usize,
        l: Operand<'_>,
        slot0: usize,
        inv: &Buffer<f32>,
        in_place: bool,
    ) -> Result<()> {
        let blocks = l.view.cols.div_ceil(nb);
        l.buffer.bind_base(0);
        inv.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("n", u(l.view.cols)),
            ("l_off", u(l.view.offset)),
            ("l_rs", u(l.view.rs)),
            ("l_cs", u(l.view.cs)),
            ("slot0", u(slot0)),
            ("in_place", Uniform::I32(i32::from(in_place))),
        ])?;
        self.run(p, [blocks as u32, 1, 1])?;
        Ok(())
    }

    /// One triangular solve of L·y = b (`transposed` false) or Lᵀ·x = y over `x` (one
    /// right-hand side, overwritten) in one launch, L given by up to three views (see
    /// glsl/tiled/trsv_chain.comp) and its diagonal blocks inverted in `inv`; `sync` holds
    /// 2 + blocks zeroed words. Whether the chain gave up is in `sync[1]`.
    pub(crate) fn trsv_chain(&self, chain: &ChainSolve<'_>, transposed: bool) -> Result<()> {
        let p = self
            .trsv_chain
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels have no chained solve"))?;
        chain.l.bind_base(0);
        chain.inv.bind_base(1);
        chain.x.bind_base(2);
        chain.sync.bind_base(3);
        let u = |v: usize| Uniform::U32(v as u32);
        let [v0, v1, v2] = chain.views;
        p.set_all(&[
            ("m", u(chain.m)),
            ("n1", u(chain.n1)),
            ("blocks1", u(chain.blocks1)),
            ("blocks", u(chain.blocks)),
            ("transposed", u(usize::from(transposed))),
            ("spin_limit", u(chain.spin_limit)),
            ("off0", u(v0.offset)),
            ("rs0", u(v0.rs)),
            ("cs0", u(v0.cs)),
            ("off1", u(v1.offset)),
            ("rs1", u(v1.rs)),
            ("cs1", u(v1.cs)),
            ("off2", u(v2.offset)),
            ("rs2", u(v2.rs)),
            ("cs2", u(v2.cs)),
        ])?;
        self.run(p, [chain.blocks as u32, 1, 1])?;
        Ok(())
    }

    /// The Cholesky of `chain.c` (full storage, order m) in place as one chained launch
    /// (glsl/tiled/potrf_chain.comp), tiles of [`TiledKernels::chain_tile`], the inverses of
    /// the diagonal tiles in the inverse slots' buffer, chain_tile² floats each (the blocked
    /// Cholesky's slots where the orders agree); whether it gave up is in `chain.sync[1]`.
    pub(crate) fn potrf_chain(&self, chain: &ChainFactor<'_>) -> Result<()> {
        let p = self
            .potrf_chain
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels have no chained Cholesky"))?;
        let v = chain.c.view;
        let t = self.chain_tile;
        let (tiles, col_tiles) = (v.rows.div_ceil(t), v.cols.div_ceil(t));
        self.reserve_inverse_floats(col_tiles * t * t)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        chain.c.buffer.bind_base(0);
        inv.bind_base(1);
        inv.bind_base(7);
        chain.sync.bind_base(3);
        chain.scratch.bind_base(5);
        self.status.bind_base(6);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("m", u(v.rows)),
            ("n", u(v.cols)),
            ("column0", u(chain.column0)),
            ("tiles", u(tiles)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("spin_limit", u(chain.spin_limit)),
        ])?;
        let groups = col_tiles * tiles - col_tiles * col_tiles.saturating_sub(1) / 2;
        self.run(p, [groups as u32, 1, 1])?;
        Ok(())
    }

    /// How the Cholesky of order `m` (full storage, one buffer) is chained
    /// ([`CholeskySchedule::Chain`], [`CholeskySchedule::Panels`] or
    /// [`CholeskySchedule::Split`]), or `None` (blocked): the schedule chooses it, the kernels
    /// have the chain and one launch can take its tiles (the split's, of its largest leaf: a
    /// device that launches 65,535 work groups at most chains the leaves of 4096 on tiles of
    /// 32, 8,256 groups, at any order).
    pub fn chains_factor(&self, m: usize) -> Option<CholeskySchedule> {
        let chained = self.schedule.resolve(m);
        let largest = match chained {
            CholeskySchedule::Split => m.min(self.split_chain.max(self.chain_tile)),
            _ => m,
        };
        let tiles = largest.div_ceil(self.chain_tile.max(1));
        (self.potrf_chain.is_some()
            && chained != CholeskySchedule::Blocked
            && tiles * (tiles + 1) / 2 <= self.limits.max_groups_x as usize)
            .then_some(chained)
    }

    /// The Cholesky's schedule ([`CholeskySchedule`]).
    pub fn cholesky_schedule(&self) -> CholeskySchedule {
        self.schedule
    }

    /// Whether the chained Cholesky folds each sub-diagonal tile's last product into the next
    /// diagonal tile's work group ([`TiledTuning::chain_fold`](super::TiledTuning::chain_fold)).
    pub fn chain_fold(&self) -> bool {
        self.chain_fold
    }

    /// How the chained Cholesky polls its ready flags
    /// ([`TiledTuning::chain_poll`](super::TiledTuning::chain_poll)).
    pub fn chain_poll(&self) -> super::ChainPoll {
        self.chain_poll
    }

    /// Whether the folded chain publishes each folded tile before the diagonal group's update
    /// from it ([`TiledTuning::chain_fold_early`](super::TiledTuning::chain_fold_early)).
    pub fn chain_fold_early(&self) -> bool {
        self.chain_fold_early
    }

    /// Whether the chained Cholesky drops the barriers the next wait makes redundant
    /// ([`TiledTuning::chain_lean`](super::TiledTuning::chain_lean)).
    pub fn chain_lean(&self) -> bool {
        self.chain_lean
    }

    /// Factorizations that ran as one chained launch ([`TiledKernels::potrf_chain`]) so far.
    pub fn chained_factors(&self) -> u64 {
        self.chained_factors.get()
    }

    pub(crate) fn factor_chained(&self) {
        self.chained_factors.set(self.chained_factors.get() + 1);
    }

    /// Whether one-right-hand-side solves can run as one chained launch each way.
    pub fn solves_by_chain(&self) -> bool {
        self.trsv_chain.is_some()
    }

    /// Kernel launches (glDispatchCompute calls) issued through these kernels so far: what an
    /// operation costs in launches is the difference around it.
    pub fn launches(&self) -> u64 {
        self.launches.get()
    }

    /// The busy work that brings the GPU's clocks up before timed runs (the benchmarks).
    pub fn preheat(&self) -> &Preheat {
        &self.preheat
    }

    /// Of [`TiledKernels::launches`], those that packed a product's operands for the texel
    /// kernel (software renderers: column-major RFP blocks, orders off multiples of 4).
    pub fn packs(&self) -> u64 {
        self.packs.get()
    }

    /// Solves that ran as one chained launch each way ([`TiledKernels::trsv_chain`]) so far.
    pub fn chained_solves(&self) -> u64 {
        self.chained.get()
    }

    pub(crate) fn chained(&self) {
        self.chained.set(self.chained.get() + 1);
    }

    // One launch of the current kind counted.
    fn launched(&self) {
        self.launches.set(self.launches.get() + 1);
        let mut counts = self.by_kind.get();
        counts.add(self.kind.get());
        self.by_kind.set(counts);
    }

    // One packing launch counted (as a copy, whatever the current kind).
    fn launched_pack(&self) {
        self.launches.set(self.launches.get() + 1);
        self.packs.set(self.packs.get() + 1);
        let mut counts = self.by_kind.get();
        counts.add(LaunchKind::Copy);
        self.by_kind.set(counts);
    }

    // Dispatches `p` (unless this is a dry run) and counts it.
    fn run(&self, p: &ComputeProgram, groups: [u32; 3]) -> Result<()> {
        if !self.dry_run.get() {
            p.dispatch(groups)?;
        }
        self.launched();
        Ok(())
    }

    /// The launches so far per kind ([`TiledKernels::set_launch_kind`]).
    pub fn launch_counts(&self) -> LaunchCounts {
        self.by_kind.get()
    }

    /// Declares what the following launches do (for [`TiledKernels::launch_counts`]);
    /// returns the kind declared before.
    pub fn set_launch_kind(&self, kind: LaunchKind) -> LaunchKind {
        self.kind.replace(kind)
    }

    /// With `on`, launches are counted but not issued (nothing is computed: for counting what
    /// an operation launches at sizes the device could not run quickly).
    pub fn set_dry_run(&self, on: bool) {
        self.dry_run.set(on);
    }

    /// The least depth of a product run on packed panels: [`PANEL_MIN_DEPTH`], and more than
    /// the diagonal blocks' order, so that the inner updates of the blocked Cholesky (of that
    /// depth) are never packed (a packing launch each) and can factor the next block.
    pub fn panel_min_depth(&self) -> usize {
        PANEL_MIN_DEPTH.max(self.diag + 1)
    }

    /// Order of the inverted diagonal blocks of the blocked Cholesky.
    pub fn diag(&self) -> usize {
        self.diag
    }

    /// How the blocked Cholesky factors and inverts its diagonal blocks.
    pub fn diagonal_factor(&self) -> DiagonalFactor {
        self.factor
    }

    /// Width of the outer block columns of the blocked Cholesky (a multiple of
    /// [`TiledKernels::diag`]).
    pub fn outer(&self) -> usize {
        self.outer
    }

    /// The chained panels' width: [`TiledKernels::outer`], or at least
    /// [`PANELS_AUTO_OUTER`](super::config::PANELS_AUTO_OUTER) where Auto chose the panels and
    /// the tuning set no outer block.
    pub fn panel_outer(&self) -> usize {
        self.panel_outer
    }

    /// Whether [`TiledKernels::multiply_by_inverse`] can run in place here: one product tile
    /// must span a whole block column (so no work group reads what another writes), which the
    /// shared-memory kernels do (the small-tile kernel only where its tiles are wide enough)
    /// and the register-only ones do not.
    pub fn inverted_blocks(&self) -> bool {
        (self.config.shared || self.config.texel) && self.config.bn() >= self.diag
    }

    /// Makes room for `slots` inverted diagonal blocks (a larger buffer drops the ones held:
    /// reserve before a factorization).
    pub fn reserve_inverses(&self, slots: usize) -> Result<()> {
        self.reserve_inverse_floats(slots.max(1) * self.diag * self.diag)
    }

    /// Makes room for `len` floats of inverted diagonal blocks (as
    /// [`TiledKernels::reserve_inverses`]).
    fn reserve_inverse_floats(&self, len: usize) -> Result<()> {
        let len = len.max(1);
        let mut inv = self.inverses.borrow_mut();
        if inv.as_ref().is_none_or(|b| b.len() < len) {
            *inv = Some(Buffer::uninitialized(
                &self.ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len,
            )?);
        }
        Ok(())
    }

    /// Factors the diagonal block `c` (order ≤ diag) in place and writes the inverse of its
    /// factor into slot `slot` (reserved with [`TiledKernels::reserve_inverses`]); `column0`
    /// is its first column in the whole matrix, for the status word.
    pub fn potrf_inv_block(&self, c: Operand<'_>, column0: usize, slot: usize) -> Result<()> {
        let v = c.view;
        debug_assert!(v.rows == v.cols && v.rows <= self.diag);
        self.reserve_inverses(slot + 1)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        c.buffer.bind_base(0);
        inv.bind_base(1);
        self.status.bind_base(5);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = &self.potrf_inv_block;
        p.set_all(&[
            ("n", u(v.rows)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("column0", u(column0)),
            ("inv_off", u(slot * self.diag * self.diag)),
        ])?;
        self.run(p, [1, 1, 1])?;
        Ok(())
    }

    /// The inverse of the diagonal block in slot `slot` (diag x diag, row-major), as
    /// [`TiledKernels::potrf_inv_block`] left it: for tests, with [`TiledKernels::poison_inverses`].
    pub fn inverse_block(&self, slot: usize) -> Result<Vec<f32>> {
        let d2 = self.diag * self.diag;
        match self.inverses.borrow().as_ref() {
            Some(inv) if inv.len() >= (slot + 1) * d2 => inv.download_range(slot * d2, d2),
            _ => Err(Error::shape("no inverted diagonal block in that slot")),
        }
    }

    /// Fills the inverted diagonal blocks' slots with NaN (at least `slots` of them), so that
    /// entries a factor leaves unwritten show.
    pub fn poison_inverses(&self, slots: usize) -> Result<()> {
        self.reserve_inverses(slots)?;
        match self.inverses.borrow().as_ref() {
            Some(inv) => inv.write(0, &vec![f32::NAN; inv.len()]),
            None => Ok(()),
        }
    }

    /// x ← x·L⁻ᵀ in place, L⁻¹ the inverted diagonal block in slot `slot` of the slots of
    /// order `order` (x has as many columns as that block's order, at most `order`): the panel
    /// solve as one product. The blocked factor's slots are of [`TiledKernels::diag`], the
    /// chain's of [`TiledKernels::chain_tile`]. Needs [`TiledKernels::inverted_blocks`].
    pub fn multiply_by_inverse(&self, x: Operand<'_>, slot: usize, order: usize) -> Result<()> {
        debug_assert!(self.inverted_blocks() && x.view.cols <= order);
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .filter(|inv| inv.len() >= (slot + 1) * order * order)
            .ok_or_else(|| {
                Error::shape("multiply_by_inverse: that inverse slot was never written")
            })?;
        let b = x.view.cols;
        let linv = View {
            offset: slot * order * order,
            rs: order,
            cs: 1,
            rows: b,
            cols: b,
        };
        // C and A are the same entries: safe because each work group owns whole rows of x
        // (one tile column) and writes them only after reading all of them.
        let small_fits = self.gemm_small.as_ref().is_some_and(|(_, c)| c.bn() >= b);
        self.gemm_tiles(
            Product::new(x, x, Operand::new(inv, linv)),
            small_fits,
            true,
        )
    }

    /// Turns a GL error pending after a batch of dispatches into a typed error.
    pub fn check(&self, during: &str) -> Result<()> {
        self.ctx.check(|| during.to_string())
    }

    /// Clears the status word before a factorization.
    pub fn reset_status(&self) -> Result<()> {
        self.status.reset()
    }

    /// Reads the status word: the first column whose pivot was not positive, as
    /// [`NumericalError::NotPositiveDefinite`] with the pivot before its square root.
    pub fn check_status(&self) -> Result<()> {
        match self.status.failure()? {
            None => Ok(()),
            Some((column, pivot)) => Err(NumericalError::NotPositiveDefinite {
                column,
                pivot: f64::from(pivot),
            }
            .into()),
        }
    }
}

/// The general product kernels' view uniforms: C's, A's and B's offsets and strides, and the
/// product's shape (rows and columns of C, depth of A).
fn product_views(cv: View, av: View, bv: View) -> [(&'static str, Uniform); 12] {
    let u = |v: usize| Uniform::U32(v as u32);
    [
        ("rows", u(cv.rows)),
        ("cols", u(cv.cols)),
        ("depth", u(av.cols)),
        ("c_off", u(cv.offset)),
        ("c_rs", u(cv.rs)),
        ("c_cs", u(cv.cs)),
        ("a_off", u(av.offset)),
        ("a_rs", u(av.rs)),
        ("a_cs", u(av.cs)),
        ("b_off", u(bv.offset)),
        ("b_rs", u(bv.rs)),
        ("b_cs", u(bv.cs)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_factor_stays_within_the_loop_limit_or_is_not_started() {
        // Tiles of 32 up to m = 513 (the tests) and of 64 up to 16384 (the H200's sizes) chain
        // with (nearly) the full polls; far more tile columns leave too few: not started.
        assert_eq!(factor_chain_spin_limit(17, 32), Some(CHAIN_SPIN_LIMIT));
        assert!(factor_chain_spin_limit(256, 64).is_some_and(|s| s > 30_000));
        for (columns, tile) in [(512, 32), (400, 64), (128, 128)] {
            let limit = factor_chain_spin_limit(columns, tile).unwrap();
            let loops = columns * (tile + FACTOR_CHAIN_LOOPS_PER_COLUMN) + FACTOR_CHAIN_LOOPS_FIXED;
            assert!(limit >= CHAIN_MIN_SPINS && limit + loops <= crate::gl::LOOP_LIMIT);
        }
        assert_eq!(factor_chain_spin_limit(2000, 64), None);
        // Two slices and the diagonal factor fit llvmpipe's 32 KiB up to tiles of 64.
        for tile in [16, 32, 48, 64] {
            assert!(factor_chain_shared_bytes(tile, DiagonalFactor::Columns) <= 32 * 1024);
            assert!(tile.is_multiple_of(factor_chain_slice(tile)));
        }
    }

    #[test]
    fn a_chained_solve_stays_within_the_loop_limit_or_is_not_started() {
        assert_eq!(chain_spin_limit(1), Some(CHAIN_SPIN_LIMIT));
        assert_eq!(chain_spin_limit(64), Some(CHAIN_SPIN_LIMIT));
        for blocks in [1, 64, 200, 313, 378, 379, 400, 10_000] {
            match chain_spin_limit(blocks) {
                Some(spins) => {
                    assert!(spins >= CHAIN_MIN_SPINS, "{blocks} blocks");
                    let loops = blocks * CHAIN_LOOPS_PER_BLOCK + CHAIN_LOOPS_FIXED + spins;
                    assert!(loops <= crate::gl::LOOP_LIMIT, "{blocks} blocks: {loops}");
                }
                None => assert!(blocks > 300, "{blocks} blocks refused"),
            }
        }
        assert_eq!(chain_spin_limit(10_000), None);
    }

    #[test]
    fn texel_reads_pack_only_what_cannot_be_read_in_fours() {
        let row_major = |rows, cols, ld| View {
            offset: 0,
            rs: ld,
            cs: 1,
            rows,
            cols,
        };
        // Aligned row-major operands with a whole depth: straight in fours.
        let (a, b) = (row_major(100, 64, 1024), row_major(40, 64, 512));
        assert_eq!(TexelReads::plan(a, b, true), TexelReads::Fours);
        // A row stride off 4 (order 1022), or a column-major block (RFP): that operand packed.
        let a_odd = row_major(100, 64, 1022);
        let expected = TexelReads::Packed {
            a: true,
            b: false,
            ld: 64,
        };
        assert_eq!(TexelReads::plan(a_odd, b, false), expected);
        let rfp = View::col_major(1, 100, 64, 1025);
        assert_eq!(TexelReads::plan(rfp, b, true), expected);
        // An offset off 4 alone.
        let shifted = View { offset: 2, ..a };
        assert_eq!(
            TexelReads::plan(b, shifted, false),
            TexelReads::Packed {
                a: false,
                b: true,
                ld: 64
            }
        );
        // A depth off 4: both packed, zero-padded to the next multiple of 4, unless d scales
        // the product (it would be read past its end) or the depth is too small to pay.
        let (a30, b30) = (row_major(100, 30, 1024), row_major(40, 30, 512));
        assert_eq!(
            TexelReads::plan(a30, b30, false),
            TexelReads::Packed {
                a: true,
                b: true,
                ld: 32
            }
        );
        assert_eq!(TexelReads::plan(a30, b30, true), TexelReads::Single);
        let (a6, b6) = (row_major(100, 6, 1024), row_major(40, 6, 512));
        assert_eq!(TexelReads::plan(a6, b6, false), TexelReads::Single);
        // One row: any row stride reads in fours.
        let one = View {
            rs: 3,
            ..row_major(1, 64, 0)
        };
        assert_eq!(TexelReads::plan(one, b, false), TexelReads::Fours);
    }
}
