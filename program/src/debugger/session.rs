//! A run of assembly or Cholesky that can be stepped, rewound and inspected texture by texture.

use super::colormap::Range;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use symraster::draw::execution::Execution;
use symraster::draw::execution::Operands;
use symraster::draw::{Pass, Plan, Target, Vertex};
use symraster::error::Result;
use symraster::gl::{Rgba32F, Texture};
use symraster::gpu::{Gpu, Method, Options, check_factor};
use symraster::internal::GpuInternals;
use symraster::layout::{BlockLayout, Blocking, Format, Layout};
use symraster::matrix::{Matrix, relative_error};
use symraster::{problems as testing, reference};

/// The operation shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Algorithm 3: C = A·diag(d)·Aᵀ, lower triangle.
    Assembly,
    /// Algorithm 5: the Cholesky factor L of C.
    #[default]
    Cholesky,
}

impl Operation {
    /// The other operation.
    pub fn other(self) -> Self {
        match self {
            Operation::Assembly => Operation::Cholesky,
            Operation::Cholesky => Operation::Assembly,
        }
    }

    /// The matrix held by the ping-pong pair: C or L.
    fn matrix_name(self) -> &'static str {
        match self {
            Operation::Assembly => "C",
            Operation::Cholesky => "L",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Assembly => "assembly",
            Operation::Cholesky => "Cholesky",
        })
    }
}

/// The other format.
pub fn other_format(format: Format) -> Format {
    match format {
        Format::Full => Format::Packed,
        Format::Packed => Format::Full,
    }
}

/// A seeded random problem: A (m x 2m) and d uniform in (0, 1) for assembly, a
/// well-conditioned SPD C for Cholesky.
#[derive(Clone, Debug)]
pub struct Problem {
    /// A, m x n.
    pub a: Matrix<f32>,
    /// The diagonal of D², n entries.
    pub d: Vec<f32>,
    /// The SPD matrix factored.
    pub c: Matrix<f32>,
}

impl Problem {
    /// The problem of order m made from `seed`.
    pub fn random(m: usize, seed: u64) -> Self {
        let mut rng = testing::rng(seed);
        let a = testing::uniform_matrix(&mut rng, m, 2 * m);
        let d = testing::uniform_vector(&mut rng, 2 * m);
        let c = testing::well_conditioned_spd(&mut rng, m);
        Self { a, d, c }
    }

    /// Order m.
    pub fn order(&self) -> usize {
        self.c.rows()
    }
}

/// For every texel of a layout's texture, the lower-triangle entry (i, j) it holds, if any:
/// the inverse of [`Layout::texel_of`]. Texels holding nothing are unused storage.
pub fn texel_entries(layout: Layout) -> Vec<Option<(usize, usize)>> {
    let (w, h) = layout.texture_size();
    let mut out = vec![None; w * h];
    for i in 0..layout.order() {
        for j in 0..=i {
            let (x, y) = layout.texel_of(i, j);
            out[y * w + x] = Some((i, j));
        }
    }
    out
}

/// The blocked method's textures shown entry by entry: pixel (X, Y) of a panel is entry
/// (row Y mod s, column X mod s) of the block at texel (X/s, Y/s), s the block side, so a
/// panel is the texture with each texel opened into its s x s block.
fn block_pixel(blocks: BlockLayout, x: usize, y: usize) -> (usize, usize, usize, usize) {
    let s = blocks.blocking().side();
    let (tx, ty, r, c) = (x / s, y / s, y % s, x % s);
    match blocks.blocking() {
        Blocking::Two => (tx, ty, 0, 2 * r + c),
        Blocking::Four => (tx, ty, c, r),
    }
}

/// For every pixel of a blocked panel ([`block_pixel`]), the lower-triangle entry (i, j),
/// i < m, it holds, if any (the identity padding and the strict upper triangle are none).
pub fn block_entries(blocks: BlockLayout) -> Vec<Option<(usize, usize)>> {
    let s = blocks.blocking().side();
    let (w, h) = blocks.texture_size();
    let mut out = vec![None; w * s * h * s];
    for y in 0..h * s {
        for x in 0..w * s {
            let (tx, ty, _, _) = block_pixel(blocks, x, y);
            if let Some((bi, bj)) = blocks.block_of_texel(tx, ty) {
                let (i, j) = (s * bi + y % s, s * bj + x % s);
                if j <= i && i < blocks.order() {
                    out[y * w * s + x] = Some((i, j));
                }
            }
        }
    }
    out
}

