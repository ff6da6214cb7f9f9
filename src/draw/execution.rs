//! Runs a [`Plan`] on the GPU, pass by pass: binds each kernel's program, the inputs the kernel
//! table names ([`Kernel::spec`]) and the pass's target.

use crate::error::{Error, InputError, Result};
use crate::draw::{Pass, Plan};
use crate::gl::{
    Context, PingPong, R32F, RenderTexture, Rgba32F, TexelFormat, Texture, VertexArray,
};
use crate::draw::kernels::{Input, Kernel, Kernels, Target};
use crate::layout::{BlockColumn, BlockLayout, Blocking, Format, Layout, PackedMatrix};
use crate::matrix::Matrix;

/// The textures a run has besides its ping-pong pair, of the run's texel format `F` (R32F for
/// the paper's passes, RGBA32F blocks for the blocked method).
pub enum Operands<F: TexelFormat = R32F> {
    /// Cholesky and LU read and write only the pair.
    PairOnly,
    /// Algorithm 3's inputs.
    Assembly {
        /// A, texel (k, i) = A(i, k) (blocked: the block of rows 2i.., columns 2k..).
        a: Texture<F>,
        /// The diagonal of D², texel (k, 0) (blocked: d(2k), d(2k+1)).
        d: Texture<F>,
        /// The scaled column b, texel (i, 0) (blocked: all of B = A·diag(d), shaped as A).
        b: RenderTexture<F>,
    },
}

impl<F: TexelFormat> Operands<F> {
    /// The texture of `input`, if this run has it (`Pair` is the pair's business).
    fn texture(&self, input: Input) -> Option<&Texture<F>> {
        match (self, input) {
            (Operands::Assembly { a, .. }, Input::A) => Some(a),
            (Operands::Assembly { d, .. }, Input::D) => Some(d),
            (Operands::Assembly { b, .. }, Input::ScaledColumn) => Some(b.texture()),
            _ => None,
        }
    }

    /// The scaled column's render texture, if this run has one.
    fn scaled_column(&self) -> Option<&RenderTexture<F>> {
        match self {
            Operands::Assembly { b, .. } => Some(b),
            Operands::PairOnly => None,
        }
    }
}

/// A plan being run: its uploaded geometry, the ping-pong pair and the position reached.
///
/// [`Execution::step`] runs one pass, so a caller (a test, the debugger) can look at the
/// textures between passes; [`Execution::finish`] runs the rest. The result is in the pair's
/// source once done; `download_*` read it back. `F` is the texel format of the run's textures:
/// R32F for the paper's passes, RGBA32F for the blocked method's.
pub struct Execution<'k, F: TexelFormat = R32F> {
    ctx: Context,
    kernels: &'k Kernels,
    plan: Plan,
    layout: Layout,
    vertex_array: VertexArray<crate::draw::Vertex>,
    pair: PingPong<F>,
    operands: Operands<F>,
    next: usize,
    /// The program and viewport set by the last pass of the current `step`/`finish` call, so
    /// consecutive passes of one kernel and size do not set them again.
    bound: Option<(Kernel, (usize, usize))>,
    /// The blocked method's Cholesky block column (blocked runs only).
    block_column: BlockColumn,
}

