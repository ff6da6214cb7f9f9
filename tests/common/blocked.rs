//! The blocked method's shared test helpers: the pass-coverage check and the garbage upload,
//! for its full- and packed-format tests and both blockings.

use std::collections::BTreeSet;
use symraster::draw::execution::Execution;
use symraster::draw::{Kernel, Pass, Target};
use symraster::gl::Rgba32F;
use symraster::internal::GpuInternals;
use symraster::layout::blocked::{BlockColumn, BlockLayout, Blocking};
use symraster::{
    Error, Format, Gpu, Matrix, NumericalError, Options, problems, reference, relative_error,
};

/// What a blocked kernel does, whatever its blocking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Scaling,
    Addition,
    Factor,
    /// The inverse of the diagonal block's factor, drawn into the source over the factor's
    /// blocks.
    Inverse,
    Panel,
    Subtraction,
}

/// The role of a blocked kernel (panics on others).
pub fn role(kernel: Kernel) -> Role {
    match kernel {
        Kernel::BlockScaling | Kernel::BlockScaling4 => Role::Scaling,
        Kernel::RankKAddition | Kernel::RankKAddition4 => Role::Addition,
        Kernel::BlockFactor
        | Kernel::BlockFactor4
        | Kernel::BlockFactor32
        | Kernel::BlockFactor4x32 => Role::Factor,
        Kernel::BlockInverse
        | Kernel::BlockInverse4
        | Kernel::BlockInverse32
        | Kernel::BlockInverse4x32 => Role::Inverse,
        Kernel::BlockPanel
        | Kernel::BlockPanel4
        | Kernel::BlockPanel32
        | Kernel::BlockPanel4x32 => Role::Panel,
        Kernel::RankKSubtraction
        | Kernel::RankKSubtraction4
        | Kernel::RankKSubtraction32
        | Kernel::RankKSubtraction4x32 => Role::Subtraction,
        other => panic!("{other:?} is not a blocked kernel"),
    }
}

/// The layout a run uses.
pub fn layout_of(run: &Execution<'_, Rgba32F>) -> BlockLayout {
    run.block_layout()
}

/// Uploads `layers` (one texture's contents per layer) into both textures of the run's pair.
pub fn upload_to_pair(run: &Execution<'_, Rgba32F>, layers: &[Vec<[f32; 4]>]) {
    for texture in [run.pair().source(), run.pair().target()] {
        for (layer, data) in texture.layers().iter().zip(layers) {
            layer.upload(data).unwrap();
        }
    }
}

/// Every layer of both pair textures, downloaded.
pub fn pair_layers(run: &Execution<'_, Rgba32F>) -> Vec<Vec<[f32; 4]>> {
    [run.pair().source(), run.pair().target()]
        .iter()
        .flat_map(|t| t.layers().iter().map(|l| l.download().unwrap()))
        .collect()
}

/// Runs every pass of a blocked (RGBA32F) run with its targets (every layer) poisoned with
/// NaN first: the texels that come out not NaN must be exactly `intended(pass)` in every
/// layer the pass draws, with all four entries written (for a copy: what the passes into the
/// pair's target have drawn since the last swap). The rest is restored.
pub fn run_with_poisoned_blocks(
    run: &mut Execution<'_, Rgba32F>,
    intended: impl Fn(&Pass) -> BTreeSet<(usize, usize)>,
) {
    let mut drawn: Vec<Pass> = Vec::new();
    while let Some(pass) = run.next_pass().cloned() {
        let targets = run.target_layers_of(&pass).unwrap();
        let w = targets[0].width();
        let before: Vec<_> = targets.iter().map(|t| t.download().unwrap()).collect();
        for target in targets {
            target.fill([f32::NAN; 4]).unwrap();
        }
        run.step().unwrap();
        let targets = if pass.swap_after {
            run.pair().source().layers()
        } else {
            run.target_layers_of(&pass).unwrap()
        };
        let want = if pass.kernel.is_copy() {
            assert!(!drawn.is_empty(), "a copy follows a pass");
            drawn.iter().flat_map(&intended).collect()
        } else {
            intended(&pass)
        };
        for (layer, target) in targets.iter().enumerate() {
            let after = target.download().unwrap();
            let written: BTreeSet<(usize, usize)> = (0..after.len())
                .filter(|&p| after[p].iter().any(|v| !v.is_nan()))
                .map(|p| (p % w, p / w))
                .collect();
            for &(x, y) in &written {
                assert!(
                    after[y * w + x].iter().all(|v| !v.is_nan()),
                    "({x}, {y}) of layer {layer} partly"
                );
            }
            assert_eq!(
                written,
                want,
                "m={}: {} pass at step {} wrote the wrong texels of layer {layer}",
                run.layout().order(),
                pass.kernel.name(),
                pass.step
            );
            let merged: Vec<[f32; 4]> = after
                .iter()
                .zip(&before[layer])
                .map(|(a, b)| if a[0].is_nan() { *b } else { *a })
                .collect();
            target.upload(&merged).unwrap();
        }
        if pass.swap_after {
            drawn.clear();
        } else if pass.target == Target::PairTarget {
            drawn.push(pass);
        }
    }
}

