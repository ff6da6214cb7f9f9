//! The general inverses' rank-b updates at memory speed (issue 26): C ← β·C + α·X·Y with C,
//! X and Y row-major blocks (unit column stride), read and written row by row in one launch
//! (glsl/inverse/rank_update.comp: X's and Y's slices staged in shared memory once per work
//! group, each C entry read and written once, vec4 where aligned). The Gauss-Jordan block
//! update ([`crate::inverse::gje::block_update`]) takes its rows above and below the panel, with their
//! two Y's, in one such launch; the LU's trailing update ([`super::panel::update_right`]) one
//! more. [`BlockUpdate::Products`] keeps the tiled product kernel's three products per block
//! (the earlier path), for comparison.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::inverse::Inverter;
use crate::error::{Error, Result};
use crate::gl::{ComputeProgram, Uniform};
use crate::tiled::{Operand, Update};

/// The deepest update the rank kernel takes (its depth loop stays far inside llvmpipe's loop
/// budget); deeper ones go to the tiled product.
pub const RANK_MAX_DEPTH: usize = 256;

/// How the general inverses apply a block's rank-b updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockUpdate {
    /// The tiled product kernel (Gauss-Jordan: three products per block; the earlier path).
    Products,
    /// The rank kernel, its tile chosen by the update's size ([`RankTile::for_size`]).
    Rank,
    /// The rank kernel with 64 x 64 tiles always.
    Rank64,
    /// The rank kernel with 128 x 128 tiles always.
    Rank128,
    /// The rank kernel with 64 x 64 tiles below depth [`MIXED_PRODUCT_DEPTH`], the tiled
    /// product from there on (deeper updates run faster per flop on packed panels).
    Mixed,
}

/// The least depth [`BlockUpdate::Mixed`] gives the tiled product.
pub const MIXED_PRODUCT_DEPTH: usize = 128;

impl BlockUpdate {
    /// Every choice, in the order of the examples' flags.
    pub const ALL: [BlockUpdate; 5] = [
        BlockUpdate::Products,
        BlockUpdate::Rank,
        BlockUpdate::Rank64,
        BlockUpdate::Rank128,
        BlockUpdate::Mixed,
    ];

    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            BlockUpdate::Products => "products",
            BlockUpdate::Rank => "rank",
            BlockUpdate::Rank64 => "rank64",
            BlockUpdate::Rank128 => "rank128",
            BlockUpdate::Mixed => "mixed",
        }
    }

    /// The choice named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|u| u.name() == name)
    }

    /// The rank kernel's tile for a rows x cols update of `depth`, or `None` where the tiled
    /// product runs it (this choice, or a depth beyond [`RANK_MAX_DEPTH`]).
    pub fn tile(self, rows: usize, cols: usize, depth: usize) -> Option<RankTile> {
        if depth > RANK_MAX_DEPTH {
            return None;
        }
        match self {
            BlockUpdate::Products => None,
            BlockUpdate::Rank => Some(RankTile::for_size(rows, cols)),
            BlockUpdate::Rank64 => Some(RankTile::Small),
            BlockUpdate::Rank128 => Some(RankTile::Large),
            BlockUpdate::Mixed => (depth < MIXED_PRODUCT_DEPTH).then_some(RankTile::Small),
        }
    }
}

/// The rank kernel's output tile per work group of 16 x 16 invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RankTile {
    /// 64 x 64 (4 x 4 per invocation): more work groups for small updates.
    Small,
    /// 128 x 128 (8 x 8 per invocation): half the shared-memory reads per flop.
    Large,
}

/// Work groups of large tiles below which the small ones are taken: two per streaming
/// multiprocessor of a large GPU (about 130 of them).
const LARGE_TILES_MIN: usize = 256;

impl RankTile {
    /// Large tiles where they still give [`LARGE_TILES_MIN`] work groups, else small ones.
    pub fn for_size(rows: usize, cols: usize) -> Self {
        if rows.div_ceil(128) * cols.div_ceil(128) >= LARGE_TILES_MIN {
            RankTile::Large
        } else {
            RankTile::Small
        }
    }

    /// Outputs per invocation along each side.
    fn per_invocation(self) -> usize {
        match self {
            RankTile::Small => 4,
            RankTile::Large => 8,
        }
    }

