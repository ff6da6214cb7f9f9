//! Runs a [`Plan`] on the GPU, pass by pass: binds each kernel's program, inputs and target.

use crate::error::Result;
use crate::geometry::{Kernel, Pass, Plan, Target};
use crate::gl::{Context, PingPong, RenderTexture, Texture, VertexArray};
use crate::kernels::Kernels;
use crate::layout::Layout;
use glow::HasContext;

/// The extra inputs of assembly: A (n x m texture), d (n x 1) and the scaled column b (m x 1).
pub struct AssemblyInputs {
    /// A, texel (k, i) = A(i, k).
    pub a: Texture,
    /// The diagonal of D², texel (k, 0).
    pub d: Texture,
    /// The scaled column b, texel (i, 0).
    pub b: RenderTexture,
}

/// A plan being run: its uploaded geometry, the ping-pong pair and the position reached.
///
/// [`Execution::step`] runs one pass, so a caller (a test, the viewer) can look at the
/// textures between passes; [`Execution::finish`] runs the rest.
pub struct Execution<'k> {
    ctx: Context,
    kernels: &'k Kernels,
    plan: Plan,
    layout: Layout,
    vertex_array: VertexArray,
    pair: PingPong,
    inputs: Option<AssemblyInputs>,
    next: usize,
    /// The program and viewport set by the last pass of the current `step`/`finish` call, so
    /// consecutive passes of one kernel and size do not set them again.
    bound: Option<(Kernel, (usize, usize))>,
}

impl<'k> Execution<'k> {
    /// Uploads the plan's geometry once; the pair's source must hold the input already.
    pub fn new(
        ctx: &Context,
        kernels: &'k Kernels,
        plan: Plan,
        layout: Layout,
        pair: PingPong,
        inputs: Option<AssemblyInputs>,
    ) -> Result<Self> {
        let vertex_array = VertexArray::new(ctx, &plan.vertices)?;
        Ok(Self {
            ctx: ctx.clone(),
            kernels,
            plan,
            layout,
            vertex_array,
            pair,
            inputs,
            next: 0,
            bound: None,
        })
    }

    /// The GL context the run draws with.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The layout of the matrix in the pair's textures.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The ping-pong pair (the source holds the latest complete state between steps).
    pub fn pair(&self) -> &PingPong {
        &self.pair
    }

    /// Assembly's inputs, when this is an assembly.
    pub fn inputs(&self) -> Option<&AssemblyInputs> {
        self.inputs.as_ref()
    }

    /// The index of the next pass to run.
    pub fn position(&self) -> usize {
        self.next
    }

    /// True when every pass has run.
    pub fn is_done(&self) -> bool {
        self.next == self.plan.passes.len()
    }

    /// The next pass to run, if any.
    pub fn next_pass(&self) -> Option<&Pass> {
        self.plan.passes.get(self.next)
    }

    /// The texture `pass` draws into, given the pair's current orientation.
    pub fn target_of(&self, pass: &Pass) -> &Texture {
        match pass.target {
            Target::ScaledColumn => self.inputs.as_ref().expect("assembly inputs").b.texture(),
            Target::Target => self.pair.target().texture(),
            Target::Source => self.pair.source().texture(),
        }
    }

    /// Runs the next pass and checks for GL errors; returns the pass run.
    pub fn step(&mut self) -> Result<Option<Pass>> {
        let Some(pass) = self.plan.passes.get(self.next).cloned() else {
            return Ok(None);
        };
        // Other code may have drawn since the last call: set everything afresh.
        self.bound = None;
        self.vertex_array.bind();
        self.draw(&pass);
        self.next += 1;
        self.ctx
            .check(|| format!("{} pass at step {}", pass.kernel.name(), pass.step))?;
        Ok(Some(pass))
    }

    /// Runs every remaining pass, checking GL errors once at the end.
    pub fn finish(&mut self) -> Result<()> {
        self.bound = None;
        self.vertex_array.bind();
        while let Some(pass) = self.plan.passes.get(self.next) {
            let pass = pass.clone();
            self.draw(&pass);
            self.next += 1;
        }
        self.ctx.check(|| "running the passes".into())
    }

    /// Gives back the pair (the result is in its source once done).
    pub fn into_pair(self) -> PingPong {
        self.pair
    }

    fn draw(&mut self, pass: &Pass) {
        let gl = self.ctx.gl();
        let (w, h) = pass.viewport;
        if self.bound.replace((pass.kernel, pass.viewport)) != Some((pass.kernel, pass.viewport)) {
            let program = self.kernels.get(pass.kernel);
            program.bind();
            program.set_viewport(w as f32, h as f32);
            unsafe { gl.viewport(0, 0, w as i32, h as i32) };
        }
        let pair_input = |t: Target| match t {
            Target::Source => self.pair.source().texture(),
            _ => self.pair.target().texture(),
        };
        match pass.kernel {
            Kernel::ColumnScaling => {
                let inputs = self.inputs.as_ref().expect("assembly inputs");
                inputs.a.bind(0);
                inputs.d.bind(1);
            }
            Kernel::OuterProductAddition => {
                let inputs = self.inputs.as_ref().expect("assembly inputs");
                pair_input(pass.target.reads()).bind(0);
                inputs.a.bind(1);
                inputs.b.texture().bind(2);
            }
            _ => pair_input(pass.target.reads()).bind(0),
        }
        match pass.target {
            Target::ScaledColumn => self
                .inputs
                .as_ref()
                .expect("assembly inputs")
                .b
                .framebuffer()
                .bind(),
            Target::Target => self.pair.target().framebuffer().bind(),
            Target::Source => self.pair.source().framebuffer().bind(),
        }
        self.vertex_array
            .draw(pass.vertices.start, pass.vertices.len());
        if pass.swap_after {
            self.pair.swap();
        }
    }
}
