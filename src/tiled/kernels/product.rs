//! The product family's launches: C ± A·Bᵀ on the general kernel (full or small tiles), on
//! buffer textures read in fours, or on packed panels (`PanelVariant`), cut into launches the
//! device allows; the packing launches that feed the panels.

use crate::tiled::config::{DiagonalFactor, KernelConfig, PanelVariant};
use crate::tiled::product::{Product, Support};
use crate::tiled::tiles::{grouped, output_tiles_below};
use crate::tiled::view::View;
use crate::error::{Error, Result};
use crate::gl::{
    Buffer, BufferTarget, BufferTexture, BufferUsage, ComputeLimits, ComputeProgram, Context,
    TexelWidth, Uniform,
};
use std::cell::RefCell;
use std::collections::hash_map::Entry;

use crate::tiled::table;
use super::*;
use super::fused_source;

/// Below this many full-size output tiles a product runs with the small-tile kernel.
pub(super) const SMALL_PRODUCT_TILES: usize = 264;

/// Products of at least this depth run on packed panels (`PanelProducts`) where the kernels
/// have them: the assembly and the outer-rank updates of the Cholesky and its solves. The
/// inner-block updates (depth = the diagonal blocks' order) stay on the general kernel: a
/// packing launch before each would add a dependent dispatch per block for little gain.
pub const PANEL_MIN_DEPTH: usize = 64;

