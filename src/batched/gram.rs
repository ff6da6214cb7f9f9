//! The assembly as a launch of its own (issue 28, [`super::plan::AssemblyPass::Separate`]):
//! `glsl/batched/gram.comp` forms every problem's C = A·diag(d)·Aᵀ (and g = A·diag(d)·b for
//! the least squares) in register tiles, a few invocations per tile along the observations,
//! into a work buffer that the job's kernel reads instead of assembling on chip. Its shape
//! (tile order, lanes per tile) is a typed choice with defaults here.

use crate::error::{InputError, Result};

/// The tile orders the separate assembly takes (sums per invocation: the order squared).
pub const TILE_CHOICES: [usize; 3] = [2, 4, 8];

/// The invocations per tile it takes (a power of two at most a subgroup's 32).
pub const LANE_CHOICES: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Invocations per work group of the separate assembly.
pub const GROUP: usize = 128;

/// Observations per staged step of the staged shape (KS in the kernel).
pub const STAGED_OBSERVATIONS: usize = 16;

/// The most invocations a work group runs (GL's least GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS):
/// the staged shape's tiles of one problem.
pub const MAX_GROUP: usize = 1024;

/// How the separate assembly deals out the triangle: `tile` x `tile` sums per invocation,
/// `lanes` invocations per tile, each taking every `lanes`-th load of the observations; or,
/// `staged`, one work group per problem with tiles of 4, one invocation each, reading A's
/// observations staged in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GramShape {
    /// The tile's order (one of [`TILE_CHOICES`]).
    pub tile: usize,
    /// Invocations per tile (one of [`LANE_CHOICES`]).
    pub lanes: usize,
    /// One work group per problem, A staged in shared memory (tiles of 4, one lane).
    pub staged: bool,
}

impl GramShape {
    /// The shape for order n unless told otherwise: tiles of 4 (of 8 past n = 64, so each
    /// row read serves eight products), 4 lanes per tile.
    pub fn default_for(n: usize) -> Self {
        Self {
            tile: if n > 64 { 8 } else { 4 },
            lanes: 4,
            staged: false,
        }
    }

    /// The staged shape: one work group per problem, tiles of 4.
    pub const STAGED: Self = Self {
        tile: 4,
        lanes: 1,
        staged: true,
    };

    /// Whether the shape runs order n (the staged one: a problem's tiles in one group).
    pub fn fits(&self, n: usize, rhs: bool) -> bool {
        !self.staged || self.tiles(n, rhs) <= MAX_GROUP
    }

    /// `tile` and `lanes` if both are among the choices, else [`InputError::InvalidOption`].
    pub fn new(tile: usize, lanes: usize) -> Result<Self> {
        if TILE_CHOICES.contains(&tile) && LANE_CHOICES.contains(&lanes) {
            return Ok(Self {
                tile,
                lanes,
                staged: false,
            });
        }
        Err(InputError::InvalidOption(format!(
            "the separate assembly takes tiles of {TILE_CHOICES:?} and {LANE_CHOICES:?} \
             invocations per tile, not tiles of {tile} with {lanes}"
        ))
        .into())
    }

    /// Tiles per problem at order n (the triangle of n + 1 rows where `rhs`: g's row).
    pub fn tiles(&self, n: usize, rhs: bool) -> usize {
        let rows = (n + usize::from(rhs)).div_ceil(self.tile);
        rows * (rows + 1) / 2
    }

    /// Invocations per problem (the staged shape: its group).
    pub fn invocations(&self, n: usize, rhs: bool) -> usize {
        if self.staged {
            return self.tiles(n, rhs).next_multiple_of(32);
        }
        self.tiles(n, rhs) * self.lanes
    }

    /// Work groups for `problems` problems.
    pub fn groups(&self, n: usize, rhs: bool, f64: bool, problems: usize) -> usize {
        if self.staged {
            return problems;
        }
        (problems * self.invocations(n, rhs)).div_ceil(self.group(n, rhs, f64))
    }

