//! The tiled Cholesky's schedules and the defaults of its block sizes: blocked, chained in one
//! launch, chained panels or split in halves ([`CholeskySchedule`]), how the chain polls
//! ([`ChainPoll`]), how the split solves below its leaves ([`SplitSolve`]), and the orders each
//! takes by default (the tuning, [`TiledTuning`](super::TiledTuning), overrides them).

/// Order of the diagonal blocks that the blocked Cholesky factors and inverts in one work
/// group (its inner block-column width), for kernels other than the GPUs' (software
/// renderers: see [`GPU_DIAG_BLOCK`]): inside outer blocks (two levels beat one) 32 beat 64
/// with the schedule of the time (measured in docs/results.md).
pub const DIAG_BLOCK: usize = 32;

/// The diagonal blocks' order with the GPUs' kernels
/// ([`KernelConfig::default_diagonal_block`](super::KernelConfig::default_diagonal_block)): the
/// fastest of 32, 64 and 128 (`figures/h200/experiments/cholesky_sweep.csv`); with the inner
/// updates fused into the next block, 64 needs about half the launches of 32, and the diagonal
/// factor's cost per column, not the block's order, sets the serial part
/// (`figures/h200/experiments/cholesky_dispatch_profile.txt`). `scripts/bench cholesky` times
/// 32, 64 and 128 in one run.
pub const GPU_DIAG_BLOCK: usize = 64;

/// The chained Cholesky's tile order with the GPUs' kernels
/// ([`KernelConfig::default_chain_tile`](super::KernelConfig::default_chain_tile)), apart from the blocked factor's [`GPU_DIAG_BLOCK`]:
/// with the look-ahead and the fold, tiles of 32 beat 64 in the chain and in the split's
/// leaves, while the blocked factor (RFP's) is faster on 64
/// (`figures/h200/experiments/chain_ahead.csv`).
pub const CHAIN_TILE: usize = 32;

/// Width of the outer block columns of the blocked Cholesky: the rank of its trailing updates
/// (the fastest of 128 to 1024; measured in docs/results.md).
pub const OUTER_BLOCK: usize = 512;

/// Order of the diagonal blocks the triangular solves invert ([`TiledKernels::invert_blocks`](super::TiledKernels::invert_blocks))
/// and then apply as products: 128, the largest a work group of 16 x 16 holds in registers.
pub const SOLVE_BLOCK: usize = 128;

/// The default largest order whose several-column right sides are solved by a chain per column
/// ([`TiledTuning::column_chains_order`](super::TiledTuning::column_chains_order)).
pub const COLUMN_CHAINS_ORDER: usize = 8192;

/// The order from which full storage is factored as spftrf factors RFP: [L11; L21] as one tall
/// block column of m/2 columns, one rank-m/2 product on the trailing half, then its own
/// factorization. From this order the split beats right-looking over the whole triangle; below
/// it the two are even or right-looking leads (measured in docs/results.md).
pub const SPLIT_ORDER: usize = 16384;

/// How the tiled Cholesky of full storage is scheduled: the blocked right-looking launches
/// ([`potrf_blocked`](super::cholesky::potrf_blocked), about 200 dependent launches at m =
/// 4096) or one chained launch, left-looking by tiles of the diagonal block's order
/// (`glsl/tiled/potrf_chain.comp`, [`factor_by_chain`](super::cholesky::factor_by_chain)).
/// RFP storage, a matrix over several buffers and kernels without shared memory are always
/// blocked, and so is a chain that gives up waiting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CholeskySchedule {
    /// Blocked (software renderers keep it; GPUs take [`GPU_CHOLESKY_SCHEDULE`]).
    #[default]
    Blocked,
    /// One chained launch wherever it can run.
    Chain,
    /// Per outer block column one chained launch for the panel [B11; B21] and one trailing
    /// product of the outer rank (two dependent launches per outer block).
    Panels,
    /// The chain up to order [`CHAIN_AUTO_ORDER`], blocked above.
    Auto,
    /// Split in halves as LAPACK spftrf splits RFP, recursively: L11 by the chained launch
    /// where the half is at most [`TiledKernels::split_chain_order`](super::TiledKernels::split_chain_order),
    /// L21 by products with its inverted diagonal tiles, the trailing half updated by one
    /// lower-tile product, then factored the same way ([`super::cholesky::split`]).
    Split,
}

