//! Tile sizes of the compute kernels, compile-time constants injected into the GLSL sources,
//! chosen per device: large shared-memory tiles for GPUs, register tiles read through buffer
//! textures for CPU renderers (llvmpipe runs barriers, shared memory and storage-buffer reads
//! slowly: each of those reads is a loop over its SIMD lanes).

use crate::gl::DeviceInfo;

/// Depth of the plain packed-panel kernel's k-slices: the next slice is already in registers,
/// so thin slices (one barrier per 4 steps) cost little and leave shared memory for more work
/// groups per multiprocessor; 4 was the fastest of 4, 8 and 16 without the unroll pragma
/// (`figures/h200/experiments/panel_tilings.csv`). With it, [`PanelVariant::DEFAULT`] takes
/// [`DEFAULT_PANEL_SLICE`].
pub const PANEL_SLICE: usize = 4;

/// The default variant's k-slices: with the unroll pragma, slices of 8 ran the assembly
/// faster than 4 at m = 4096-16384 and the Cholesky no slower
/// (`figures/h200/experiments/panel_slices.csv`).
pub const DEFAULT_PANEL_SLICE: usize = 8;

/// How the tiled Cholesky factors and inverts its diagonal blocks in one work group
/// ([`TiledTuning::diagonal_factor`](super::TiledTuning::diagonal_factor)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DiagonalFactor {
    /// Column by column, one barrier per column (`potrf_inv_fn.glsl`).
    Columns,
    /// Right-looking in panels of [`DIAGONAL_PANEL`] columns, each factored by one subgroup
    /// where the driver has subgroups, four barriers per panel (`potrf_inv_panels.glsl`).
    #[default]
    Panels,
    /// Blocks of 32: lane i of one subgroup holds row i in registers and takes the pivot's
    /// column by shuffles, no barrier per column (`potrf_inv_lanes.glsl`; without shuffles
    /// through shared memory, two barriers per column); other orders column by column.
    Lanes,
    /// Two columns per barrier: a rank-2 step of the same elimination, the second column's
    /// update by the first formed by every invocation (`potrf_inv_pairs.glsl`; issue 25).
    Pairs,
    /// Four columns per barrier: every invocation eliminates the 4 x 4 corner itself and
    /// applies a rank-4 step (`potrf_inv_steps.glsl` of width 4; issue 25).
    Quads,
}

/// Width of the panels of [`DiagonalFactor::Panels`] (it divides every diagonal-block order).
pub const DIAGONAL_PANEL: usize = 16;

impl DiagonalFactor {
    /// Both, for sweeps and tests.
    pub const ALL: [DiagonalFactor; 5] = [
        DiagonalFactor::Columns,
        DiagonalFactor::Panels,
        DiagonalFactor::Lanes,
        DiagonalFactor::Pairs,
        DiagonalFactor::Quads,
    ];

    /// A short name for reports and benchmark labels.
    pub fn name(self) -> &'static str {
        match self {
            DiagonalFactor::Columns => "columns",
            DiagonalFactor::Panels => "panels",
            DiagonalFactor::Lanes => "lanes",
            DiagonalFactor::Pairs => "pairs",
            DiagonalFactor::Quads => "quads",
        }
    }

    /// The factor's GLSL function `factor_block` (inserted where a kernel runs it).
    pub fn function(self) -> &'static str {
        match self {
            DiagonalFactor::Columns => super::table::POTRF_INV_FN,
            DiagonalFactor::Panels => super::table::POTRF_INV_PANELS_FN,
            DiagonalFactor::Lanes => super::table::POTRF_INV_LANES_FN,
            DiagonalFactor::Pairs => super::table::POTRF_INV_PAIRS_FN,
            DiagonalFactor::Quads => super::table::POTRF_INV_QUADS_FN,
        }
    }

    /// Shared memory of the factor of a block of order `diag` in bytes, in its own launch (at
    /// most: the fused product kernels hold the panels' columns once).
    pub fn shared_bytes(self, diag: usize) -> usize {
        let p = DIAGONAL_PANEL;
        let floats = match self {
            DiagonalFactor::Columns => 5 * diag,
            // The pivots and the exchange's column and row (blocks of 32), else the columns'.
            DiagonalFactor::Lanes if diag == 32 => 3 * diag,
            DiagonalFactor::Lanes => 5 * diag,
            // Two buffers of two columns and two rows, and the pivots.
            DiagonalFactor::Pairs => 9 * diag,
            DiagonalFactor::Quads => 17 * diag,
            DiagonalFactor::Panels => {
                let bufs = if diag <= 64 { 2 } else { 1 };
                bufs * diag * (p + 1) + 2 * p * diag + p * (p + 1) + 2 * diag
            }
        };
        floats * 4
    }
}