/// A blocked method's configuration: its blocking and its Cholesky block column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub blocking: Blocking,
    pub column: BlockColumn,
}

impl Blocks {
    /// The layout of an m x m matrix in `format`.
    pub fn layout(self, m: usize, format: Format) -> BlockLayout {
        BlockLayout::with(m, format, self.blocking).with_column(self.column)
    }

    /// The blocked method's options in `format`.
    pub fn options(self, format: Format) -> Options {
        Options::new(format)
            .method(symraster::Method::Blocked)
            .blocking(self.blocking)
            .block_column(self.column)
    }
}

impl std::fmt::Display for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} blocks, block column {}", self.blocking, self.column)
    }
}

/// Both blockings with both block columns, the defaults first, for tests that run each.
pub const BLOCKINGS: [Blocks; 4] = [
    Blocks {
        blocking: Blocking::Four,
        column: BlockColumn::Sixteen,
    },
    Blocks {
        blocking: Blocking::Two,
        column: BlockColumn::Sixteen,
    },
    Blocks {
        blocking: Blocking::Four,
        column: BlockColumn::ThirtyTwo,
    },
    Blocks {
        blocking: Blocking::Two,
        column: BlockColumn::ThirtyTwo,
    },
];

/// A Cholesky of order m made indefinite at each of `columns` (C(j,j) lowered by `drop`) names
/// that column and the pivot before its square root as the f64 reference (LAPACK's INFO − 1)
/// does, in both blockings and block columns (`options` per configuration); so do a zero
/// matrix and a negative 1 x 1.
pub fn check_failing_columns(
    gpu: &Gpu,
    options: impl Fn(Blocks) -> Options,
    m: usize,
    columns: &[usize],
    drop: f32,
) {
    for &column in columns {
        let mut c = problems::well_conditioned_spd(&mut problems::rng(5), m);
        c[(column, column)] -= drop;
        let expected = match reference::cholesky(&c.to_f64()) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column: got, pivot })) => {
                assert_eq!(got, column);
                pivot
            }
            other => panic!("reference: expected NotPositiveDefinite, got {other:?}"),
        };
        for blocking in BLOCKINGS {
            match gpu.cholesky(&c, options(blocking)) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                    column: got,
                    pivot,
                })) => {
                    assert_eq!(got, column, "{blocking}");
                    assert!(
                        (pivot - expected).abs() <= 1e-4 * expected.abs(),
                        "pivot {pivot} against the reference's {expected}"
                    );
                }
                other => panic!("column {column}: expected NotPositiveDefinite, got {other:?}"),
            }
        }
    }
    for (c, blocking) in [Matrix::zeros(4, 4), Matrix::filled(1, 1, -2.0f32)]
        .into_iter()
        .flat_map(|c| BLOCKINGS.map(|b| (c.clone(), b)))
    {
        assert!(matches!(
            gpu.cholesky(&c, options(blocking)),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                column: 0,
                ..
            }))
        ));
    }
}

/// For each order, blocking and block column: assembly (n = 40) and Cholesky in `format` with every pass's
/// targets poisoned with NaN first ([`run_with_poisoned_blocks`]: each pass writes exactly
/// `intended(layout, pass, b_height)`, b_height being A's texel rows for assembly and 0 for
/// Cholesky), the results against the f64 reference.
pub fn check_poisoned_runs(
    gpu: &Gpu,
    format: Format,
    orders: &[usize],
    intended: impl Fn(BlockLayout, &Pass, usize) -> BTreeSet<(usize, usize)>,
) {
    for (m, blocking) in orders.iter().flat_map(|&m| BLOCKINGS.map(|b| (m, b))) {
        let n = 40;
        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, n);
        let d = problems::uniform_vector(&mut rng, n);
        let mut run = gpu
            .start_blocked_assembly_as(&a, &d, blocking.layout(m, format))
            .unwrap();
        let layout = run.block_layout();
        let b_height = layout.a_height(n);
        run_with_poisoned_blocks(&mut run, |pass| intended(layout, pass, b_height));
        let c = run.download_lower().unwrap();
        let d64: Vec<f64> = d.iter().map(|&v| f64::from(v)).collect();
        let c_ref = reference::assemble(&a.to_f64(), &d64);
        assert!(relative_error(&c, &c_ref) < 1e-5, "{blocking} m={m}");

        let spd = problems::well_conditioned_spd(&mut rng, m);
        let mut run = gpu
            .start_blocked_cholesky_as(&spd, blocking.layout(m, format))
            .unwrap();
        let layout = run.block_layout();
        run_with_poisoned_blocks(&mut run, |pass| intended(layout, pass, 0));
        let l = run.download_lower().unwrap();
        let l_ref = reference::cholesky(&spd.to_f64()).unwrap();
        assert!(relative_error(&l, &l_ref) < 1e-5, "{blocking} m={m}");
    }
}