/// The largest order [`CholeskySchedule::Auto`] chains: the chain leads the blocked factor
/// from 1024 to 4096 (`figures/h200/experiments/cholesky_chain.txt`).
pub const CHAIN_AUTO_ORDER: usize = 4096;

/// The largest order [`CholeskySchedule::Auto`] factors by chained panels: none beyond the
/// chain's: at 8192 the panels of tiles of 64 only tie the blocked factor, and at 16384 the
/// blocked factor (RFP) leads (`figures/h200/experiments/cholesky_chain.txt`).
pub const PANELS_AUTO_ORDER: usize = CHAIN_AUTO_ORDER;

/// The largest half [`CholeskySchedule::Split`] factors by one chained launch where the tuning
/// names none ([`TiledTuning::split_chain_order`](super::TiledTuning::split_chain_order)): the chain's
/// best order measured ([`CHAIN_AUTO_ORDER`]).
pub const SPLIT_CHAIN_ORDER: usize = CHAIN_AUTO_ORDER;

/// The chained panels' width under [`CholeskySchedule::Auto`] where the tuning sets no outer
/// block (at 8192 panels of 512 columns were slower than the blocked factor, of 1024 about
/// even; measured in docs/results.md).
pub const PANELS_AUTO_OUTER: usize = 1024;

/// The Cholesky's schedule on GPUs where the tuning names none (software renderers keep
/// [`CholeskySchedule::Blocked`]): one line to revert to Blocked, or to take
/// [`CholeskySchedule::Split`] (the chain up to its order, halves above, RFP's too) where
/// `scripts/bench cholesky_split` on the H200 favours it.
pub const GPU_CHOLESKY_SCHEDULE: CholeskySchedule = CholeskySchedule::Auto;

impl CholeskySchedule {
    /// Every schedule, for sweeps.
    pub const ALL: [CholeskySchedule; 5] = [
        CholeskySchedule::Blocked,
        CholeskySchedule::Chain,
        CholeskySchedule::Panels,
        CholeskySchedule::Auto,
        CholeskySchedule::Split,
    ];

    /// A short name for reports, benchmark labels and parsing.
    pub fn name(self) -> &'static str {
        match self {
            CholeskySchedule::Blocked => "blocked",
            CholeskySchedule::Chain => "chain",
            CholeskySchedule::Panels => "panels",
            CholeskySchedule::Auto => "auto",
            CholeskySchedule::Split => "split",
        }
    }

    /// The schedule named `name` ([`CholeskySchedule::name`]).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name.trim())
    }

    /// The schedule a matrix of order `m` runs with: Auto resolved to Chain up to
    /// [`CHAIN_AUTO_ORDER`], Split above (full storage; RFP stays blocked under Auto: the split
    /// RFP is slower than the blocked one, `figures/h200/experiments/cholesky_split.txt`).
    pub fn resolve(self, m: usize) -> CholeskySchedule {
        match self {
            CholeskySchedule::Auto if m <= CHAIN_AUTO_ORDER => CholeskySchedule::Chain,
            CholeskySchedule::Auto if m <= PANELS_AUTO_ORDER => CholeskySchedule::Panels,
            CholeskySchedule::Auto => CholeskySchedule::Split,
            s => s,
        }
    }
}

