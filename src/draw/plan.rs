//! Plans: the passes of a run, in order, over one shared vertex list.

use super::Vertex;
use crate::draw::kernels::{Kernel, Target};
use std::ops::Range;

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
            kernel: last.kernel.copy(),
            target: Target::PairSource,
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
