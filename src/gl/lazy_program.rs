//! A compute program compiled on first use: opening a set of kernels then costs only the ones
//! an operation reaches, since the driver's compilation is most of a first call's time.

use super::compute::{ComputeKernel, ComputeProgram};
use super::context::Context;
use crate::error::Result;
use std::cell::OnceCell;

/// A compute program's source, compiled and linked (and checked against its kernel's
/// declaration) the first time [`LazyProgram::get`] is called.
pub struct LazyProgram {
    ctx: Context,
    kernel: &'static ComputeKernel,
    variant: String,
    source: String,
    program: OnceCell<ComputeProgram>,
}

impl LazyProgram {
    /// `source` for `kernel` (its `variant` names it in errors and logs), not yet compiled.
    pub fn new(ctx: &Context, kernel: &'static ComputeKernel, variant: &str, source: String) -> Self {
        Self {
            ctx: ctx.clone(),
            kernel,
            variant: variant.to_string(),
            source,
            program: OnceCell::new(),
        }
    }

    /// The program, compiled and linked now if it was not yet; a failure is returned each time
    /// it is asked for, never cached.
    pub fn get(&self) -> Result<&ComputeProgram> {
        if let Some(p) = self.program.get() {
            return Ok(p);
        }
        let p = ComputeProgram::new(&self.ctx, self.kernel, &self.variant, &self.source)?;
        Ok(self.program.get_or_init(|| p))
    }

    /// Whether the program has been compiled.
    pub fn is_compiled(&self) -> bool {
        self.program.get().is_some()
    }
}
