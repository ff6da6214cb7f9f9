//! The batched kernels of one context, compiled per job, order, storage and refinement on
//! first use and kept (a batch of one shape runs one program).

use super::plan::{Job, Plan, WorkStorage};
use crate::batched::table;
use crate::error::Result;
use crate::gl::{ComputeLimits, ComputeProgram, Context};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What tells one compiled program from another: the job (none for the inputs' preparation)
/// and the `#define`s (order, storage, refinement steps, the group's shape, the solve's
/// blocks).
type ProgramKey = (Option<Job>, String);

/// The compiled batched programs of one context.
pub struct BatchedKernels {
    ctx: Context,
    limits: ComputeLimits,
    programs: RefCell<HashMap<ProgramKey, Rc<ComputeProgram>>>,
}

impl BatchedKernels {
    /// Nothing compiled yet; the device's compute limits queried (needs compute shaders).
    pub fn new(ctx: &Context) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            limits: ComputeLimits::query(ctx)?,
            programs: RefCell::default(),
        })
    }

    /// The device's compute limits.
    pub fn limits(&self) -> &ComputeLimits {
        &self.limits
    }

    /// The context the programs belong to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The program for `plan`, compiled now if it is the first of its kind.
    pub fn program(&self, plan: &Plan) -> Result<Rc<ComputeProgram>> {
        let key = (Some(plan.job), plan.defines());
        if let Some(p) = self.programs.borrow().get(&key) {
            return Ok(p.clone());
        }
        let kernel = plan.job.kernel();
        let (observations, tiles) = if plan.job.reads_observations() {
            (table::BATCHED_OBSERVATIONS, table::BATCHED_TILES)
        } else {
            ("", "")
        };
        let source = format!(
            "#version 430\n{}{}{}\n{}\n{}\n{}",
            plan.defines(),
            crate::gl::PIVOT_GLSL,
            table::BATCHED_COMMON,
            observations,
            tiles,
            kernel.source
        );
        let variant = format!(
            "n = {}, {} per group, {} work",
            plan.n,
            plan.problems_per_group,
            match plan.storage {
                WorkStorage::Shared => "shared",
                WorkStorage::Global => "global",
            }
        );
        let program = Rc::new(ComputeProgram::new(&self.ctx, kernel, &variant, &source)?);
        self.programs.borrow_mut().insert(key, program.clone());
        Ok(program)
    }

    /// The separate assembly's program for `plan` (None where it assembles on chip),
    /// compiled now if it is the first of its kind.
    pub fn gram_program(&self, plan: &Plan) -> Result<Option<Rc<ComputeProgram>>> {
        let Some(defines) = plan.gram_defines() else {
            return Ok(None);
        };
        let key = (Some(plan.job), format!("gram\n{defines}"));
        if let Some(p) = self.programs.borrow().get(&key) {
            return Ok(Some(p.clone()));
        }
        let source = format!("#version 430\n{defines}\n{}", table::BATCHED_GRAM.source);
        let variant = format!("n = {}, {:?}", plan.n, plan.gram_shape());
        let program = Rc::new(ComputeProgram::new(
            &self.ctx,
            &table::BATCHED_GRAM,
            &variant,
            &source,
        )?);
        self.programs.borrow_mut().insert(key, program.clone());
        Ok(Some(program))
    }

    /// The inputs' preparation (`glsl/batched/prepare.comp`) gathering from strides with
    /// `gather` and dividing by powers of two with `scale`, compiled now if it is the first of
    /// its kind.
    pub fn prepare_program(&self, gather: bool, scale: bool) -> Result<Rc<ComputeProgram>> {
        let mut defines = String::new();
        if gather {
            defines.push_str("#define GATHER\n");
        }
        if scale {
            defines.push_str("#define SCALE\n");
        }
        let key = (None, defines);
        if let Some(p) = self.programs.borrow().get(&key) {
            return Ok(p.clone());
        }
        let source = format!("#version 430\n{}{}", key.1, table::BATCHED_PREPARE.source);
        let variant = format!("gather {gather}, scale {scale}");
        let program = Rc::new(ComputeProgram::new(
            &self.ctx,
            &table::BATCHED_PREPARE,
            &variant,
            &source,
        )?);
        self.programs.borrow_mut().insert(key, program.clone());
        Ok(program)
    }
}
