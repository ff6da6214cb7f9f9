//! Plans: the passes of a run, in order, over one shared vertex list.

use super::Vertex;
use std::ops::Range;

/// The fragment kernels, named as in the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Kernel 1: b(i) = A(i, k) d(k).
    ColumnScaling,
    /// Kernel 2: C_T = C_S + A(i, k) b(j).
    OuterProductAddition,
    /// Kernel 3: square root of the pivot.
    SquareRoot,
    /// Kernel 4: division of the column below the pivot by the pivot.
    Normalization,
    /// Kernel 5: L_T = L_S − neighbour × pivot.
    OuterProductSubtraction,
    /// Copy of the target's pixels back into the source (Algorithm 5).
    Copy,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 6] = [
        Kernel::ColumnScaling,
        Kernel::OuterProductAddition,
        Kernel::SquareRoot,
        Kernel::Normalization,
        Kernel::OuterProductSubtraction,
        Kernel::Copy,
    ];

    /// The name used in the paper and in status lines.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::ColumnScaling => "column scaling",
            Kernel::OuterProductAddition => "outer-product addition",
            Kernel::SquareRoot => "square root",
            Kernel::Normalization => "normalization",
            Kernel::OuterProductSubtraction => "outer-product subtraction",
            Kernel::Copy => "copy",
        }
    }

    /// The texture the kernel draws into by default (a plan may direct a copy elsewhere).
    pub fn target(self) -> Target {
        match self {
            Kernel::ColumnScaling => Target::ScaledColumn,
            Kernel::Copy => Target::Source,
            _ => Target::Target,
        }
    }
}

/// The texture a pass renders into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The m x 1 texture b of Algorithm 3.
    ScaledColumn,
    /// The ping-pong target (C_T, L_T).
    Target,
    /// The ping-pong source (C_S, L_S): only copies write it.
    Source,
}

impl Target {
    /// Where a pass into this target reads the ping-pong pair: the other texture of it.
    pub fn reads(self) -> Target {
        match self {
            Target::Source => Target::Target,
            _ => Target::Source,
        }
    }
}

/// One draw: a kernel over a range of the plan's vertices, at step `step`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    /// The kernel run by the fragments.
    pub kernel: Kernel,
    /// The texture drawn into; kernels that read the pair read the other texture of it.
    pub target: Target,
    /// The algorithm's step k (the matrix column, 0-based).
    pub step: usize,
    /// Viewport (width, height) in pixels.
    pub viewport: (usize, usize),
    /// The vertices drawn, as triangles.
    pub vertices: Range<usize>,
    /// Whether the ping-pong pair swaps after this pass.
    pub swap_after: bool,
}

/// A whole run: vertices uploaded once, passes drawn in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Every pass's vertices, back to back.
    pub vertices: Vec<Vertex>,
    /// The passes in order.
    pub passes: Vec<Pass>,
}

impl Plan {
    /// Appends a pass drawing `vertices` into the kernel's default target.
    pub fn push(
        &mut self,
        kernel: Kernel,
        step: usize,
        viewport: (usize, usize),
        vertices: &[Vertex],
    ) {
        self.push_into(kernel, kernel.target(), step, viewport, vertices);
    }

    /// Appends a pass drawing `vertices` into `target`.
    pub fn push_into(
        &mut self,
        kernel: Kernel,
        target: Target,
        step: usize,
        viewport: (usize, usize),
        vertices: &[Vertex],
    ) {
        let start = self.vertices.len();
        self.vertices.extend_from_slice(vertices);
        self.passes.push(Pass {
            kernel,
            target,
            step,
            viewport,
            vertices: start..self.vertices.len(),
            swap_after: false,
        });
    }

    /// Appends a copy pass over the same pixels as the last pass (Algorithm 5's copy back).
    pub fn push_copy_of_last(&mut self) {
        let last = self.passes.last().expect("a copy follows a pass").clone();
        self.passes.push(Pass {
            kernel: Kernel::Copy,
            target: Target::Source,
            swap_after: false,
            ..last
        });
    }

    /// Marks the last pass as followed by a swap of the ping-pong pair.
    pub fn swap_after_last(&mut self) {
        self.passes
            .last_mut()
            .expect("a swap follows a pass")
            .swap_after = true;
    }

    /// The vertices a pass draws.
    pub fn vertices_of(&self, pass: &Pass) -> &[Vertex] {
        &self.vertices[pass.vertices.clone()]
    }
}
