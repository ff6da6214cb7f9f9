//! The fragment kernels: each declared once, in [`Kernel::spec`], with its GLSL source, its
//! texel format and the textures its samplers read by unit: the paper's Kernels 1-5 over R32F
//! texels, and the blocked method's kernels over RGBA32F texels holding 2 x 2 blocks, or 4 x 4
//! blocks over four render targets. Compiling ([`Kernels::get`], on first use) and binding
//! ([`crate::draw::execution`]) both read that table, so a kernel's inputs cannot disagree between
//! the two.

use crate::error::Result;
use crate::gl::{Context, Program};

/// GLSL prepended to every fragment kernel: the version and the texRECT-like `fetch`.
const COMMON: &str = include_str!("../../glsl/common.glsl");
/// GLSL prepended to every blocked kernel: the version, block helpers and a vec4 output.
const BLOCK_COMMON: &str = include_str!("../../glsl/blocked/common.glsl");
/// GLSL prepended to every 4 x 4 blocked kernel: block fetches from the pair's four layers and
/// four outputs.
const BLOCK4_COMMON: &str = include_str!("../../glsl/blocked4/common.glsl");
/// The one vertex shader all passes share.
const VERTEX: &str = include_str!("../../glsl/pass.vert");

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
    /// Blocked Kernel 1: B(I, k) = A(I, k)·diag(d(2k), d(2k+1)) for every block of A at once.
    BlockScaling,
    /// Blocked Kernel 2: C_T = C_S + Σ A(I, k+t)·B(J, k+t)ᵀ, a rank-K update per pass.
    RankKAddition,
    /// The factor of a diagonal block (the Brook+ square-root step).
    BlockFactor,
    /// The panel below it times the inverse transpose of that factor (normalization step).
    BlockPanel,
    /// L_T = L_S − Σ L(I, k+t)·L(J, k+t)ᵀ over the trailing triangle (sub-matrix update).
    RankKSubtraction,
    /// Copy of blocks back into the source.
    BlockCopy,
    /// [`Kernel::BlockScaling`] for 4 x 4 blocks: B = A·diag(d), A and B in columns of 4 rows.
    BlockScaling4,
    /// [`Kernel::RankKAddition`] over 4 x 4 blocks (four render targets).
    RankKAddition4,
    /// [`Kernel::BlockFactor`] over 4 x 4 blocks.
    BlockFactor4,
    /// [`Kernel::BlockPanel`] over 4 x 4 blocks.
    BlockPanel4,
    /// [`Kernel::RankKSubtraction`] over 4 x 4 blocks.
    RankKSubtraction4,
    /// [`Kernel::BlockCopy`] of 4 x 4 blocks.
    BlockCopy4,
    /// The inverse of the diagonal block's factor, drawn into the source for the panel.
    BlockInverse,
    /// [`Kernel::BlockInverse`] over 4 x 4 blocks.
    BlockInverse4,
    /// [`Kernel::BlockFactor`] for block columns of 32.
    BlockFactor32,
    /// [`Kernel::BlockInverse`] for block columns of 32.
    BlockInverse32,
    /// [`Kernel::BlockPanel`] for block columns of 32.
    BlockPanel32,
    /// [`Kernel::RankKSubtraction`] for block columns of 32.
    RankKSubtraction32,
    /// [`Kernel::BlockFactor4`] for block columns of 32.
    BlockFactor4x32,
    /// [`Kernel::BlockInverse4`] for block columns of 32.
    BlockInverse4x32,
    /// [`Kernel::BlockPanel4`] for block columns of 32.
    BlockPanel4x32,
    /// [`Kernel::RankKSubtraction4`] for block columns of 32.
    RankKSubtraction4x32,
}

/// What a kernel's texels hold, which decides its header and its render targets' format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Texels {
    /// One matrix entry per R32F texel (the paper's kernels).
    Scalar,
    /// A 2 x 2 block per RGBA32F texel (the blocked method).
    Block,
    /// A 4 x 4 block per fragment, its columns in the same texel of four RGBA32F textures
    /// (the blocked method over four render targets).
    Block4,
}

