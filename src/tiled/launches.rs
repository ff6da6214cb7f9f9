//! What the tiled kernels launched, by kind: the dependent dispatches of a factorization are
//! its time on GPUs where each costs microseconds
//! (`figures/h200/experiments/cholesky_dispatch_profile.txt`), so the
//! benchmark prints them per kind ([`LaunchCounts`]), also without running them (a dry run).

use std::fmt;

/// The kind of work a launch does, as the caller declared it
/// ([`TiledKernels::set_launch_kind`](super::TiledKernels::set_launch_kind)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchKind {
    /// Factoring (and inverting) a diagonal block on its own.
    DiagonalBlock,
    /// The panel below a diagonal block: a product with its inverse, or a substitution.
    PanelSolve,
    /// An update inside an outer block column (with the next diagonal block factored in the
    /// same launch where the kernels fuse them).
    InnerUpdate,
    /// The update of the trailing matrix after an outer block column.
    TrailingUpdate,
    /// Copies: operands packed for a product.
    Copy,
    /// Anything not declared.
    Other,
}

impl LaunchKind {
    /// Every kind, in the order [`LaunchCounts`] holds them.
    pub const ALL: [LaunchKind; 6] = [
        LaunchKind::DiagonalBlock,
        LaunchKind::PanelSolve,
        LaunchKind::InnerUpdate,
        LaunchKind::TrailingUpdate,
        LaunchKind::Copy,
        LaunchKind::Other,
    ];

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            LaunchKind::DiagonalBlock => "diagonal",
            LaunchKind::PanelSolve => "panel",
            LaunchKind::InnerUpdate => "inner update",
            LaunchKind::TrailingUpdate => "trailing update",
            LaunchKind::Copy => "copy",
            LaunchKind::Other => "other",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|&k| k == self).unwrap_or(5)
    }
}

/// Launches per [`LaunchKind`]: the difference of two readings is what an operation cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchCounts([u64; 6]);

impl LaunchCounts {
    /// One more launch of `kind`.
    pub fn add(&mut self, kind: LaunchKind) {
        self.0[kind.index()] += 1;
    }

    /// The launches of `kind`.
    pub fn of(&self, kind: LaunchKind) -> u64 {
        self.0[kind.index()]
    }

    /// All launches.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The launches since `earlier` (a reading of the same kernels).
    pub fn since(&self, earlier: &LaunchCounts) -> LaunchCounts {
        LaunchCounts(std::array::from_fn(|i| {
            self.0[i].saturating_sub(earlier.0[i])
        }))
    }
}

impl fmt::Display for LaunchCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} launches (", self.total())?;
        for (i, kind) in LaunchKind::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} {}", kind.name(), self.of(*kind))?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_per_kind_and_subtract() {
        let mut c = LaunchCounts::default();
        c.add(LaunchKind::PanelSolve);
        let before = c;
        c.add(LaunchKind::PanelSolve);
        c.add(LaunchKind::Copy);
        let d = c.since(&before);
        assert_eq!((d.of(LaunchKind::PanelSolve), d.of(LaunchKind::Copy)), (1, 1));
        assert_eq!((c.total(), d.total()), (3, 2));
        assert_eq!(
            d.to_string(),
            "2 launches (diagonal 0, panel 1, inner update 0, trailing update 0, copy 1, other 0)"
        );
    }
}