    /// Work group size: [`GROUP`], less where the lanes add their parts through shared
    /// memory and they would pass 16 KiB (tiles of 8: 64 sums each, 8 bytes each in f64), well
    /// within GL's least 32 KiB.
    /// The staged shape's group is one problem's tiles, rounded up to 32.
    pub fn group(&self, n: usize, rhs: bool, f64: bool) -> usize {
        if self.staged {
            return self.invocations(n, rhs);
        }
        let bytes = if f64 { 8 } else { 4 } * self.tile * self.tile;
        let mut group = GROUP;
        while self.lanes > 1 && group > self.lanes.max(32) && group * bytes > 16 << 10 {
            group /= 2;
        }
        group
    }

    /// Loop iterations of one invocation with k observations (llvmpipe's loop budget).
    pub fn loop_iterations(&self, k: usize) -> usize {
        if self.staged {
            // Per staged step: the staging loop (a few values each), the products.
            return k.div_ceil(STAGED_OBSERVATIONS) * (8 + STAGED_OBSERVATIONS * 17) + 40;
        }
        k.div_ceil(self.lanes) + 4 * self.tile * self.tile + 8
    }

    /// The `#define`s in front of `gram.comp` (after `#version`) for order n with k
    /// observations; `rhs` where g is formed too.
    /// `f64` where C and g are formed in f64.
    pub fn defines(&self, n: usize, k: usize, rhs: bool, f64: bool) -> String {
        let mut text = format!(
            "#define N {n}\n#define TB {}\n#define KL {}\n#define WG {}\n",
            self.tile,
            self.lanes,
            self.group(n, rhs, f64)
        );
        if rhs {
            text.push_str("#define RHS\n");
        }
        if f64 {
            text.push_str("#define F64\n");
        }
        if self.staged {
            text.push_str(&format!(
                "#define STAGED\n#define KS {STAGED_OBSERVATIONS}\n"
            ));
        } else if k.is_multiple_of(4) {
            // Rows 16-byte aligned: one vec4 load per four observations.
            text.push_str("#define V4\n");
        }
        text
    }

    /// Floats per problem of the gram buffer: C's packed triangle, then g's n.
    pub fn floats(n: usize) -> usize {
        n * (n + 1) / 2 + n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_count_tiles_and_name_their_defines() {
        let s = GramShape::new(4, 8).unwrap();
        // n = 32 with g: 33 rows, 9 tile rows, 45 tiles.
        assert_eq!(s.tiles(32, true), 45);
        assert_eq!(s.tiles(32, false), 36);
        assert_eq!(s.invocations(32, true), 360);
        assert_eq!(GramShape::new(8, 1).unwrap().tiles(128, true), 153);
        assert!(GramShape::new(3, 4).is_err());
        assert!(GramShape::new(4, 3).is_err());
        let d = s.defines(32, 64, true, false);
        assert!(d.contains("#define N 32\n#define TB 4\n#define KL 8\n#define WG 128\n"));
        assert!(d.contains("#define RHS\n") && d.contains("#define V4\n"));
        assert!(!s.defines(32, 66, false, false).contains("V4"));
        assert!(s.defines(32, 64, true, true).contains("#define F64\n"));
        // Tiles of 8 with lanes add 64 sums each through shared memory: a half group in f32,
        // a quarter in f64 (16 KiB).
        assert_eq!(GramShape::new(8, 4).unwrap().group(32, true, false), 64);
        assert_eq!(GramShape::new(8, 4).unwrap().group(32, true, true), 32);
        assert_eq!(GramShape::new(4, 8).unwrap().group(32, true, true), GROUP);
        assert_eq!(GramShape::new(8, 1).unwrap().group(32, true, true), GROUP);
        // The staged shape: a problem per group, its 561 tiles at n = 128 (576 invocations).
        let st = GramShape::STAGED;
        assert_eq!(st.tiles(128, true), 561);
        assert_eq!(st.group(128, true, true), 576);
        assert_eq!(st.groups(128, true, true, 7), 7);
        assert!(st.fits(128, true) && !st.fits(200, true));
        let d = st.defines(128, 256, true, true);
        assert!(
            d.contains("#define STAGED\n#define KS 16\n") && !d.contains("V4"),
            "{d}"
        );
        assert_eq!(GramShape::floats(3), 9);
    }
}