/// The layers of a blocked texture opened into one value per pixel ([`block_pixel`]).
fn open_blocks(blocks: BlockLayout, layers: &[Vec<[f32; 4]>]) -> Vec<f32> {
    let s = blocks.blocking().side();
    let (w, h) = blocks.texture_size();
    (0..h * s)
        .flat_map(|y| (0..w * s).map(move |x| (x, y)))
        .map(|(x, y)| {
            let (tx, ty, layer, component) = block_pixel(blocks, x, y);
            layers[layer][ty * w + tx][component]
        })
        .collect()
}

/// A or B of a blocked assembly opened into pixel (k, i) = A(i, k), as the faithful panels
/// show them: `texture` holds 2 x 2 blocks (texel (x, y) = rows 2x.., columns 2y..) or
/// columns of 4 rows (texel (x, y) = rows 4x.. of column y).
fn open_operand(
    blocking: Blocking,
    texture: &Texture<Rgba32F>,
) -> Result<(usize, usize, Vec<f32>)> {
    let data = texture.download()?;
    let (w, h) = (texture.width(), texture.height());
    let s = blocking.side();
    let per_texel = blocking.a_columns_per_texel();
    let (cols, rows) = (h * per_texel, w * s);
    let values = (0..rows)
        .flat_map(|i| (0..cols).map(move |k| (i, k)))
        .map(|(i, k)| match blocking {
            Blocking::Two => data[(k / 2) * w + i / 2][2 * (i % 2) + k % 2],
            Blocking::Four => data[k * w + i / 4][i % 4],
        })
        .collect();
    Ok((cols, rows, values))
}

/// The run watched: the paper's passes over R32F texels, or the blocked method's over
/// RGBA32F blocks.
enum Run<'g> {
    Scalar(Execution<'g>),
    Blocked(Execution<'g, Rgba32F>),
}

/// `f` applied to whichever execution `run` holds (the calls that do not depend on texels).
macro_rules! with_run {
    ($run:expr, $e:ident => $body:expr) => {
        match $run {
            Run::Scalar($e) => $body,
            Run::Blocked($e) => $body,
        }
    };
}

/// What a panel shows: which texture, and how its texels map to entries.
#[derive(Clone, Debug, PartialEq)]
pub enum PanelKind {
    /// One texture of the ping-pong pair (`index` 0 is the one that starts as source), holding
    /// the lower triangle in `layout`; `entries` is [`texel_entries`] of it (blocked runs:
    /// [`block_entries`], each texel opened into its block).
    Matrix {
        /// Which physical texture of the pair.
        index: usize,
        /// Its layout.
        layout: Layout,
        /// The entry at each texel.
        entries: Vec<Option<(usize, usize)>>,
    },
    /// A, n x m texture, texel (k, i) = A(i, k).
    A,
    /// d, n x 1, texel (k, 0) = d(k).
    D,
    /// b, m x 1, texel (i, 0) = b(i) (Kernel 1's output).
    B,
}

/// One texture's contents as read back between passes.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Short name: "C_S", "L_T", "A", "b", "d".
    pub name: String,
    /// What it is, for the label.
    pub description: String,
    /// What it is.
    pub kind: PanelKind,
    /// Width in texels.
    pub width: usize,
    /// Height in texels.
    pub height: usize,
    /// Texel (x, y) is `data[y * width + x]`.
    pub data: Vec<f32>,
    /// The range of the finite values at texels that hold entries (None if there are none).
    pub range: Option<Range>,
}

impl Panel {
    /// The value at texel (x, y).
    pub fn value(&self, x: usize, y: usize) -> f32 {
        self.data[y * self.width + x]
    }