/// The product kernel that reads its operands through buffer textures ([`KernelConfig::texel`]):
/// one float per texel for any view, four along k for aligned ones, and a packing kernel that
/// makes the others aligned.
pub(super) struct TexelProducts {
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
pub(super) fn cut_blocks(len: usize, cut: usize) -> impl Iterator<Item = (usize, usize)> {
    let n = (len / cut).max(1);
    (0..n).map(move |i| (i * cut, if i + 1 == n { len - i * cut } else { cut }))
}

/// Products of a smaller depth are read one float at a time rather than packed.
pub(super) const PACK_MIN_DEPTH: usize = 8;

/// Work groups of the packing kernel along its rows: GL's least maximum (65535) of 4 rows.
pub(super) const PACK_MAX_ROWS: usize = 65535 * 4;

/// `x` as the texel kernel reads it: itself, or where `packed` its copy in `buffer` (rows of
/// `ld` floats).
pub(super) fn packed_operand<'a>(
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
pub(super) enum TexelReads {
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
    pub(super) fn plan(av: View, bv: View, scaled: bool) -> Self {
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
    pub(super) fn new(ctx: &Context, config: KernelConfig) -> Result<Self> {
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
    pub(super) fn pack(&self, ctx: &Context, slot: usize, x: Operand<'_>, ld: usize, dry: bool) -> Result<()> {
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
pub(super) struct PanelProducts {
    pub(super) pack: LazyProgram,
    // The full-size tiles and, for products with few of them, the quarter-size tiles.
    pub(super) gemm: (LazyProgram, KernelConfig),
    pub(super) small: Option<(LazyProgram, KernelConfig)>,
    // Each of those with SUPPORT (products on supports, `Product::support`).
    pub(super) supported: (LazyProgram, Option<LazyProgram>),
    // Both with FUSED_DIAG for diagonal blocks of the given order (the Cholesky's trailing
    // update then factors the next diagonal block), where the tiles allow it.
    pub(super) fused: Option<(usize, FusedPanels)>,
    // The panels of A and B (grown as needed, kept for the next product).
    pub(super) panels: [RefCell<Option<Buffer<f32>>>; 2],
    // The slice depth, tile order, padding and register buffering compiled in.
    pub(super) variant: PanelVariant,
}

/// The packed-panel products with FUSED_DIAG: full-size tiles and, where they exist,
/// quarter-size ones.
pub(super) type FusedPanels = [Option<(LazyProgram, KernelConfig)>; 2];

impl PanelProducts {
    /// The panel kernels of `config`, with fused variants for diagonal blocks of order `diag`
    /// where given.
    pub(super) fn new(
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
        // The panel program on tiles `c`, with `more` defines after the variant's (SUPPORT
        // for products on supports).
        let gemm = |c: KernelConfig, variant: &str, more: &str| {
            let c = c.panel_sliced(panel.slice);
            let k = &table::GEMM_PANEL;
            let source = format!("{defines}{more}{}", k.source);
            (LazyProgram::new(ctx, k, variant, c.source(&source)), c)
        };
        let support = "#define SUPPORT 1\n";
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
            Ok(Some((LazyProgram::new(ctx, k, variant, c.source(&source)), c)))
        };
        let pack = &table::PACK_PANEL;
        Ok(Some(Self {
            pack: LazyProgram::new(ctx, pack, "", config.source(pack.source)),
            gemm: gemm(config, "", ""),
            small: small.map(|s| gemm(s, "small tiles", "")),
            supported: (
                gemm(config, "on supports", support).0,
                small.map(|s| gemm(s, "small tiles, on supports", support).0),
            ),
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

/// The general product kernels' view uniforms: C's, A's and B's offsets and strides, and the
/// product's shape (rows and columns of C, depth of A).
pub(super) fn product_views(cv: View, av: View, bv: View) -> [(&'static str, Uniform); 12] {
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

impl TiledKernels {
    /// The product `p` (c ← α·a·diag(d)·bᵀ + β·c over `p.mask`'s entries). Where it
    /// replaces c, c is not read (it may hold anything, NaN included).
    pub fn gemm(&self, p: Product<'_, Operand<'_>>) -> Result<()> {
        self.gemm_tiles(p, true, false)
    }

    /// [`TiledKernels::gemm`], with the small-tile kernel allowed for small products or not,
    /// `in_place` when c and a are the same entries (one tile column).
    pub(super) fn gemm_tiles(
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
            let [sa, sb] = p.support.map(|x| x.sub(0, k0));
            let slice = p
                .with(c, cut(a, k0, w), cut(b, k0, w))
                .update(update)
                .support(sa, sb);
            self.gemm_launch(slice, k0, allow_small, false)?;
        }
        Ok(())
    }

    /// One launch of [`TiledKernels::gemm_tiles`] (d read from entry `d_off` on, a multiple
    /// of 4), its depth within [`DEPTH_PER_LAUNCH`] or in place.
    pub(super) fn gemm_launch(
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
            let small = panel
                .small
                .as_ref()
                .filter(|_| allow_small && full_tiles < SMALL_PRODUCT_TILES);
            let (plain, config) = small.unwrap_or(&panel.gemm);
            // Products on supports take the programs that skip (the others read the zeros:
            // the same sums, more slowly).
            let supported = match small {
                Some(_) => panel.supported.1.as_ref(),
                None => Some(&panel.supported.0),
            };
            let on_supports = product.support != [Support::All; 2];
            let p = supported.filter(|_| on_supports).unwrap_or(plain);
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
                (small.get()?, *config)
            }
            _ => (self.gemm.get()?, self.config),
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
    pub(super) fn dispatch_tiles(
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
    pub(super) fn dispatch_tiles_grouped(
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
    pub(super) fn gemm_cut(
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
                    .mask(crate::tiled::product::Mask::from_shift(local))
                    .support(product.support[0].sub(r0, 0), product.support[1].sub(c0, 0));
                self.gemm_launch(block, d_off, allow_small, false)?;
            }
        }
        Ok(())
    }

    /// The product on packed panels: A into panel 0, B·diag(d) into panel 1 (or B read from
    /// A's panel where it is A's first rows and unscaled: the SYRKs), then one launch over the
    /// lower tiles. `Ok(false)` (nothing launched) where a panel would not fit one storage
    /// buffer or the packing launch the device's work-group counts.
    pub(super) fn gemm_panel(
        &self,
        panel: &PanelProducts,
        (p, config): (&LazyProgram, KernelConfig),
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
            (crate::tiled::storage::max_buffer_bytes(self.limits.max_storage_block_bytes) / 4) as usize;
        let max_groups = self.limits.max_groups_x as usize;
        if ra.max(rb) / tile * block > max_len
            || ra.max(rb) / 32 > max_groups
            || kp / 32 >= max_groups
        {
            return Ok(false);
        }
        let p = p.get()?;
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
        // Inactive (skipped) in the programs compiled without SUPPORT.
        let [(a_sup, a_shift), (b_sup, b_shift)] = product.support.map(|x| x.uniforms());
        p.set_all(&[
            ("a_support", Uniform::I32(a_sup)),
            ("a_shift", Uniform::I32(a_shift)),
            ("b_support", Uniform::I32(b_sup)),
            ("b_shift", Uniform::I32(b_shift)),
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
    pub(super) fn pack_panel(
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
        let pack = panel.pack.get()?;
        pack.set_all(&[
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
            pack.dispatch([(rows / 32) as u32, kp.div_ceil(32) as u32, 1])?;
        }
        self.launched_pack();
        Ok(())
    }

    /// The least depth of a product run on packed panels: [`PANEL_MIN_DEPTH`], and more than
    /// the diagonal blocks' order, so that the inner updates of the blocked Cholesky (of that
    /// depth) are never packed (a packing launch each) and can factor the next block.
    pub fn panel_min_depth(&self) -> usize {
        PANEL_MIN_DEPTH.max(self.diag + 1)
    }
}


#[cfg(test)]
mod tests {
    use super::*;

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