/// How the chained Cholesky's waiting invocation polls a tile's ready flag
/// (`glsl/tiled/potrf_chain.comp`, issue 25: the polls lie on the chain's critical path, a
/// few per diagonal step).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChainPoll {
    /// An atomic read (atomicOr 0) of the flag and of the gave-up word every poll, and the flag
    /// read once more after the loop (the first way; on NVIDIA each RMW goes to L2).
    Atomic,
    /// The flag by atomic read, the gave-up word every [`CHAIN_GAVE_UP_EVERY`] polls, no read
    /// after the loop (the last poll's value decides).
    Sparse,
    /// The flag by a plain load of a `volatile coherent` view of the same buffer (no RMW), the
    /// gave-up word as in [`ChainPoll::Sparse`].
    #[default]
    Load,
}

/// How many later terms the chained Cholesky checks at once after each wait
/// ([`TiledTuning::chain_ahead`](super::TiledTuning::chain_ahead)'s default; issue 25): a tile whose
/// earlier terms are long published then waits once per run of up to this many instead of
/// twice per term, which shortens the chain's critical path
/// (`figures/h200/experiments/chain_ahead.csv`).
pub const CHAIN_AHEAD: usize = 32;

/// The largest [`CHAIN_AHEAD`]-style look-ahead a chain takes (one flag per invocation, two
/// per term off the diagonal: at most half its work group).
pub const CHAIN_AHEAD_MAX: usize = 64;

/// Polls between reads of the chain's gave-up word under [`ChainPoll::Sparse`] and
/// [`ChainPoll::Load`] (a chain that gave up is then noticed at most this many polls late).
pub const CHAIN_GAVE_UP_EVERY: u32 = 32;

impl ChainPoll {
    /// Every way, for sweeps.
    pub const ALL: [ChainPoll; 3] = [ChainPoll::Atomic, ChainPoll::Sparse, ChainPoll::Load];

    /// A short name for benchmark labels and parsing.
    pub fn name(self) -> &'static str {
        match self {
            ChainPoll::Atomic => "atomic",
            ChainPoll::Sparse => "sparse",
            ChainPoll::Load => "load",
        }
    }

    /// The way named `name` ([`ChainPoll::name`]).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name.trim())
    }

    /// The shader's CHAIN_POLL value (0, 1, 2 in the order above).
    pub fn define(self) -> u8 {
        self as u8
    }
}

/// How the split Cholesky ([`CholeskySchedule::Split`]) solves L21 = B21·L11⁻ᵀ below a
/// chained leaf ([`super::trsm_wide`], [`super::trsm_wide::rows`]); the default
/// [`SplitSolve::DEFAULT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitSolve {
    /// Products with the diag-order inverted tiles the chain left, inner blocks of the diag
    /// order inside outer blocks of the outer width
    /// ([`trsm_inverted`](super::cholesky::trsm_inverted); about 130 launches for
    /// 4096 × 4096).
    Tiles,
    /// MAGMA's trsm: every diagonal block of `block` (32, 64 or
    /// [`SOLVE_BLOCK`](super::schedule::SOLVE_BLOCK)) inverted in one launch
    /// (glsl/tiled/trtri_blocks.comp), then per outer block column of `width` one product
    /// with the columns left of it (`left`) or of the columns right of it with it
    /// (right-looking), and inside it products with the inverses.
    Blocks {
        /// The inverted diagonal blocks' order.
        block: usize,
        /// The outer block columns' width (rounded up to whole inverted blocks).
        width: usize,
        /// Left-looking (each outer block updated once, from all columns left of it) or
        /// right-looking (each outer block, once solved, updates all columns right of it).
        left: bool,
    },
    /// The diagonal blocks of order `block` inverted in one launch, then per outer block
    /// column of `width` one launch whose work groups each solve `rows` rows through all of it
    /// (glsl/tiled/trsm_rows.comp) and one product with the columns right of it, L halved
    /// while wider than `leaf` ([`super::trsm_wide::rows`]).
    Rows {
        /// The outer block columns' width (rounded up to whole diagonal blocks).
        width: usize,
        /// Rows of x per work group (a multiple of 4 from 4 to 64).
        rows: usize,
        /// L halved while wider than this (at least `width`): X2 ← X2 − X1·L21ᵀ as one deep
        /// product between the halves' solves.
        leaf: usize,
        /// The order of the inverted diagonal blocks (32 or 64; the kernel's stages), apart
        /// from the chain's tiles.
        block: usize,
    },
}