    /// Whether texel (x, y) holds an entry of the matrix or vector.
    pub fn holds_entry(&self, x: usize, y: usize) -> bool {
        match &self.kind {
            PanelKind::Matrix { entries, .. } => entries[y * self.width + x].is_some(),
            _ => true,
        }
    }

    /// One line saying what texel (x, y) holds: its position, the entry and the value.
    pub fn describe(&self, x: usize, y: usize) -> String {
        let v = self.value(x, y);
        let value = if v.is_nan() {
            "NaN".to_string()
        } else {
            format!("{v:.6}")
        };
        let entry = match &self.kind {
            PanelKind::Matrix { entries, .. } => match entries[y * self.width + x] {
                Some((i, j)) => format!("entry ({i}, {j})"),
                None => "no entry (unused, padding or strict upper)".to_string(),
            },
            PanelKind::A => format!("A({y}, {x})"),
            PanelKind::D => format!("d({x})"),
            PanelKind::B => format!("b({x})"),
        };
        format!("{} texel ({x}, {y}) = {entry}: {value}", self.name)
    }
}

/// The outline of a pass: its triangles on the panel of the texture it wrote.
#[derive(Clone, Debug)]
pub struct Outline {
    /// Index into [`Snapshot::panels`].
    pub panel: usize,
    /// Triangle vertices (x, y) in texels of that texture, three per triangle.
    pub triangles: Vec<[f32; 2]>,
}

/// Every texture of a run at one position, with the pass that led there.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Unique per snapshot taken, so renderers know when to refresh their heatmaps.
    pub id: u64,
    /// The operation.
    pub operation: Operation,
    /// The storage format.
    pub format: Format,
    /// The method and, for the blocked method, its blocks: "faithful", "blocked 4x4".
    pub method: String,
    /// Order m.
    pub m: usize,
    /// Passes run so far.
    pub position: usize,
    /// Passes in the plan.
    pub passes: usize,
    /// The last pass run, if any.
    pub last_pass: Option<Pass>,
    /// The textures: the pair first (physical order), then A, b, d for assembly.
    pub panels: Vec<Panel>,
    /// Where the last pass drew.
    pub outline: Option<Outline>,
    /// When done: relative error of the result against the CPU f64 reference.
    pub error: Option<f64>,
}

impl Snapshot {
    /// The status line: operation, format, m, pass number, step k and kernel.
    pub fn status(&self) -> String {
        let head = format!(
            "{} {} {} m={} | pass {}/{}",
            self.operation, self.format, self.method, self.m, self.position, self.passes
        );
        let pass = match &self.last_pass {
            Some(p) => {
                let written = self
                    .outline
                    .as_ref()
                    .map(|o| self.panels[o.panel].name.as_str())
                    .unwrap_or("?");
                format!(" | k={} {} -> {written}", p.step, p.kernel.name())
            }
            None => " | initial state".to_string(),
        };
        let done = match self.error {
            Some(e) => format!(" | done, rel. error vs CPU f64 {e:.2e}"),
            None => String::new(),
        };
        format!("{head}{pass}{done}")
    }
}

/// A run being watched: an [`Execution`] on a problem, with NaN-poisoned textures so texels
/// no pass wrote stand out. The blocked method's runs are shown with each texel opened into
/// its block (one entry per pixel).
pub struct Session<'g> {
    gpu: &'g Gpu,
    operation: Operation,
    options: Options,
    problem: Problem,
    run: Run<'g>,
    last_pass: Option<Pass>,
}

impl<'g> Session<'g> {
    /// Prepares `operation` on `problem` with `options` (a format, or a format and a method
    /// that draws triangles: [`Gpu::resolve_raster`]); errors as the library's start_* give
    /// them, e.g. [`symraster::InputError::Unsupported`] for a format without a plan.
    pub fn new(
        gpu: &'g Gpu,
        operation: Operation,
        options: impl Into<Options>,
        problem: Problem,
    ) -> Result<Self> {
        let options = options.into();
        let options = options.method(gpu.resolve_raster(options.method)?);
        let run = if options.method == Method::Blocked {
            Run::Blocked(start_blocked(gpu, operation, options, &problem)?)
        } else {
            Run::Scalar(start(gpu, operation, options, &problem)?)
        };
        Ok(Self {
            gpu,
            operation,
            options,
            problem,
            run,
            last_pass: None,
        })
    }

