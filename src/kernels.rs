//! The paper's kernels compiled once per context, with their sampler bindings.

use crate::error::Result;
use crate::geometry::Kernel;
use crate::gl::{Context, Program};

/// GLSL prepended to every fragment kernel: the version and the texRECT-like `fetch`.
const COMMON: &str = include_str!("../glsl/common.glsl");
/// The one vertex shader all passes share.
const VERTEX: &str = include_str!("../glsl/pass.vert");

/// The fragment source of a kernel (without the common header) and its samplers by unit.
pub fn kernel_source(kernel: Kernel) -> (&'static str, &'static [&'static str]) {
    match kernel {
        Kernel::ColumnScaling => (include_str!("../glsl/column_scaling.frag"), &["A", "d"]),
        Kernel::OuterProductAddition => (
            include_str!("../glsl/outer_product_addition.frag"),
            &["C", "A", "b"],
        ),
        Kernel::SquareRoot => (include_str!("../glsl/square_root.frag"), &["L"]),
        Kernel::Normalization => (include_str!("../glsl/normalization.frag"), &["L"]),
        Kernel::OuterProductSubtraction => (
            include_str!("../glsl/outer_product_subtraction.frag"),
            &["L"],
        ),
        Kernel::Copy => (include_str!("../glsl/copy.frag"), &["L"]),
    }
}

/// Every kernel's program, indexed by [`Kernel`].
pub struct Kernels {
    programs: Vec<(Kernel, Program)>,
}

impl Kernels {
    /// Compiles and links all kernels, binding each sampler to its unit.
    pub fn new(ctx: &Context) -> Result<Self> {
        let mut programs = Vec::new();
        for kernel in Kernel::ALL {
            let (fragment, samplers) = kernel_source(kernel);
            let source = format!("{COMMON}{fragment}");
            let program = Program::new(ctx, kernel.name(), VERTEX, &source)?;
            for (unit, name) in samplers.iter().enumerate() {
                program.set_sampler(name, unit as u32)?;
            }
            programs.push((kernel, program));
        }
        Ok(Self { programs })
    }

    /// The program of `kernel`.
    pub fn get(&self, kernel: Kernel) -> &Program {
        &self
            .programs
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("every kernel is compiled")
            .1
    }
}