impl Default for SplitSolve {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SplitSolve {
    /// The default: by rows, outer blocks of 512, 32 rows per work group, L halved down to
    /// 2048: faster than unhalved and than the tiles (`figures/h200/experiments/row_solve.csv`).
    /// Kernels that cannot solve by rows take the tiles.
    pub const DEFAULT: SplitSolve = SplitSolve::Rows {
        width: 512,
        rows: 32,
        leaf: 2048,
        block: 64,
    };

    /// A short name for benchmark labels and parsing: `tiles`, `l<width>`, `r<width>`
    /// (blocks of 128), `l<width>b<block>`, `r<width>b<block>`,
    /// `rows<width>x<rows>l<leaf>b<block>` (parsed with `b64` where left out).
    pub fn name(self) -> String {
        match self {
            SplitSolve::Tiles => "tiles".to_string(),
            SplitSolve::Blocks { block, width, left } => {
                let side = if left { 'l' } else { 'r' };
                match block == super::schedule::SOLVE_BLOCK {
                    true => format!("{side}{width}"),
                    false => format!("{side}{width}b{block}"),
                }
            }
            SplitSolve::Rows {
                width,
                rows,
                leaf,
                block,
            } => format!("rows{width}x{rows}l{leaf}b{block}"),
        }
    }

    /// The solve named `name` ([`SplitSolve::name`]; a width of 1 to 65536, blocks of 32,
    /// 64 or 128).
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        if name == "tiles" {
            return Some(SplitSolve::Tiles);
        }
        if let Some(rest) = name.strip_prefix("rows") {
            let (width, rest) = rest.split_once('x')?;
            let (rows, rest) = rest.split_once('l')?;
            let (leaf, block) = rest.split_once('b').unwrap_or((rest, "64"));
            let (width, rows) = (width.parse().ok()?, rows.parse().ok()?);
            let (leaf, block) = (leaf.parse().ok()?, block.parse().ok()?);
            return ((1..=65536).contains(&width)
                && rows % 4 == 0
                && (4..=64).contains(&rows)
                && (1..=1 << 20).contains(&leaf)
                && [32, 64].contains(&block))
            .then_some(SplitSolve::Rows {
                width,
                rows,
                leaf,
                block,
            });
        }
        let left = match name.chars().next()? {
            'l' => true,
            'r' => false,
            _ => return None,
        };
        let (width, block) = match name[1..].split_once('b') {
            Some((w, b)) => (w.parse().ok()?, b.parse().ok()?),
            None => (name[1..].parse().ok()?, super::schedule::SOLVE_BLOCK),
        };
        ((1..=65536).contains(&width) && [32, 64, super::schedule::SOLVE_BLOCK].contains(&block))
            .then_some(SplitSolve::Blocks { block, width, left })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_by_name_and_chain_as_they_say() {
        for s in CholeskySchedule::ALL {
            assert_eq!(CholeskySchedule::parse(s.name()), Some(s));
        }
        assert_eq!(CholeskySchedule::parse("chained"), None);
        assert_eq!(CholeskySchedule::default(), CholeskySchedule::Blocked);
        use CholeskySchedule::*;
        assert_eq!(Blocked.resolve(64), Blocked);
        assert_eq!((Chain.resolve(1 << 20), Panels.resolve(1 << 20)), (Chain, Panels));
        assert_eq!(Auto.resolve(CHAIN_AUTO_ORDER), Chain);
        assert_eq!(Auto.resolve(CHAIN_AUTO_ORDER + 1), Split);
        assert_eq!(Auto.resolve(8192), Split);
        assert_eq!(Split.resolve(1 << 20), Split);
        assert_eq!(CholeskySchedule::parse("split"), Some(Split));
    }
}