    /// Outputs per work group along each side.
    pub fn side(self) -> usize {
        16 * self.per_invocation()
    }
}

/// C ← β·C + α·X·Y (α, β from `update`) over row-major views: C rows x cols, X rows x depth,
/// Y depth x cols. With `below = Some((split, view))` the rows of C and X from `split` on
/// take `view` (of Y's buffer, Y's shape) in place of Y.
#[derive(Clone, Copy)]
pub struct RankProduct<'a> {
    /// The updated block.
    pub c: Operand<'a>,
    /// The left factor.
    pub x: Operand<'a>,
    /// The right factor (of the rows before the split).
    pub y: Operand<'a>,
    /// The split row and the right factor of the rows from it on.
    pub below: Option<(usize, crate::tiled::View)>,
    /// How C is updated.
    pub update: Update,
}

/// How the rank kernel walks the depth (glsl/inverse/rank_update.comp), for every tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RankVariant {
    /// The depth of X's and Y's slices staged in shared memory at a time (8, 16, 32 or 64;
    /// less where the device's shared memory would not hold them).
    pub depth_slice: usize,
    /// Whether each invocation reads its entries of C before the depth loop (their latency
    /// behind the products) instead of after it.
    pub c_first: bool,
    /// Whether the next slice of X and Y is read into registers while the current one is
    /// multiplied (aligned views; one barrier more per slice).
    pub prefetch: bool,
}

impl Default for RankVariant {
    fn default() -> Self {
        Self {
            depth_slice: 16,
            c_first: false,
            prefetch: false,
        }
    }
}

impl RankVariant {
    /// Parses "depth_slice:c_first[:prefetch]" (e.g. "16:0:1"); `None` when it is no variant.
    pub fn parse(text: &str) -> Option<Self> {
        let fields: Vec<&str> = text.split(':').map(str::trim).collect();
        let flag = |f: &str| match f {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        };
        let (d, c, p) = match fields[..] {
            [d, c] => (d, c, "0"),
            [d, c, p] => (d, c, p),
            _ => return None,
        };
        Some(Self {
            depth_slice: d.parse().ok().filter(|d| [8, 16, 32, 64].contains(d))?,
            c_first: flag(c)?,
            prefetch: flag(p)?,
        })
    }

    /// The text [`RankVariant::parse`] reads.
    pub fn name(self) -> String {
        let flag = |b: bool| u8::from(b);
        format!("{}:{}:{}", self.depth_slice, flag(self.c_first), flag(self.prefetch))
    }

    /// The slice depth `tile` takes within `max_shared` bytes of shared memory: this
    /// variant's, halved while X's and Y's slices (one padding vec4 a k-row of X's) exceed it.
    fn depth_slice(self, tile: RankTile, max_shared: usize) -> usize {
        let vec4s = tile.side() / 4;
        let bytes = |kc: usize| kc * (2 * vec4s + 1) * 16;
        let mut kc = self.depth_slice;
        while kc > 8 && bytes(kc) > max_shared {
            kc /= 2;
        }
        kc
    }
}

/// The rank kernel's programs (by tile, vec4 and variant), compiled on first use.
#[derive(Default)]
pub struct RankPrograms {
    programs: RefCell<HashMap<(RankTile, bool, RankVariant), Rc<ComputeProgram>>>,
}

impl RankPrograms {
    /// The program of `tile` and `variant`, reading fours where `vec4`.
    fn get(
        &self,
        inv: &Inverter,
        tile: RankTile,
        vec4: bool,
        variant: RankVariant,
    ) -> Result<Rc<ComputeProgram>> {
        let key = (tile, vec4, variant);
        if let Some(p) = self.programs.borrow().get(&key) {
            return Ok(Rc::clone(p));
        }
        let kernel = &crate::inverse::table::RANK_UPDATE;
        let m = tile.per_invocation();
        let kc = variant.depth_slice(tile, inv.tiled().limits().max_shared_bytes as usize);
        let (c_first, prefetch) = (u8::from(variant.c_first), u8::from(variant.prefetch));
        let defines = format!(
            "#version 430\n#define TM {m}\n#define TN {m}\n#define VEC4 {}\n\
             #define DEPTH_SLICE {kc}\n#define C_FIRST {c_first}\n#define PREFETCH {prefetch}\n",
            u8::from(vec4)
        );
        let name = format!(
            "{m}x{m} per invocation, VEC4 {}, slices of {kc}, C first {c_first}, prefetch {prefetch}",
            u8::from(vec4)
        );
        let p = Rc::new(ComputeProgram::new(
            inv.context(),
            kernel,
            &name,
            &format!("{defines}{}", kernel.source),
        )?);
        self.programs.borrow_mut().insert(key, Rc::clone(&p));
        Ok(p)
    }
}