impl Texels {
    /// The texel format's name as GL spells it (and as [`crate::gl::TexelFormat::NAME`] does).
    pub fn format_name(self) -> &'static str {
        match self {
            Texels::Scalar => "R32F",
            Texels::Block | Texels::Block4 => "RGBA32F",
        }
    }

    /// Textures (layers) per matrix held in the ping-pong pair: what the pair's samplers
    /// read and the pair's render targets.
    pub fn pair_layers(self) -> usize {
        match self {
            Texels::Block4 => 4,
            _ => 1,
        }
    }

    /// Layers of `input`, and the names of its samplers: `name` for one layer, `name0`,
    /// `name1`, ... for several, on consecutive texture units.
    pub fn samplers(self, name: &str, input: Input) -> Vec<String> {
        match (input, self.pair_layers()) {
            (Input::Pair, n) if n > 1 => (0..n).map(|q| format!("{name}{q}")).collect(),
            _ => vec![name.to_string()],
        }
    }

    /// The GLSL prepended to kernels of this kind.
    fn header(self) -> &'static str {
        match self {
            Texels::Scalar => COMMON,
            Texels::Block => BLOCK_COMMON,
            Texels::Block4 => BLOCK4_COMMON,
        }
    }
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
// `PairTarget` names the pair's target texture (as the paper's C_T), not the enum; clippy
// checks the names only where the module is private (without the `internals` feature).
#[allow(clippy::enum_variant_names)]
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
    /// What its texels hold.
    pub texels: Texels,
    /// Preprocessor definitions put between the header and the fragment shader (the block
    /// column's KB for the blocked Cholesky kernels).
    pub defines: &'static str,
}