impl<'k, F: TexelFormat> Execution<'k, F> {
    /// Uploads the plan's geometry once; the pair's source must hold the input already.
    /// Fails if a pass needs a texture the run lacks (an assembly plan without A, say) or has
    /// kernels of another texel format or layer count than the run's textures.
    pub fn new(
        ctx: &Context,
        kernels: &'k Kernels,
        plan: Plan,
        layout: Layout,
        pair: PingPong<F>,
        operands: Operands<F>,
    ) -> Result<Self> {
        for pass in &plan.passes {
            let spec = pass.kernel.spec();
            if spec.texels.format_name() != F::NAME {
                return Err(InputError::Unsupported(format!(
                    "the {} pass at step {} draws {} texels, and this run's textures are {}",
                    spec.name,
                    pass.step,
                    spec.texels.format_name(),
                    F::NAME
                ))
                .into());
            }
            let layers = pair.source().layers().len();
            if spec.texels.pair_layers() != layers {
                return Err(InputError::Unsupported(format!(
                    "the {} pass at step {} draws into {} textures at once, and this run's \
                     pair has {layers}",
                    spec.name,
                    pass.step,
                    spec.texels.pair_layers(),
                ))
                .into());
            }
            let needs = spec.inputs.iter().map(|(_, input)| *input);
            let missing = needs
                .filter(|&i| i != Input::Pair)
                .find(|&i| operands.texture(i).is_none())
                .map(|i| format!("{i:?}"))
                .or_else(|| {
                    (pass.target == Target::ScaledColumn && operands.scaled_column().is_none())
                        .then(|| "its target, the scaled column".to_string())
                });
            if let Some(what) = missing {
                return Err(InputError::Unsupported(format!(
                    "the {} pass at step {} needs {what}, which this run does not have",
                    spec.name, pass.step
                ))
                .into());
            }
        }
        let vertex_array = VertexArray::new(ctx, &plan.vertices)?;
        Ok(Self {
            ctx: ctx.clone(),
            kernels,
            plan,
            layout,
            vertex_array,
            pair,
            operands,
            next: 0,
            bound: None,
            block_column: BlockColumn::default(),
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
    pub fn pair(&self) -> &PingPong<F> {
        &self.pair
    }

    /// The textures besides the pair.
    pub fn operands(&self) -> &Operands<F> {
        &self.operands
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

    /// The render texture `target` names, given the pair's current orientation.
    fn render_texture(&self, target: Target) -> Result<&RenderTexture<F>> {
        match target {
            Target::PairTarget => Ok(self.pair.target()),
            Target::PairSource => Ok(self.pair.source()),
            Target::ScaledColumn => self.operands.scaled_column().ok_or_else(|| {
                InputError::Unsupported("this run has no scaled column".into()).into()
            }),
        }
    }

    /// The texture `pass` draws into, given the pair's current orientation (its first layer).
    pub fn target_of(&self, pass: &Pass) -> Result<&Texture<F>> {
        Ok(self.render_texture(pass.target)?.texture())
    }

    /// Every layer `pass` draws into (several render targets), given the pair's current
    /// orientation.
    pub fn target_layers_of(&self, pass: &Pass) -> Result<&[Texture<F>]> {
        Ok(self.render_texture(pass.target)?.layers())
    }

    /// The textures the samplers reading `input` get in `pass` (the pair's layers).
    fn input_of(&self, pass: &Pass, input: Input) -> Result<&[Texture<F>]> {
        match input {
            Input::Pair => Ok(self.render_texture(pass.target.reads())?.layers()),
            other => self
                .operands
                .texture(other)
                .map(std::slice::from_ref)
                .ok_or_else(|| {
                    Error::from(InputError::Unsupported(format!(
                        "this run has no {other:?} texture"
                    )))
                }),
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
        self.draw(&pass)?;
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
            self.draw(&pass)?;
            self.next += 1;
        }
        self.ctx.check(|| "running the passes".into())
    }

    /// Gives back the pair (the result is in its source once done).
    pub fn into_pair(self) -> PingPong<F> {
        self.pair
    }

    /// The pair's source texels as they are (the result once done), row by row (its first
    /// layer).
    pub fn download_texels(&self) -> Result<Vec<F::Texel>> {
        self.pair.source().texture().download()
    }

    /// Every layer of the pair's source, row by row.
    pub fn download_layers(&self) -> Result<Vec<Vec<F::Texel>>> {
        self.pair
            .source()
            .layers()
            .iter()
            .map(Texture::download)
            .collect()
    }

    fn draw(&mut self, pass: &Pass) -> Result<()> {
        let (w, h) = pass.viewport;
        if self.bound.replace((pass.kernel, pass.viewport)) != Some((pass.kernel, pass.viewport)) {
            let program = self.kernels.get(pass.kernel)?;
            program.bind();
            program.set_viewport(w as f32, h as f32);
            self.ctx.set_viewport(w, h);
        }
        let mut unit = 0;
        for (_, input) in pass.kernel.spec().inputs {
            for texture in self.input_of(pass, *input)? {
                texture.bind(unit);
                unit += 1;
            }
        }
        self.render_texture(pass.target)?.framebuffer().bind();
        self.vertex_array
            .draw(pass.vertices.start, pass.vertices.len());
        if pass.swap_after {
            self.pair.swap();
        }
        Ok(())
    }
}

impl Execution<'_, R32F> {
    /// The current state read back as a lower-triangular m x m matrix (upper triangle zero),
    /// whatever the format.
    pub fn download_lower(&self) -> Result<Matrix<f32>> {
        Ok(self.layout.unpack_owned(self.download_texels()?))
    }

    /// [`Execution::download_lower`] ending the run: every texture but the result is freed
    /// before the read-back, so a large result is held only twice at the peak (the texture
    /// and its copy), which matters where textures live in host memory (llvmpipe).
    pub fn into_lower(self) -> Result<Matrix<f32>> {
        let Execution {
            ctx,
            vertex_array,
            pair,
            operands,
            layout,
            ..
        } = self;
        drop((vertex_array, operands));
        let result = pair.into_source();
        let texels = result.texture().download()?;
        drop(result);
        ctx.check(|| "reading back the result".into())?;
        Ok(layout.unpack_owned(texels))
    }

    /// The current state of a packed run, left packed.
    pub fn download_packed(&self) -> Result<PackedMatrix> {
        if self.layout.format() != Format::Packed {
            return Err(InputError::Unsupported(format!(
                "download_packed needs a packed run, this one is in {} format",
                self.layout.format()
            ))
            .into());
        }
        PackedMatrix::from_raw(self.layout.order(), self.download_texels()?)
    }

    /// The current state as the whole m x m texture, row by row (runs that fill the square,
    /// such as LU).
    pub fn download_square(&self) -> Result<Matrix<f32>> {
        let m = self.layout.order();
        Matrix::from_row_major(m, m, self.download_texels()?)
    }
}

impl Execution<'_, Rgba32F> {
    /// The blocking of this blocked run: 4 x 4 when its pair has four layers.
    pub fn blocking(&self) -> Blocking {
        match self.pair.source().layers().len() {
            1 => Blocking::Two,
            _ => Blocking::Four,
        }
    }

    /// The same run with the blocked method's block column recorded (its plan's).
    pub(crate) fn with_block_column(self, block_column: BlockColumn) -> Self {
        Self {
            block_column,
            ..self
        }
    }

    /// The block layout of this blocked run.
    pub fn block_layout(&self) -> BlockLayout {
        BlockLayout::with(self.layout.order(), self.layout.format(), self.blocking())
            .with_column(self.block_column)
    }

    /// The current state of a blocked run read back as the lower-triangular m x m matrix
    /// (upper triangle zero; the identity padding left out).
    pub fn download_lower(&self) -> Result<Matrix<f32>> {
        let layers = self.download_layers()?;
        let layers: Vec<&[[f32; 4]]> = layers.iter().map(Vec::as_slice).collect();
        Ok(self.block_layout().unpack_layers(&layers))
    }
}
