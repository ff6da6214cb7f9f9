//! The fragment kernels: each declared once, in [`Kernel::spec`], with its GLSL source and the
//! textures its samplers read by unit. Compiling ([`Kernels::new`]) and binding
//! ([`crate::execution`]) both read that table, so a kernel's inputs cannot disagree between
//! the two.

use crate::error::Result;
use crate::gl::{Context, Program};

/// GLSL prepended to every fragment kernel: the version and the texRECT-like `fetch`.
const COMMON: &str = include_str!("../glsl/common.glsl");
/// The one vertex shader all passes share.
const VERTEX: &str = include_str!("../glsl/pass.vert");

/// The fragment kernels, named as in the paper (Kernels 1-5) plus Algorithm 5's copy.
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

/// A texture a kernel's sampler reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// The ping-pong texture the pass does not write (C_S / L_S, or the target for a copy).
    Pair,
    /// Assembly's A, stored as the n x m texture with texel (k, i) = A(i, k).
    A,
    /// Assembly's d, the diagonal of D², n x 1.
    D,
    /// Assembly's scaled column b (m x 1), written by Kernel 1.
    ScaledColumn,
}

/// The texture a pass renders into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The m x 1 texture b of Algorithm 3.
    ScaledColumn,
    /// The ping-pong pair's target (C_T, L_T): what passes write.
    PairTarget,
    /// The ping-pong pair's source (C_S, L_S): only copies write it.
    PairSource,
}

impl Target {
    /// The pair texture a pass into this target reads as [`Input::Pair`]: the other one.
    pub fn reads(self) -> Target {
        match self {
            Target::PairSource => Target::PairTarget,
            _ => Target::PairSource,
        }
    }
}

/// Everything about one kernel.
#[derive(Debug)]
pub struct KernelSpec {
    /// The name used in the paper and in status lines.
    pub name: &'static str,
    /// The fragment shader (without the common header).
    pub fragment: &'static str,
    /// The samplers by texture unit (index = unit): the uniform's name and what it reads.
    pub inputs: &'static [(&'static str, Input)],
    /// The texture it draws into unless a plan says otherwise.
    pub target: Target,
}

/// The table: one entry per kernel, in [`Kernel::ALL`]'s order.
const SPECS: [KernelSpec; 6] = [
    KernelSpec {
        name: "column scaling",
        fragment: include_str!("../glsl/column_scaling.frag"),
        inputs: &[("A", Input::A), ("d", Input::D)],
        target: Target::ScaledColumn,
    },
    KernelSpec {
        name: "outer-product addition",
        fragment: include_str!("../glsl/outer_product_addition.frag"),
        inputs: &[
            ("C", Input::Pair),
            ("A", Input::A),
            ("b", Input::ScaledColumn),
        ],
        target: Target::PairTarget,
    },
    KernelSpec {
        name: "square root",
        fragment: include_str!("../glsl/square_root.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
    },
    KernelSpec {
        name: "normalization",
        fragment: include_str!("../glsl/normalization.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
    },
    KernelSpec {
        name: "outer-product subtraction",
        fragment: include_str!("../glsl/outer_product_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
    },
    KernelSpec {
        name: "copy",
        fragment: include_str!("../glsl/copy.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
    },
];

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

    /// The kernel's entry in the table.
    pub fn spec(self) -> &'static KernelSpec {
        &SPECS[self as usize]
    }

    /// The name used in the paper and in status lines.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The texture the kernel draws into by default (a plan may direct a copy elsewhere).
    pub fn target(self) -> Target {
        self.spec().target
    }
}

/// Every kernel's program, compiled once per context, indexed by [`Kernel`].
pub struct Kernels {
    programs: Vec<Program>,
}

impl Kernels {
    /// Compiles and links all kernels, binding each sampler to its unit as the table says.
    pub fn new(ctx: &Context) -> Result<Self> {
        let programs = Kernel::ALL
            .iter()
            .map(|kernel| {
                let spec = kernel.spec();
                let source = format!("{COMMON}{}", spec.fragment);
                let program = Program::new(ctx, spec.name, VERTEX, &source)?;
                for (unit, (sampler, _)) in spec.inputs.iter().enumerate() {
                    program.set_sampler(sampler, unit as u32)?;
                }
                Ok(program)
            })
            .collect::<Result<_>>()?;
        Ok(Self { programs })
    }

    /// The program of `kernel`.
    pub fn get(&self, kernel: Kernel) -> &Program {
        &self.programs[kernel as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_every_source_declares_its_samplers() {
        for (i, kernel) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*kernel as usize, i);
            let spec = kernel.spec();
            for (sampler, _) in spec.inputs {
                assert!(
                    spec.fragment
                        .contains(&format!("uniform sampler2D {sampler};")),
                    "{} does not declare sampler {sampler}",
                    spec.name
                );
            }
        }
    }
}