/// The default [`PanelVariant::cut`].
pub const PANEL_CUT: usize = 4096;

/// Variants of the packed-panel product (`gemm_panel.comp`, `pack_panel.comp`) as typed
/// choices, for sweeping on a GPU; [`PanelVariant::PLAIN`] is the kernel before the variants.
/// All but [`PanelVariant::root_d`] change only the order of loads and launches, so they give
/// the same bits as PLAIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PanelVariant {
    /// Depth of the k-slices through shared memory (4, 8 or 16; default
    /// [`DEFAULT_PANEL_SLICE`]).
    pub slice: usize,
    /// Output tiles launched in bands of this many tile rows, each band column by column
    /// (1: row by row, the default), so the work groups in flight share A's and B's panel
    /// blocks in L2: at m = 16384 a row of tiles reads 128 B blocks of 8 MiB each.
    pub group: usize,
    /// Whether the panels' blocks are padded by one k-row of the tile (their stride then no
    /// power of two: at kp = 16384 the blocks lie 8 MiB apart, every work group of a k-step
    /// on the same address bits).
    pub pad: bool,
    /// Whether the next k-step's shared-memory operands are read into registers while the
    /// current one is multiplied (register double buffering).
    pub regbuf: bool,
    /// Whether the kernel asks NVIDIA's compiler to unroll every loop
    /// (`#pragma optionNV(unroll all)`; other compilers ignore it): register tiles of 16 x 8
    /// ran many times slower than 8 x 8 (`figures/h200/experiments/panel_tilings.csv`), as if
    /// their accumulators were indexed at run time and so kept in local memory.
    pub unroll: bool,
    /// Whether a SYRK scaled by a d known to be ≥ 0 (the assembly's, where every weight is)
    /// packs A·√d once and reads it as both operands: one packing launch and one panel
    /// fewer, C = (A√D)(A√D)ᵀ exactly symmetric; rounded differently from A·(D·Aᵀ), so not
    /// the default's bits.
    pub root_d: bool,
    /// C cut into launches of blocks of this many rows and columns (a multiple of 128, at
    /// least two tiles; 0: one launch) where C spans two blocks or more and the depth is at
    /// least one block's side, each block packing its own panels: a launch's work groups then
    /// read fewer panel blocks of 8 MiB (at depth 16384; shallower products, such as the
    /// blocked Cholesky's rank-512 updates, stay whole). Blocks of 4096 run the order-16384
    /// product at over twice one launch's rate (`figures/h200/experiments/product_cut.csv`).
    pub cut: usize,
    /// Whether the depth loop takes the k-slices in pairs, each naming its shared buffer by a
    /// literal (no run-time buffer index in the shared-memory addresses; not in the program
    /// for products on supports).
    pub pairs: bool,
}

impl Default for PanelVariant {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PanelVariant {
    /// The kernel before the variants: slices of [`PANEL_SLICE`], tiles row by row, no
    /// padding, no register double buffering, no unroll pragma, A·(D·Aᵀ).
    pub const PLAIN: PanelVariant = PanelVariant {
        slice: PANEL_SLICE,
        group: 1,
        pad: false,
        regbuf: false,
        unroll: false,
        root_d: false,
        cut: 0,
        pairs: false,
    };

    /// The default: [`PanelVariant::PLAIN`] with the unroll pragma and A·√d packed once, each
    /// of which was faster alone at m = 4096-16384, the others not
    /// (`figures/h200/experiments/assembly_sweep.csv`), slices of [`DEFAULT_PANEL_SLICE`] taken
    /// in pairs (faster, `figures/h200/experiments/product_variants_s30/pairs.csv`);
    /// and C cut into blocks of [`PANEL_CUT`] (blocks of 2048 and 8192 were slower,
    /// `figures/h200/experiments/product_cut.csv`).
    pub const DEFAULT: PanelVariant = PanelVariant {
        slice: DEFAULT_PANEL_SLICE,
        unroll: true,
        root_d: true,
        cut: PANEL_CUT,
        pairs: true,
        ..Self::PLAIN
    };