/// The table: one entry per kernel, in [`Kernel::ALL`]'s order.
const SPECS: [KernelSpec; 28] = [
    KernelSpec {
        name: "column scaling",
        fragment: include_str!("../../glsl/column_scaling.frag"),
        inputs: &[("A", Input::A), ("d", Input::D)],
        target: Target::ScaledColumn,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "outer-product addition",
        fragment: include_str!("../../glsl/outer_product_addition.frag"),
        inputs: &[
            ("C", Input::Pair),
            ("A", Input::A),
            ("b", Input::ScaledColumn),
        ],
        target: Target::PairTarget,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "square root",
        fragment: include_str!("../../glsl/square_root.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "normalization",
        fragment: include_str!("../../glsl/normalization.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "outer-product subtraction",
        fragment: include_str!("../../glsl/outer_product_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "copy",
        fragment: include_str!("../../glsl/copy.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Scalar,
        defines: "",
    },
    KernelSpec {
        name: "block scaling",
        fragment: include_str!("../../glsl/blocked/block_scaling.frag"),
        inputs: &[("A", Input::A), ("d", Input::D)],
        target: Target::ScaledColumn,
        texels: Texels::Block,
        defines: "",
    },
    KernelSpec {
        name: "rank-K addition",
        fragment: include_str!("../../glsl/blocked/rank_k_addition.frag"),
        inputs: &[
            ("C", Input::Pair),
            ("A", Input::A),
            ("B", Input::ScaledColumn),
        ],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "",
    },
    KernelSpec {
        name: "block factor",
        fragment: include_str!("../../glsl/blocked/block_factor.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "panel solve",
        fragment: include_str!("../../glsl/blocked/block_panel.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "rank-K subtraction",
        fragment: include_str!("../../glsl/blocked/rank_k_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "block copy",
        fragment: include_str!("../../glsl/blocked/block_copy.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block,
        defines: "",
    },
    KernelSpec {
        name: "block scaling 4x4",
        fragment: include_str!("../../glsl/blocked4/block_scaling.frag"),
        inputs: &[("A", Input::A), ("d", Input::D)],
        target: Target::ScaledColumn,
        texels: Texels::Block4,
        defines: "",
    },
    KernelSpec {
        name: "rank-K addition 4x4",
        fragment: include_str!("../../glsl/blocked4/rank_k_addition.frag"),
        inputs: &[
            ("L", Input::Pair),
            ("A", Input::A),
            ("B", Input::ScaledColumn),
        ],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "",
    },
    KernelSpec {
        name: "block factor 4x4",
        fragment: include_str!("../../glsl/blocked4/block_factor.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 4\n",
    },
    KernelSpec {
        name: "panel solve 4x4",
        fragment: include_str!("../../glsl/blocked4/block_panel.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 4\n",
    },
    KernelSpec {
        name: "rank-K subtraction 4x4",
        fragment: include_str!("../../glsl/blocked4/rank_k_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 4\n",
    },
    KernelSpec {
        name: "block copy 4x4",
        fragment: include_str!("../../glsl/blocked4/block_copy.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block4,
        defines: "",
    },
    KernelSpec {
        name: "block inverse",
        fragment: include_str!("../../glsl/blocked/block_inverse.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "block inverse 4x4",
        fragment: include_str!("../../glsl/blocked4/block_inverse.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block4,
        defines: "#define KB 4\n",
    },
    KernelSpec {
        name: "block factor 32",
        fragment: include_str!("../../glsl/blocked/block_factor.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 16\n",
    },
    KernelSpec {
        name: "block inverse 32",
        fragment: include_str!("../../glsl/blocked/block_inverse.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block,
        defines: "#define KB 16\n",
    },
    KernelSpec {
        name: "panel solve 32",
        fragment: include_str!("../../glsl/blocked/block_panel.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 16\n",
    },
    KernelSpec {
        name: "rank-K subtraction 32",
        fragment: include_str!("../../glsl/blocked/rank_k_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block,
        defines: "#define KB 16\n",
    },
    KernelSpec {
        name: "block factor 4x4 32",
        fragment: include_str!("../../glsl/blocked4/block_factor.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "block inverse 4x4 32",
        fragment: include_str!("../../glsl/blocked4/block_inverse.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairSource,
        texels: Texels::Block4,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "panel solve 4x4 32",
        fragment: include_str!("../../glsl/blocked4/block_panel.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 8\n",
    },
    KernelSpec {
        name: "rank-K subtraction 4x4 32",
        fragment: include_str!("../../glsl/blocked4/rank_k_subtraction.frag"),
        inputs: &[("L", Input::Pair)],
        target: Target::PairTarget,
        texels: Texels::Block4,
        defines: "#define KB 8\n",
    },
];

impl KernelSpec {
    /// The whole fragment shader: header, definitions, kernel.
    pub fn source(&self) -> String {
        format!("{}{}{}", self.texels.header(), self.defines, self.fragment)
    }
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 28] = [
        Kernel::ColumnScaling,
        Kernel::OuterProductAddition,
        Kernel::SquareRoot,
        Kernel::Normalization,
        Kernel::OuterProductSubtraction,
        Kernel::Copy,
        Kernel::BlockScaling,
        Kernel::RankKAddition,
        Kernel::BlockFactor,
        Kernel::BlockPanel,
        Kernel::RankKSubtraction,
        Kernel::BlockCopy,
        Kernel::BlockScaling4,
        Kernel::RankKAddition4,
        Kernel::BlockFactor4,
        Kernel::BlockPanel4,
        Kernel::RankKSubtraction4,
        Kernel::BlockCopy4,
        Kernel::BlockInverse,
        Kernel::BlockInverse4,
        Kernel::BlockFactor32,
        Kernel::BlockInverse32,
        Kernel::BlockPanel32,
        Kernel::RankKSubtraction32,
        Kernel::BlockFactor4x32,
        Kernel::BlockInverse4x32,
        Kernel::BlockPanel4x32,
        Kernel::RankKSubtraction4x32,
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

    /// The copy kernel for this kernel's texels (Algorithm 5's copy back).
    pub fn copy(self) -> Kernel {
        match self.spec().texels {
            Texels::Scalar => Kernel::Copy,
            Texels::Block => Kernel::BlockCopy,
            Texels::Block4 => Kernel::BlockCopy4,
        }
    }

    /// Whether this is a copy back into the source.
    pub fn is_copy(self) -> bool {
        matches!(self, Kernel::Copy | Kernel::BlockCopy | Kernel::BlockCopy4)
    }
}

/// Every kernel's program, indexed by [`Kernel`], each compiled on its first use (a process
/// that never draws compiles none: the first call of a fresh process pays only for what it
/// runs).
pub struct Kernels {
    ctx: Context,
    programs: Vec<std::cell::OnceCell<Program>>,
}

impl Kernels {
    /// The table for `ctx`, nothing compiled yet.
    pub fn new(ctx: &Context) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            programs: Kernel::ALL.iter().map(|_| Default::default()).collect(),
        })
    }

    /// The program of `kernel`, compiled and linked on first use with each sampler bound to
    /// its unit as the table says.
    pub fn get(&self, kernel: Kernel) -> Result<&Program> {
        let cell = &self.programs[kernel as usize];
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let spec = kernel.spec();
        let program = Program::new(&self.ctx, spec.name, VERTEX, &spec.source())?;
        let samplers = spec
            .inputs
            .iter()
            .flat_map(|(name, input)| spec.texels.samplers(name, *input));
        for (unit, sampler) in samplers.enumerate() {
            program.set_sampler(&sampler, unit as u32)?;
        }
        Ok(cell.get_or_init(|| program))
    }

    /// Compiles every kernel not compiled yet (a check that the whole table links).
    pub fn compile_all(&self) -> Result<()> {
        Kernel::ALL.iter().try_for_each(|&k| self.get(k).map(|_| ()))
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
            let source = spec.source();
            for (name, input) in spec.inputs {
                for sampler in spec.texels.samplers(name, *input) {
                    assert!(
                        source.contains(&format!("uniform sampler2D {sampler};")),
                        "{} does not declare sampler {sampler}",
                        spec.name
                    );
                }
            }
        }
    }

    /// The block sizes compiled into the blocked kernels agree with the layout's constants.
    #[test]
    fn blocked_kernels_use_the_layout_block_sizes() {
        use crate::layout::blocked::{ASSEMBLY_RANK, BlockColumn, Blocking};
        let rank_k = format!("const int KB = {};", ASSEMBLY_RANK / 2);
        assert!(Kernel::RankKAddition.spec().fragment.contains(&rank_k));
        let rank_4 = format!("const int KA = {};", ASSEMBLY_RANK);
        assert!(Kernel::RankKAddition4.spec().fragment.contains(&rank_4));
        use Kernel::*;
        let cholesky = [
            (
                Blocking::Two,
                BlockColumn::Sixteen,
                [BlockFactor, BlockInverse, BlockPanel, RankKSubtraction],
            ),
            (
                Blocking::Four,
                BlockColumn::Sixteen,
                [BlockFactor4, BlockInverse4, BlockPanel4, RankKSubtraction4],
            ),
            (
                Blocking::Two,
                BlockColumn::ThirtyTwo,
                [
                    BlockFactor32,
                    BlockInverse32,
                    BlockPanel32,
                    RankKSubtraction32,
                ],
            ),
            (
                Blocking::Four,
                BlockColumn::ThirtyTwo,
                [
                    BlockFactor4x32,
                    BlockInverse4x32,
                    BlockPanel4x32,
                    RankKSubtraction4x32,
                ],
            ),
        ];
        for (blocking, column, kernels) in cholesky {
            let define = format!("#define KB {}\n", column.entries() / blocking.side());
            for kernel in kernels {
                let spec = kernel.spec();
                assert_eq!(spec.defines, define, "{kernel:?}");
                assert!(!spec.fragment.contains("const int KB"), "{kernel:?}");
                let texels = if blocking == Blocking::Four {
                    Texels::Block4
                } else {
                    Texels::Block
                };
                assert_eq!(spec.texels, texels, "{kernel:?}");
            }
        }
        for kernel in Kernel::ALL {
            assert_eq!(kernel.copy().spec().texels, kernel.spec().texels);
        }
    }
}