/// Runs `p` with the rank kernel's `tile` (one launch, more only where its row tiles outnumber
/// the device's work-group count along y).
pub fn rank_update(inv: &Inverter, p: RankProduct<'_>, tile: RankTile) -> Result<()> {
    rank_launch(inv, p, tile, true)
}

/// [`rank_update`], its last launch without the barrier after it where not `fenced` (the
/// caller orders what reads its writes).
pub fn rank_launch(inv: &Inverter, p: RankProduct<'_>, tile: RankTile, fenced: bool) -> Result<()> {
    let (cv, xv, yv) = (p.c.view, p.x.view, p.y.view);
    let (rows, cols, depth) = (cv.rows, cv.cols, xv.cols);
    let (split, y2) = p.below.unwrap_or((rows, yv));
    let row_major = [cv, xv, yv, y2].iter().all(|v| v.cs == 1 || v.cols <= 1) && y2.rs == yv.rs;
    if xv.rows != rows || yv.rows != depth || yv.cols != cols || (y2.rows, y2.cols) != (depth, cols)
    {
        return Err(Error::shape(format!(
            "a rank update of {rows}x{cols} by {}x{depth} times {}x{}",
            xv.rows, yv.rows, yv.cols
        )));
    }
    if !row_major || split > rows {
        return Err(Error::shape(
            "the rank update takes row-major blocks (unit column stride) and a split inside C",
        ));
    }
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let (alpha, beta) = p.update.alpha_beta();
    let fours = |v: usize| v.is_multiple_of(4);
    let vec4 = [
        cv.offset, cv.rs, xv.offset, xv.rs, yv.offset, y2.offset, yv.rs, cols, depth,
    ]
    .into_iter()
    .all(fours);
    let program = inv.rank_programs().get(inv, tile, vec4, inv.rank_variant())?;
    p.c.buffer.bind_base(0);
    p.x.buffer.bind_base(1);
    p.y.buffer.bind_base(2);
    let u = |v: usize| Uniform::U32(v as u32);
    program.set_all(&[
        ("rows", u(rows)),
        ("cols", u(cols)),
        ("depth", u(depth)),
        ("split", u(split)),
        ("c_off", u(cv.offset)),
        ("c_ld", u(cv.rs)),
        ("x_off", u(xv.offset)),
        ("x_ld", u(xv.rs)),
        ("y_off", u(yv.offset)),
        ("y_off2", u(y2.offset)),
        ("y_ld", u(yv.rs)),
        ("alpha", Uniform::F32(alpha)),
        ("beta", Uniform::F32(beta)),
    ])?;
    let side = tile.side();
    let row_tiles = split.div_ceil(side) + (rows - split).div_ceil(side);
    program.dispatch_rows_fenced(cols.div_ceil(side) as u32, row_tiles, "row_base", fenced)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_their_names_and_refuse_others() {
        let v = RankVariant::parse("32:1").unwrap();
        assert_eq!((v.depth_slice, v.c_first, v.prefetch), (32, true, false));
        assert_eq!(RankVariant::parse(&v.name()), Some(v));
        assert_eq!(RankVariant::parse("16:0:0"), Some(RankVariant::default()));
        for bad in ["", "16", "12:0", "16:2", "16:0:1:0", "x:0"] {
            assert_eq!(RankVariant::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_slice_too_deep_for_shared_memory_is_halved() {
        let v = RankVariant::parse("64:0").unwrap();
        // 64 x 64 tiles: 64 k-rows of 33 vec4s = 33 KiB; 128 x 128: 66 KiB.
        assert_eq!(v.depth_slice(RankTile::Small, 48 * 1024), 64);
        assert_eq!(v.depth_slice(RankTile::Small, 32 * 1024), 32);
        assert_eq!(v.depth_slice(RankTile::Large, 48 * 1024), 32);
        assert_eq!(v.depth_slice(RankTile::Large, 32 * 1024), 16);
    }
}