    /// Parses "slice,group,pad,regbuf[,unroll[,root_d[,cut[,pairs]]]]" (e.g. "4,8,1,0"): slice
    /// 4, 8 or 16, group 1 to 64, cut 0 or a multiple of 128, the others 0 or 1 (0 where left
    /// out, so "8,1,0,0,1,1,0,1" is the default without its cut); `None` when the text is no
    /// valid variant.
    pub fn parse(text: &str) -> Option<Self> {
        let v: Vec<usize> = text
            .split(',')
            .map(|s| s.trim().parse().ok())
            .collect::<Option<_>>()?;
        let (slice, group, flags) = match v[..] {
            [s, g, ref flags @ ..] if (2..=6).contains(&flags.len()) => (s, g, flags),
            _ => return None,
        };
        // Every field after slice and group is 0 or 1 but the cut (the fifth).
        const CUT: usize = 4;
        let flag = |i: usize| flags.get(i).copied().unwrap_or(0);
        let v = Self {
            slice,
            group,
            pad: flag(0) == 1,
            regbuf: flag(1) == 1,
            unroll: flag(2) == 1,
            root_d: flag(3) == 1,
            cut: flag(CUT),
            pairs: flag(5) == 1,
        };
        let flags_ok = flags.iter().enumerate().all(|(i, &f)| i == CUT || f <= 1);
        (flags_ok && v.is_valid()).then_some(v)
    }

    /// Whether the values lie in the ranges [`PanelVariant::parse`] takes.
    pub fn is_valid(&self) -> bool {
        [4, 8, 16].contains(&self.slice)
            && (1..=64).contains(&self.group)
            && self.cut.is_multiple_of(128)
    }

    /// A short name for labels (no commas, for CSV): "s<slice>g<group>p<pad>r<regbuf>", then
    /// "u1" where unrolled, "q1" where A·√d is packed once, "c<cut>" where cut and "w1" where the
    /// slices go in pairs.
    pub fn label(&self) -> String {
        format!(
            "s{}g{}p{}r{}{}{}{}",
            self.slice,
            self.group,
            u8::from(self.pad),
            u8::from(self.regbuf),
            if self.unroll { "u1" } else { "" },
            if self.root_d { "q1" } else { "" },
            if self.cut > 0 {
                format!("c{}", self.cut)
            } else {
                String::new()
            }
        ) + if self.pairs { "w1" } else { "" }
    }

    /// The #defines and pragmas this variant puts in front of `gemm_panel.comp`.
    pub fn defines(&self) -> String {
        let mut s = String::new();
        if self.unroll {
            s += "#pragma optionNV(unroll all)\n";
        }
        if self.regbuf {
            s += "#define REGBUF\n";
        }
        if self.pairs {
            s += "#define PAIRS\n";
        }
        s
    }
}

/// The product kernel's tiling: BM x BN outputs per work group of WG_X x WG_Y invocations,
/// TM x TN of them per invocation held in registers, k-slices of BK through shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    /// Work group width (invocations along output columns).
    pub wg_x: usize,
    /// Work group height (invocations along output rows).
    pub wg_y: usize,
    /// Output rows per invocation (a multiple of 4).
    pub tm: usize,
    /// Output columns per invocation (a multiple of 4).
    pub tn: usize,
    /// Depth of a shared-memory k-slice.
    pub bk: usize,
    /// Whether k-slices go through shared memory (else each invocation reads the buffers).
    pub shared: bool,
    /// Whether the product reads its operands through buffer textures (`gemm_texel.comp`,
    /// no shared memory: the kernel for software renderers) instead of `gemm.comp`.
    pub texel: bool,
    /// Order of the diagonal blocks factored and solved by one work group of 16 x 16 (a
    /// multiple of 16; the block and its padding live in shared memory).
    pub nb: usize,
}

impl KernelConfig {
    /// For GPUs: 128 x 128 output tiles, 8 x 8 per invocation, k-slices of 16 in the general
    /// kernel (16.5 KiB of shared memory with padding; the H200 gives 48 KiB; the packed-panel
    /// kernel takes slices of [`PANEL_SLICE`]), diagonal blocks of 32. The tilings tried are
    /// measured in docs/results.md.
    pub const GPU: KernelConfig = KernelConfig {
        wg_x: 16,
        wg_y: 16,
        tm: 8,
        tn: 8,
        bk: 16,
        shared: true,
        texel: false,
        nb: 32,
    };