    /// The operation.
    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.options.format
    }

    /// Format and method.
    pub fn options(&self) -> Options {
        self.options
    }

    /// The problem.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// Passes run so far.
    pub fn position(&self) -> usize {
        with_run!(&self.run, r => r.position())
    }

    /// Passes in the plan.
    pub fn pass_count(&self) -> usize {
        self.plan().passes.len()
    }

    /// True when every pass has run.
    pub fn is_done(&self) -> bool {
        with_run!(&self.run, r => r.is_done())
    }

    /// The run's plan.
    pub fn plan(&self) -> &Plan {
        with_run!(&self.run, r => r.plan())
    }

    /// The method and blocks shown: "faithful", "blocked 4x4".
    pub fn method_label(&self) -> String {
        match &self.run {
            Run::Scalar(_) => self.options.method.to_string(),
            Run::Blocked(r) => format!("blocked {}", r.blocking()),
        }
    }

    /// Runs the next pass; false when there was none.
    pub fn step(&mut self) -> Result<bool> {
        match with_run!(&mut self.run, r => r.step()?) {
            Some(pass) => {
                self.last_pass = Some(pass);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Goes to position `p` (clamped to the plan): steps forward, or re-runs from the start
    /// when `p` is behind (cheap at the small m the viewer is for).
    pub fn seek(&mut self, p: usize) -> Result<()> {
        let p = p.min(self.pass_count());
        if p < self.position() {
            let fresh = Session::new(self.gpu, self.operation, self.options, self.problem.clone())?;
            *self = fresh;
        }
        while self.position() < p {
            self.step()?;
        }
        Ok(())
    }

    /// Reads every texture back (waits for the GPU).
    pub fn snapshot(&self) -> Result<Snapshot> {
        let mut panels = self.matrix_panels()?;
        panels.extend(self.operand_panels()?);
        let outline = self.outline(&panels);
        let error = if self.is_done() {
            Some(self.result_error()?)
        } else {
            None
        };
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Ok(Snapshot {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            operation: self.operation,
            format: self.options.format,
            method: self.method_label(),
            m: self.problem.order(),
            position: self.position(),
            passes: self.pass_count(),
            last_pass: self.last_pass.clone(),
            panels,
            outline,
            error,
        })
    }

    /// The ping-pong pair's two textures, named by role (source or target) and index.
    fn matrix_panels(&self) -> Result<Vec<Panel>> {
        let layout = with_run!(&self.run, r => r.layout());
        let (entries, side) = match &self.run {
            Run::Scalar(_) => (texel_entries(layout), 1),
            Run::Blocked(r) => (block_entries(r.block_layout()), r.blocking().side()),
        };
        let source_index = with_run!(&self.run, r => r.pair().source_index());
        let mat = self.operation.matrix_name();
        let mut panels = Vec::new();
        for index in 0..2 {
            let (role, what) = if index == source_index {
                ("S", "source (passes read it)")
            } else {
                ("T", "target (passes write it)")
            };
            let (width, height, data) = match &self.run {
                Run::Scalar(r) => {
                    let texture = r.pair().get(index).texture();
                    (texture.width(), texture.height(), texture.download()?)
                }
                Run::Blocked(r) => {
                    let texture = r.pair().get(index);
                    let layers = texture
                        .layers()
                        .iter()
                        .map(Texture::download)
                        .collect::<Result<Vec<_>>>()?;
                    let data = open_blocks(r.block_layout(), &layers);
                    (texture.width() * side, texture.height() * side, data)
                }
            };
            let range = Range::of(
                data.iter()
                    .zip(&entries)
                    .filter(|(_, e)| e.is_some())
                    .map(|(v, _)| *v),
            );
            panels.push(Panel {
                name: format!("{mat}_{role}"),
                description: format!("{what}, texture {index}"),
                kind: PanelKind::Matrix {
                    index,
                    layout,
                    entries: entries.clone(),
                },
                width,
                height,
                data,
                range,
            });
        }
        Ok(panels)
    }

    /// Assembly's inputs and its scaled column b (none for Cholesky).
    fn operand_panels(&self) -> Result<Vec<Panel>> {
        let run = match &self.run {
            Run::Scalar(r) => r,
            Run::Blocked(r) => return self.blocked_operand_panels(r),
        };
        let Operands::Assembly { a, d, b } = run.operands() else {
            return Ok(Vec::new());
        };
        let mut panels = Vec::new();
        for (name, description, kind, texture) in [
            ("A", "A, texel (k, i) = A(i, k)", PanelKind::A, a),
            ("b", "b = A(:, k) * d(k)", PanelKind::B, b.texture()),
            ("d", "d, the diagonal of D^2", PanelKind::D, d),
        ] {
            let data = texture.download()?;
            let range = Range::of(data.iter().copied());
            panels.push(Panel {
                name: name.into(),
                description: description.into(),
                kind,
                width: texture.width(),
                height: texture.height(),
                data,
                range,
            });
        }
        Ok(panels)
    }

    /// A blocked assembly's A, B (its scaled A) and d, opened into one entry per pixel as
    /// the faithful panels show them.
    fn blocked_operand_panels(&self, run: &Execution<'g, Rgba32F>) -> Result<Vec<Panel>> {
        let Operands::Assembly { a, d, b } = run.operands() else {
            return Ok(Vec::new());
        };
        let blocking = run.blocking();
        let mut panels = Vec::new();
        for (name, description, kind, texture) in [
            ("A", "A, texel (k, i) = A(i, k)", PanelKind::A, a),
            (
                "B",
                "B = A·diag(d), texel (k, i) = B(i, k)",
                PanelKind::B,
                b.texture(),
            ),
        ] {
            let (width, height, data) = open_operand(blocking, texture)?;
            let range = Range::of(data.iter().copied());
            panels.push(Panel {
                name: name.into(),
                description: description.into(),
                kind,
                width,
                height,
                data,
                range,
            });
        }
        let values = d.download()?;
        let data: Vec<f32> = match blocking {
            Blocking::Two => values.iter().flat_map(|t| [t[0], t[1]]).collect(),
            Blocking::Four => values.iter().map(|t| t[0]).collect(),
        };
        panels.push(Panel {
            name: "d".into(),
            description: "d, the diagonal of D^2".into(),
            kind: PanelKind::D,
            width: data.len(),
            height: 1,
            range: Range::of(data.iter().copied()),
            data,
        });
        Ok(panels)
    }

    /// The last pass's triangles on the panel it drew into (found by kind, after any swap
    /// that followed the pass), in the panel's pixels (blocked runs: texels times the block
    /// side; the scaling pass draws B, whose texel rows hold 2 or 1 columns of A).
    fn outline(&self, panels: &[Panel]) -> Option<Outline> {
        let pass = self.last_pass.as_ref()?;
        let source = with_run!(&self.run, r => r.pair().source_index());
        let scale = match (&self.run, pass.target) {
            (Run::Scalar(_), _) => [1.0, 1.0],
            // B's panel is (k, i): texel (x, y) spans columns y·c.., rows x·s..; the
            // scaling rectangle covers all of B, so its outline is the whole panel.
            (Run::Blocked(r), Target::ScaledColumn) => {
                let b = r.blocking();
                [b.a_columns_per_texel() as f32, b.side() as f32]
            }
            (Run::Blocked(r), _) => [r.blocking().side() as f32; 2],
        };
        let transpose = matches!(
            (&self.run, pass.target),
            (Run::Blocked(_), Target::ScaledColumn)
        );
        let drew_into = |texture: usize| move |p: &Panel| matches!(p.kind, PanelKind::Matrix { index, .. } if index == texture);
        let panel = match (&pass.target, pass.swap_after) {
            (Target::ScaledColumn, _) => panels.iter().position(|p| p.kind == PanelKind::B),
            (Target::PairTarget, true) | (Target::PairSource, false) => {
                panels.iter().position(drew_into(source))
            }
            (Target::PairTarget, false) | (Target::PairSource, true) => {
                panels.iter().position(drew_into(1 - source))
            }
        }?;
        let triangles = self
            .plan()
            .vertices_of(pass)
            .iter()
            .map(|v: &Vertex| {
                let [x, y] = v.position;
                // Blocked B's texel (x, y) is rows of x, columns of y: shown as (k, i).
                if transpose {
                    [y * scale[0], x * scale[1]]
                } else {
                    [x * scale[0], y * scale[1]]
                }
            })
            .collect();
        Some(Outline { panel, triangles })
    }

    /// The relative error of the current result against the CPU f64 reference (NaN-poisoned
    /// texels that should have been written make it NaN).
    pub fn result_error(&self) -> Result<f64> {
        let got = with_run!(&self.run, r => r.download_lower()?);
        Ok(match self.operation {
            Operation::Assembly => {
                let d: Vec<f64> = self.problem.d.iter().map(|&x| x as f64).collect();
                relative_error(&got, &reference::assemble(&self.problem.a.to_f64(), &d))
            }
            Operation::Cholesky => {
                if check_factor(&got).is_err() {
                    return Ok(f64::NAN);
                }
                let want = reference::cholesky(&self.problem.c.to_f64())?;
                relative_error(&got, &want)
            }
        })
    }
}

/// Starts the blocked method's execution (the options' format and blocking) and poisons with
/// NaN every entry no input fills (the strict upper triangle, unused texels) and the targets.
fn start_blocked<'g>(
    gpu: &'g Gpu,
    operation: Operation,
    options: Options,
    problem: &Problem,
) -> Result<Execution<'g, Rgba32F>> {
    let (format, blocking) = (options.format, options.blocking);
    let m = problem.order();
    let (run, source) = match operation {
        Operation::Assembly => (
            gpu.step(
                symraster::Operation::Assembly {
                    a: &problem.a,
                    d: &problem.d,
                },
                Options::new(format)
                    .blocking(blocking)
                    .method(symraster::Method::Blocked),
            )?
            .into_blocks()?,
            Matrix::zeros(m, m),
        ),
        Operation::Cholesky => (
            gpu.step(
                symraster::Operation::Cholesky(&problem.c),
                Options::new(format)
                    .blocking(blocking)
                    .method(symraster::Method::Blocked),
            )?
            .into_blocks()?,
            problem.c.clone(),
        ),
    };
    let blocks = run.block_layout();
    for (layer, data) in run
        .pair()
        .source()
        .layers()
        .iter()
        .zip(blocks.pack_layers(&source, f32::NAN))
    {
        layer.upload(&data)?;
    }
    for layer in run.pair().target().layers() {
        layer.fill([f32::NAN; 4])?;
    }
    if let Operands::Assembly { b, .. } = run.operands() {
        b.texture().fill([f32::NAN; 4])?;
    }
    Ok(run)
}

/// Starts the library's execution and poisons every texel no input fills with NaN.
fn start<'g>(
    gpu: &'g Gpu,
    operation: Operation,
    options: Options,
    problem: &Problem,
) -> Result<Execution<'g>> {
    let run = match operation {
        Operation::Assembly => gpu
            .step(
                symraster::Operation::Assembly {
                    a: &problem.a,
                    d: &problem.d,
                },
                options,
            )?
            .into_texels()?,
        Operation::Cholesky => gpu
            .step(symraster::Operation::Cholesky(&problem.c), options)?
            .into_texels()?,
    };
    // The source keeps what the library uploaded (zero for assembly, C for Cholesky) at the
    // texels that hold entries; every other texel, and the whole target, becomes NaN.
    let source = run.pair().source().texture();
    let mut data = source.download()?;
    for (v, entry) in data.iter_mut().zip(texel_entries(run.layout())) {
        if entry.is_none() {
            *v = f32::NAN;
        }
    }
    source.upload(&data)?;
    run.pair().target().texture().fill(f32::NAN)?;
    if let Operands::Assembly { b, .. } = run.operands() {
        b.texture().fill(f32::NAN)?;
    }
    Ok(run)
}