    /// Register-only tiles, no shared memory or barriers: 16 x 16 output tiles from 4 x 4
    /// invocations (tried for CPU renderers; slower there than [`KernelConfig::GPU`]; kept as
    /// the variant that checks the register-only code path).
    pub const CPU: KernelConfig = KernelConfig {
        wg_x: 4,
        wg_y: 4,
        tm: 4,
        tn: 4,
        bk: 1,
        shared: false,
        texel: false,
        nb: 32,
    };

    /// Register tiles read through buffer textures, for software renderers: on llvmpipe a
    /// storage-buffer or shared-memory read is a loop over the SIMD lanes while `texelFetch` is
    /// one gather.
    pub const TEXEL: KernelConfig = KernelConfig {
        wg_x: 8,
        wg_y: 4,
        tm: 8,
        tn: 4,
        bk: 4,
        shared: false,
        texel: true,
        nb: 32,
    };

    /// The configuration for this device: [`KernelConfig::TEXEL`] on software renderers and
    /// [`KernelConfig::GPU`] elsewhere.
    pub fn for_device(info: &DeviceInfo) -> Self {
        // On llvmpipe the texel kernel's assembly is several times faster than the
        // shared-memory and register-only tiles (measured in docs/results.md).
        if info.software {
            Self::TEXEL
        } else {
            Self::GPU
        }
    }

    /// Parses "wg_x,wg_y,tm,tn,bk,reads,nb" (reads: 0 straight from the buffers, 1 through
    /// shared memory, 2 through buffer textures), or `None` when the text is no valid
    /// configuration.
    pub fn parse(text: &str) -> Option<Self> {
        let v: Vec<usize> = text
            .split(',')
            .map(|s| s.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [wg_x, wg_y, tm, tn, bk, reads, nb] = v[..] else {
            return None;
        };
        if reads > 2 {
            return None;
        }
        let c = Self {
            wg_x,
            wg_y,
            tm,
            tn,
            bk,
            shared: reads == 1,
            texel: reads == 2,
            nb,
        };
        // Each value bounded first (so the products below cannot overflow): work groups of at
        // most 1024 invocations, register tiles of at most 16 x 16 outputs, k-slices of at most
        // 64, diagonal blocks of at most 128.
        let valid = (1..=1024).contains(&wg_x)
            && (1..=1024).contains(&wg_y)
            && (4..=16).contains(&tm)
            && (4..=16).contains(&tn)
            && tm % 4 == 0
            && tn % 4 == 0
            && (1..=64).contains(&bk)
            && (16..=128).contains(&nb)
            && nb % 16 == 0
            && nb * (nb + 1) * 4 <= 40 * 1024
            && wg_x * wg_y <= 1024
            && c.shared_bytes() <= 48 * 1024;
        valid.then_some(c)
    }

    /// The same kernels with quarter-size product tiles (half the outputs per invocation each
    /// way), for small products; `None` when the tiles cannot shrink.
    pub fn small(&self) -> Option<Self> {
        (self.shared && self.tm >= 8 && self.tn >= 8).then_some(Self {
            tm: self.tm / 2,
            tn: self.tn / 2,
            ..*self
        })
    }

    /// Output rows per work group.
    pub fn bm(&self) -> usize {
        self.wg_y * self.tm
    }

    /// Output columns per work group.
    pub fn bn(&self) -> usize {
        self.wg_x * self.tn
    }

    /// Shared memory of the product kernel in bytes (0 without shared memory).
    pub fn shared_bytes(&self) -> usize {
        if self.shared {
            self.bk * (self.bm() / 4 + 1 + self.bn() / 4 + 1) * 16
        } else {
            0
        }
    }

    /// The packed-panel product kernel's tiles (`gemm_panel.comp`): these, with k-slices of
    /// [`PANEL_SLICE`].
    pub fn panel(&self) -> Self {
        self.panel_sliced(PANEL_SLICE)
    }

    /// The packed-panel product kernel's tiles with k-slices of `slice`
    /// ([`PanelVariant::slice`]).
    pub fn panel_sliced(&self, slice: usize) -> Self {
        Self { bk: slice, ..*self }
    }

    /// Shared memory of the packed-panel product kernel in bytes: two k-slices of both
    /// operands (double-buffered), no padding (its stores are along rows).
    pub fn panel_shared_bytes(&self) -> usize {
        self.panel_shared_bytes_sliced(PANEL_SLICE)
    }

    /// [`KernelConfig::panel_shared_bytes`] with k-slices of `slice`.
    pub fn panel_shared_bytes_sliced(&self, slice: usize) -> usize {
        2 * slice * (self.bm() / 4 + self.bn() / 4) * 16
    }

    /// Whether products may run on packed panels with these tiles: shared-memory tiles (not
    /// the texel or register-only kernels) of power-of-two sides, whose two k-slices fit in
    /// `max_shared_bytes`.
    pub fn panels(&self, max_shared_bytes: u64) -> bool {
        self.panels_sliced(max_shared_bytes, PANEL_SLICE)
    }

    /// [`KernelConfig::panels`] with k-slices of `slice`.
    pub fn panels_sliced(&self, max_shared_bytes: u64, slice: usize) -> bool {
        self.shared
            && !self.texel
            && self.bm().is_power_of_two()
            && self.bn().is_power_of_two()
            && self.panel_shared_bytes_sliced(slice) as u64 <= max_shared_bytes
    }

    /// The order of the tiled Cholesky's diagonal blocks where the tuning leaves it:
    /// [`GPU_DIAG_BLOCK`](super::schedule::GPU_DIAG_BLOCK) with 16 x 16 shared-memory tiles of
    /// at least 128 x 128 (the kernels that fuse updates with blocks of that order and multiply
    /// their panels in place), else [`DIAG_BLOCK`](super::schedule::DIAG_BLOCK).
    pub fn default_diagonal_block(&self) -> usize {
        use super::schedule::{DIAG_BLOCK, GPU_DIAG_BLOCK};
        let fuses = self.shared && !self.texel && (self.wg_x, self.wg_y) == (16, 16);
        if fuses && self.bm().min(self.bn()) >= 2 * GPU_DIAG_BLOCK {
            GPU_DIAG_BLOCK
        } else {
            DIAG_BLOCK
        }
    }

    /// The work group (x, y) of the factor-and-invert kernel of diagonal blocks of order
    /// `diag`: 8 x 4 with the texel kernels (llvmpipe runs a barrier once per SIMD vector of 8
    /// invocations: fewer vectors, fewer switches: faster than 16 x 16 there, measured in
    /// docs/results.md); on GPUs 32 x 32 for orders of 64
    /// and more that 32 divides (each invocation then holds 2 x 2 entries of a block of 64 and
    /// 4 x 4 of 128: with 16 x 16 the 128 block ran out of registers, README), else 16 x 16.
    pub fn diagonal_group(&self, diag: usize) -> (usize, usize) {
        if self.texel {
            (8, 4)
        } else if diag >= 64 && diag.is_multiple_of(32) {
            (32, 32)
        } else {
            (16, 16)
        }
    }

    /// The chained Cholesky's tile order where the tuning sets neither it nor the diagonal
    /// blocks' order: [`CHAIN_TILE`](super::schedule::CHAIN_TILE) with the kernels whose
    /// diagonal blocks are [`GPU_DIAG_BLOCK`](super::schedule::GPU_DIAG_BLOCK), else the
    /// diagonal blocks' order.
    pub fn default_chain_tile(&self) -> usize {
        use super::schedule::{CHAIN_TILE, GPU_DIAG_BLOCK};
        match self.default_diagonal_block() {
            GPU_DIAG_BLOCK => CHAIN_TILE,
            diag => diag,
        }
    }

    /// The diagonal-block factor where the tuning leaves it: column by column. The panels were
    /// slower at every size and block measured
    /// (`figures/h200/experiments/cholesky_diag_sweep.csv`), and on software renderers, which
    /// have no subgroups, their fallback takes more barriers than the columns.
    pub fn default_diagonal_factor(&self) -> DiagonalFactor {
        DiagonalFactor::Columns
    }

    /// [`KernelConfig::diagonal_group`] as #defines (none for the shader's default 16 x 16).
    pub fn diagonal_group_defines(&self, diag: usize) -> String {
        match self.diagonal_group(diag) {
            (16, 16) => String::new(),
            (x, y) => format!("#define PX {x}\n#define PY {y}\n"),
        }
    }

    /// `source` (a file of `glsl/tiled/`) with the version line, these constants and the pivot
    /// test ([`crate::gl::PIVOT_GLSL`]) in front.
    pub fn source(&self, source: &str) -> String {
        format!(
            "#version 430\n#define WG_X {}\n#define WG_Y {}\n#define TM {}\n#define TN {}\n\
             #define BM {}u\n#define BN {}u\n#define BK {}u\n#define SHARED {}\n#define NB {}\n\
             {}{source}",
            self.wg_x,
            self.wg_y,
            self.tm,
            self.tn,
            self.bm(),
            self.bn(),
            self.bk,
            u8::from(self.shared),
            self.nb,
            crate::gl::PIVOT_GLSL
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_are_whole_vec4_groups_and_fit_shared_memory() {
        for c in [KernelConfig::GPU, KernelConfig::CPU, KernelConfig::TEXEL] {
            assert!(c.tm % 4 == 0 && c.tn % 4 == 0);
            assert!(c.shared_bytes() <= 48 * 1024);
            assert!(c.wg_x * c.wg_y <= 1024 && c.nb <= 1024);
            let s = c.source("void main() {}");
            assert!(
                s.starts_with("#version 430\n") && s.contains(&format!("#define BM {}u", c.bm()))
            );
        }
        assert_eq!(KernelConfig::GPU.bm(), 128);
        assert_eq!(
            KernelConfig::parse("16,16,8,8,16,1,32"),
            Some(KernelConfig::GPU)
        );
        assert_eq!(KernelConfig::parse("16,16,6,8,16,1,64"), None);
        assert_eq!(KernelConfig::parse("1,2"), None);
        assert_eq!(
            KernelConfig::parse("8,4,8,4,4,2,32"),
            Some(KernelConfig::TEXEL)
        );
        assert_eq!(KernelConfig::parse("8,4,8,4,4,3,32"), None);
        assert_eq!(KernelConfig::parse("16,16,8,8,16,1,40"), None);
        assert_eq!(PanelVariant::parse("4,1,0,0"), Some(PanelVariant::PLAIN));
        assert_eq!(
            PanelVariant::parse("8,1,0,0,1,1,4096,1"),
            Some(PanelVariant::DEFAULT)
        );
        let w = PanelVariant::parse("8,1,0,0,1,1,4096").unwrap();
        assert!(!w.pairs && w.label() == "s8g1p0r0u1q1c4096");
        assert_eq!(PanelVariant::DEFAULT.label(), "s8g1p0r0u1q1c4096w1");
        assert!(PanelVariant::DEFAULT.defines().contains("#define PAIRS"));
        let v = PanelVariant::parse("8, 8,1,1").unwrap();
        assert_eq!((v.slice, v.group, v.pad, v.regbuf), (8, 8, true, true));
        assert_eq!(v.label(), "s8g8p1r1");
        let u = PanelVariant::parse("4,1,0,0,1").unwrap();
        assert!(u.unroll && u.label() == "s4g1p0r0u1" && u.defines().contains("unroll all"));
        let q = PanelVariant::parse("4,1,0,0,0,1").unwrap();
        assert!(q.root_d && !q.unroll && q.label() == "s4g1p0r0q1");
        let c = PanelVariant::parse("4,1,0,0,1,1,2048").unwrap();
        assert!(c.cut == 2048 && c.label() == "s4g1p0r0u1q1c2048");
        assert_eq!(PanelVariant::parse("4,1,0,0,0,0,0"), Some(PanelVariant::PLAIN));
        for bad in [
            "5,1,0,0",
            "4,0,0,0",
            "4,65,0,0",
            "4,1,2,0",
            "4,1,0",
            "4,1,0,0,2",
            "4,1,0,0,0,0,100",
            "4,1,0,0,0,0,4096,2",
            "",
        ] {
            assert_eq!(PanelVariant::parse(bad), None, "{bad}");
        }
        assert_eq!(KernelConfig::parse("8,4,1024,4,4,2,32"), None);
        assert_eq!(KernelConfig::parse("0,4,8,4,4,2,32"), None);
        assert_eq!(
            KernelConfig::parse("8,4,8,4,18446744073709551615,2,32"),
            None
        );
    }
}
