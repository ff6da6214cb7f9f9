//! The f64 factorizations' kernels (`glsl/double/`), each declared once and checked when its
//! program links, and the programs of one context, compiled on first use.

use crate::error::Result;
use crate::gl::{Buffer, ComputeKernel, ComputeProgram, Context, LazyProgram, Uniform};
use crate::inverse::kernels::double::{DoubleOperand, DoubleProduct, DoublePrograms, DoubleTile};
use std::cell::OnceCell;

/// The largest diagonal block one work group factors (its L in shared memory; a device with
/// GL's minimum of 32 KiB takes one less).
pub const MAX_BLOCK: usize = 64;

/// One diagonal block's Cholesky factor and the transpose of its inverse, and the panel below
/// it, in one launch.
pub static POTRF_BLOCK: ComputeKernel = ComputeKernel {
    name: "double/potrf_block",
    source: include_str!("../../glsl/double/potrf_block.comp"),
    buffers: &[("ABuf", 0), ("InvBuf", 1), ("StatusBuf", 2), ("HeldBuf", 3)],
    uniforms: &["n", "k0", "kb", "nb"],
    optional: &[],
};

/// The f64 Cholesky in one launch, left-looking by tiles that wait for the tiles they read.
pub static POTRF_CHAIN: ComputeKernel = ComputeKernel {
    name: "double/potrf_chain",
    source: include_str!("../../glsl/double/potrf_chain.comp"),
    buffers: &[("ABuf", 0), ("InvBuf", 1), ("SyncBuf", 2), ("SyncPoll", 2)],
    uniforms: &["n", "tile_rows", "spin_limit"],
    optional: &[],
};

/// Z = L⁻¹ in one launch, by tiles that wait for the tiles they read, from L and the
/// inverses of its diagonal tiles [`POTRF_CHAIN`] kept.
pub static TRTRI_CHAIN: ComputeKernel = ComputeKernel {
    name: "double/trtri_chain",
    source: include_str!("../../glsl/double/trtri_chain.comp"),
    buffers: &[("LBuf", 0), ("InvBuf", 1), ("ZBuf", 2), ("SyncBuf", 3)],
    uniforms: &["n", "spin_limit"],
    optional: &[],
};

/// W = 2^e·T·V or 2^e·Tᵀ·V for a lower-triangular T and up to [`TRMV_SIDES`] vectors.
pub static TRMV: ComputeKernel = ComputeKernel {
    name: "double/trmv",
    source: include_str!("../../glsl/double/trmv.comp"),
    buffers: &[("TBuf", 0), ("VBuf", 1), ("WBuf", 2)],
    uniforms: &["n", "k", "transposed", "exponent", "v_off", "w_off", "row0"],
    optional: &[],
};

/// The most vectors one [`TRMV`] launch takes (its `K_MAX`).
pub const TRMV_SIDES: usize = 4;

/// The order of [`POTRF_CHAIN`]'s and [`TRTRI_CHAIN`]'s tiles (its diagonal blocks).
pub const CHAIN_TILE: usize = 32;

/// How [`POTRF_CHAIN`] shortens its critical path, as the f32 chain does and from the same
/// knobs ([`Tuning::chain_fold_for`](crate::Tuning::chain_fold_for) at [`CHAIN_TILE`],
/// [`Tuning::chain_ahead`](crate::Tuning::chain_ahead),
/// [`Tuning::chain_poll`](crate::Tuning::chain_poll)); none changes a bit of the factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainShape {
    /// The sub-diagonal tile's last product formed by the next diagonal tile's group.
    pub fold: bool,
    /// Later terms whose flags a group reads at once after each wait (0: a wait a term; at
    /// most half the group's 256 invocations).
    pub ahead: usize,
    /// How a flag is polled.
    pub poll: crate::tiled::ChainPoll,
}

impl ChainShape {
    /// The chain as `tuning` asks (its defaults: folded, 32 terms ahead, polls by loads).
    pub fn of(tuning: &crate::Tuning) -> Self {
        Self {
            fold: tuning.chain_fold_for(CHAIN_TILE),
            ahead: tuning
                .chain_ahead
                .unwrap_or(crate::tiled::schedule::CHAIN_AHEAD)
                .min(CHAIN_AHEAD_MAX),
            poll: tuning.chain_poll(),
        }
    }

    /// The kernel's defines (`CHAIN_POLL` 1 for atomic polls: the gave-up word is read every
    /// 32 polls either way).
    fn defines(&self) -> String {
        let poll = match self.poll {
            crate::tiled::ChainPoll::Load => 2,
            _ => 1,
        };
        format!(
            "#define CHAIN_FOLD {}\n#define CHAIN_AHEAD {}\n#define CHAIN_POLL {poll}\n",
            u8::from(self.fold),
            self.ahead
        )
    }
}

/// The most terms [`POTRF_CHAIN`]'s group of 256 invocations checks at once (one flag each,
/// two a term off the diagonal).
const CHAIN_AHEAD_MAX: usize = 128;

/// The tile columns of order n's chained launches and their tiles (one work group each): the
/// triangle of [`CHAIN_TILE`] x [`CHAIN_TILE`] tiles on and below the diagonal.
pub fn chain_tiles(n: usize) -> (usize, usize) {
    let columns = n.div_ceil(CHAIN_TILE);
    (columns, columns * (columns + 1) / 2)
}

/// Words before the ready flags in the chains' sync buffers: the ticket, the gave-up word,
/// and for [`POTRF_CHAIN`] the first failed column and its pivot's two halves (spare in
/// [`TRTRI_CHAIN`]'s), and three spare.
pub const CHAIN_HEAD: usize = 8;

/// Panel rows each work group of [`POTRF_BLOCK`] forms (16 invocations a row).
const PANEL_ROWS: usize = 16;

/// f64 entries between strided views, or zeros.
pub static COPY: ComputeKernel = ComputeKernel {
    name: "double/copy",
    source: include_str!("../../glsl/double/copy.comp"),
    buffers: &[("DstBuf", 0), ("SrcBuf", 1)],
    uniforms: &[
        "rows", "cols", "d_off", "d_rs", "d_cs", "s_off", "s_rs", "s_cs", "mode",
    ],
    optional: &[],
};

/// A square's triangle packed by rows, or the square from it.
pub static TRIANGLE: ComputeKernel = ComputeKernel {
    name: "double/triangle",
    source: include_str!("../../glsl/double/triangle.comp"),
    buffers: &[("SquareBuf", 0), ("PackedBuf", 1)],
    uniforms: &["n", "upper", "both", "mode"],
    optional: &[],
};

/// `reciprocal(p)` for the f64 Cholesky's kernels ([`POTRF_BLOCK`], [`POTRF_CHAIN`]): 1/p
/// without a double division.
const RECIPROCAL: &str = include_str!("../../glsl/double/reciprocal.glsl");

/// How the SPD solve's programs read C's packed triangle (`packed_c`), in f64 or f32.
const PACKED_C: &str = include_str!("../../glsl/double/packed_c.glsl");

/// The SPD solve's copy of C to factor (f32, or f64 with `DOUBLE_OUT`), made from C's stored
/// triangle packed by rows.
pub static SPD_UNPACK: ComputeKernel = ComputeKernel {
    name: "double/spd_unpack",
    source: include_str!("../../glsl/double/spd_unpack.comp"),
    buffers: &[("PackedBuf", 0), ("OutBuf", 1)],
    uniforms: &["n", "upper", "exponent"],
    optional: &[],
};

/// r = b − C·x in f64 from C's stored triangle packed by rows (f64 or f32).
pub static SPD_RESIDUAL: ComputeKernel = ComputeKernel {
    name: "double/spd_residual",
    source: include_str!("../../glsl/double/spd_residual.comp"),
    buffers: &[("PackedBuf", 0), ("BBuf", 1), ("XBuf", 2), ("RBuf", 3)],
    uniforms: &["n", "upper", "row0", "x_off", "r_off"],
    optional: &[],
};

/// The most work groups one residual launch uses (GL's minimum for each dimension).
const MAX_ROWS_PER_LAUNCH: usize = 65_535;

/// The f64 factorizations' programs on one context.
pub struct DoubleKernels {
    ctx: Context,
    max_block: usize,
    max_bytes: u64,
    max_groups: usize,
    products: DoublePrograms,
    potrf: OnceCell<ComputeProgram>,
    chain: OnceCell<ComputeProgram>,
    inverse_chain: OnceCell<ComputeProgram>,
    trmv: OnceCell<ComputeProgram>,
    copy: OnceCell<ComputeProgram>,
    triangle: OnceCell<ComputeProgram>,
    /// How the chained Cholesky runs.
    chain_shape: ChainShape,
    /// The SPD solve's programs for C packed in f64 and, for an f32 C, in f32 ([`Packed`]).
    spd: [SpdPrograms; 2],
}

/// The SPD solve's copy (f32 and f64) and residual programs for one precision of the packed C.
struct SpdPrograms {
    unpack: LazyProgram,
    unpack_double: LazyProgram,
    residual: LazyProgram,
}

impl SpdPrograms {
    /// Compiled on first use; `single`: C packed in f32 (`SINGLE_C`).
    fn new(ctx: &Context, single: bool) -> Self {
        let (variant, defines) = match single {
            true => ("f32 C", "#define SINGLE_C\n"),
            false => ("", ""),
        };
        let program = |kernel: &'static ComputeKernel, variant: &str, more: &str| {
            let source = format!("#version 430\n{defines}{more}{PACKED_C}{}", kernel.source);
            LazyProgram::new(ctx, kernel, variant, source)
        };
        let double_variant = format!("{variant} f64 out");
        Self {
            unpack: program(&SPD_UNPACK, variant, ""),
            unpack_double: program(&SPD_UNPACK, &double_variant, "#define DOUBLE_OUT\n"),
            residual: program(&SPD_RESIDUAL, variant, ""),
        }
    }
}

impl SpdPrograms {
    /// The copy in f32, or with `double` in f64.
    fn unpack_for(&self, double: bool) -> &LazyProgram {
        match double {
            true => &self.unpack_double,
            false => &self.unpack,
        }
    }
}

/// The SPD solve's C on the GPU: its stored triangle packed by rows, in f64, or for an f32 C
/// in its own f32 values (half the bytes up, the same residuals: each is widened exactly).
pub enum Packed {
    /// In f64.
    Double(Buffer<f64>),
    /// An f32 C's values.
    Single(Buffer<f32>),
}

impl Packed {
    fn single(&self) -> bool {
        matches!(self, Packed::Single(_))
    }

    fn bind_base(&self, index: u32) {
        match self {
            Packed::Double(b) => b.bind_base(index),
            Packed::Single(b) => b.bind_base(index),
        }
    }
}

impl DoubleKernels {
    /// Nothing compiled yet (the device's limits asked).
    pub fn new(ctx: &Context, chain_shape: ChainShape) -> Result<Self> {
        let limits = crate::gl::ComputeLimits::query(ctx)?;
        // L's rows padded by one entry, and a flag.
        let fits = |nb: usize| (nb * (nb + 1) * 8 + 64) as u64 <= limits.max_shared_bytes;
        let max_block = (1..=MAX_BLOCK).rev().find(|&nb| fits(nb)).unwrap_or(1);
        Ok(Self {
            ctx: ctx.clone(),
            max_block,
            max_bytes: crate::tiled::storage::max_buffer_bytes(limits.max_storage_block_bytes),
            max_groups: limits.max_groups_x as usize,
            products: DoublePrograms::new(),
            potrf: OnceCell::new(),
            chain: OnceCell::new(),
            inverse_chain: OnceCell::new(),
            trmv: OnceCell::new(),
            copy: OnceCell::new(),
            triangle: OnceCell::new(),
            chain_shape,
            spd: [SpdPrograms::new(ctx, false), SpdPrograms::new(ctx, true)],
        })
    }

    /// The largest diagonal block this device's shared memory holds (at most [`MAX_BLOCK`]).
    pub fn max_block(&self) -> usize {
        self.max_block
    }

    /// The most work groups one launch takes in x (GL_MAX_COMPUTE_WORK_GROUP_COUNT).
    pub fn max_groups(&self) -> usize {
        self.max_groups
    }

    /// An error where `len` f64 values exceed one storage buffer of this device.
    pub fn check_fits(&self, what: &str, len: usize) -> Result<()> {
        crate::tiled::storage::check_fits_f64(what, len, self.max_bytes)
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    fn program<'a>(
        &self,
        cell: &'a OnceCell<ComputeProgram>,
        kernel: &'static ComputeKernel,
        defines: &str,
    ) -> Result<&'a ComputeProgram> {
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let pivot = crate::gl::PIVOT_GLSL;
        let source = format!("#version 430\n{defines}{pivot}{}", kernel.source);
        let p = ComputeProgram::new(&self.ctx, kernel, kernel.name, &source)?;
        Ok(cell.get_or_init(|| p))
    }

    /// Hands the SPD solve's two programs for C packed in f64 or (`single`) in f32 (its copy
    /// in f32, or with `double` in f64, and its residual) to the driver to compile in the
    /// background where it compiles in parallel ([`LazyProgram::start`]).
    pub fn start_spd_programs(&self, single: bool, double: bool) {
        let p = &self.spd[usize::from(single)];
        p.unpack_for(double).start();
        p.residual.start();
    }

    /// Compiles [`DoubleKernels::start_spd_programs`]' two programs now (a device that cannot
    /// build them is then known before anything is uploaded for them).
    pub fn spd_programs(&self, single: bool, double: bool) -> Result<()> {
        let p = &self.spd[usize::from(single)];
        p.unpack_for(double).get()?;
        p.residual.get()?;
        Ok(())
    }

    /// `single` (order n, row-major) ← 2^exponent·C rounded to f32 in its lower triangle, NaN
    /// above, from C's stored triangle packed by rows in `packed` (`upper`: the upper one).
    pub fn spd_unpack(
        &self,
        packed: &Packed,
        n: usize,
        upper: bool,
        single: &Buffer<f32>,
        exponent: i32,
    ) -> Result<()> {
        let prog = self.spd[usize::from(packed.single())].unpack.get()?;
        packed.bind_base(0);
        single.bind_base(1);
        self.unpack_launch(prog, n, upper, exponent)
    }

    /// [`DoubleKernels::spd_unpack`] into `square` in f64 (2^exponent·C exactly where it
    /// stays a normal f64).
    pub fn spd_unpack_double(
        &self,
        packed: &Packed,
        n: usize,
        upper: bool,
        square: &Buffer<f64>,
        exponent: i32,
    ) -> Result<()> {
        let prog = self.spd[usize::from(packed.single())].unpack_double.get()?;
        packed.bind_base(0);
        square.bind_base(1);
        self.unpack_launch(prog, n, upper, exponent)
    }

    fn unpack_launch(
        &self,
        prog: &ComputeProgram,
        n: usize,
        upper: bool,
        exponent: i32,
    ) -> Result<()> {
        prog.set_all(&[
            ("n", Uniform::U32(n as u32)),
            ("upper", Uniform::I32(i32::from(upper))),
            ("exponent", Uniform::I32(exponent)),
        ])?;
        let groups = n.div_ceil(16) as u32;
        prog.dispatch([groups, groups, 1])
    }

    /// r ← b − C·x in f64, C of order n as its stored triangle packed by rows, x and r
    /// from the given offsets of their buffers.
    pub fn spd_residual(
        &self,
        packed: &Packed,
        n: usize,
        upper: bool,
        b: &Buffer<f64>,
        (x, x_off): (&Buffer<f64>, usize),
        (r, r_off): (&Buffer<f64>, usize),
    ) -> Result<()> {
        let prog = self.spd[usize::from(packed.single())].residual.get()?;
        packed.bind_base(0);
        b.bind_base(1);
        x.bind_base(2);
        r.bind_base(3);
        prog.set_all(&[
            ("n", Uniform::U32(n as u32)),
            ("upper", Uniform::I32(i32::from(upper))),
            ("x_off", Uniform::U32(x_off as u32)),
            ("r_off", Uniform::U32(r_off as u32)),
        ])?;
        let mut row0 = 0;
        while row0 < n {
            let rows = (n - row0).min(MAX_ROWS_PER_LAUNCH);
            prog.set("row0", Uniform::U32(row0 as u32))?;
            prog.dispatch([rows as u32, 1, 1])?;
            row0 += rows;
        }
        Ok(())
    }

    /// C = α·A·B + β·D + γ·I in f64 (the tile [`DoubleTile::for_product`]'s).
    pub fn dgemm(&self, p: DoubleProduct<'_>) -> Result<()> {
        let tile = DoubleTile::for_product(p.c.view.rows, p.c.view.cols);
        self.products.dgemm(&self.ctx, p, false, tile).map(|_| ())
    }

    /// [`DoubleKernels::dgemm`] returning ‖C‖_F².
    pub fn dgemm_sums(&self, p: DoubleProduct<'_>) -> Result<f64> {
        let tile = DoubleTile::for_product(p.c.view.rows, p.c.view.cols);
        self.products.dgemm(&self.ctx, p, true, tile)
    }

    /// dst ← src over dst's shape, or (`src` None) zeros.
    pub fn copy(&self, dst: DoubleOperand<'_>, src: Option<DoubleOperand<'_>>) -> Result<()> {
        self.copy_mode(dst, src, i32::from(src.is_none()))
    }

    /// `square` (order n, row-major) ← the symmetric C whose triangle `packed` holds by rows
    /// (`upper`: the upper one): its lower triangle, or with `both` all of it, NaN elsewhere.
    pub fn unpack(
        &self,
        packed: &Buffer<f64>,
        upper: bool,
        square: &Buffer<f64>,
        n: usize,
        both: bool,
    ) -> Result<()> {
        self.triangle_mode(square, n, packed, upper, both, 0)
    }

    /// `packed` ← the lower triangle L of `square` (order n, row-major) by rows, or with
    /// `upper` U = Lᵀ by rows.
    pub fn pack(
        &self,
        square: &Buffer<f64>,
        n: usize,
        packed: &Buffer<f64>,
        upper: bool,
    ) -> Result<()> {
        self.triangle_mode(square, n, packed, upper, false, 1)
    }

    fn triangle_mode(
        &self,
        square: &Buffer<f64>,
        n: usize,
        packed: &Buffer<f64>,
        upper: bool,
        both: bool,
        mode: i32,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let prog = self.program(&self.triangle, &TRIANGLE, "")?;
        square.bind_base(0);
        packed.bind_base(1);
        prog.set_all(&[
            ("n", Uniform::U32(n as u32)),
            ("upper", Uniform::I32(i32::from(upper))),
            ("both", Uniform::I32(i32::from(both))),
            ("mode", Uniform::I32(mode)),
        ])?;
        let groups = n.div_ceil(16) as u32;
        prog.dispatch([groups, groups, 1])
    }

    fn copy_mode(
        &self,
        dst: DoubleOperand<'_>,
        src: Option<DoubleOperand<'_>>,
        mode: i32,
    ) -> Result<()> {
        let v = dst.view;
        if v.rows == 0 || v.cols == 0 {
            return Ok(());
        }
        let prog = self.program(&self.copy, &COPY, "")?;
        let u = |x: usize| Uniform::U32(x as u32);
        let s = src.unwrap_or(dst);
        dst.buffer.bind_base(0);
        s.buffer.bind_base(1);
        prog.set_all(&[
            ("rows", u(v.rows)),
            ("cols", u(v.cols)),
            ("d_off", u(v.offset)),
            ("d_rs", u(v.rs)),
            ("d_cs", u(v.cs)),
            ("s_off", u(s.view.offset)),
            ("s_rs", u(s.view.rs)),
            ("s_cs", u(s.view.cs)),
            ("mode", Uniform::I32(mode)),
        ])?;
        prog.dispatch([v.cols.div_ceil(16) as u32, v.rows.div_ceil(16) as u32, 1])
    }

    /// Factors the kb x kb diagonal block at (k0, k0) of `a` (order n, row-major, blocks of nb
    /// before it) and forms the panel L21 = A21·L⁻ᵀ below it in place; writes inv(L)ᵀ at k0·nb
    /// of `inv` (row stride nb) and L over the block, or where a panel follows at k0·nb of
    /// `held`, moved into `a` by the next block's launch (the block before's from there now).
    /// A failed pivot goes to `status`.
    #[allow(clippy::too_many_arguments)]
    pub fn potrf_block(
        &self,
        a: &Buffer<f64>,
        n: usize,
        k0: usize,
        kb: usize,
        nb: usize,
        inv: &Buffer<f64>,
        held: &Buffer<f64>,
        status: &Buffer<u32>,
    ) -> Result<()> {
        debug_assert!(kb <= nb && nb <= self.max_block && k0.is_multiple_of(nb) && k0 + kb <= n);
        let defines = format!("#define NB {}u\n{RECIPROCAL}", self.max_block);
        let prog = self.program(&self.potrf, &POTRF_BLOCK, &defines)?;
        let u = |x: usize| Uniform::U32(x as u32);
        a.bind_base(0);
        inv.bind_base(1);
        status.bind_base(2);
        held.bind_base(3);
        prog.set_all(&[("n", u(n)), ("k0", u(k0)), ("kb", u(kb)), ("nb", u(nb))])?;
        let groups = (n - k0 - kb).div_ceil(PANEL_ROWS).max(1);
        prog.dispatch([groups as u32, 1, 1])
    }

    /// A chained kernel's program, its tiles of [`CHAIN_TILE`].
    fn chain_program<'a>(
        &self,
        cell: &'a OnceCell<ComputeProgram>,
        kernel: &'static ComputeKernel,
    ) -> Result<&'a ComputeProgram> {
        self.program(cell, kernel, &format!("#define NB {CHAIN_TILE}u\n"))
    }

    /// Factors `a` (order n, row-major, its lower triangle) in place by one chained launch of
    /// [`POTRF_CHAIN`] over `tiles` tiles of [`CHAIN_TILE`] (n's tile columns' triangle),
    /// inv(L_jj)ᵀ of each diagonal tile at rows j·[`CHAIN_TILE`].. of `inv` (row stride
    /// [`CHAIN_TILE`]); `sync` holds [`CHAIN_HEAD`] words and a flag per tile.
    pub fn potrf_chain(
        &self,
        a: &Buffer<f64>,
        inv: &Buffer<f64>,
        sync: &Buffer<u32>,
        n: usize,
        spin_limit: usize,
    ) -> Result<()> {
        let defines = format!(
            "#define NB {CHAIN_TILE}u\n{}{RECIPROCAL}",
            self.chain_shape.defines()
        );
        let prog = self.program(&self.chain, &POTRF_CHAIN, &defines)?;
        let (columns, tiles) = chain_tiles(n);
        debug_assert!(sync.len() >= CHAIN_HEAD + tiles && inv.len() >= n * CHAIN_TILE);
        let u = |x: usize| Uniform::U32(x as u32);
        a.bind_base(0);
        inv.bind_base(1);
        sync.bind_base(2);
        prog.set_all(&[
            ("n", u(n)),
            ("tile_rows", u(columns)),
            ("spin_limit", u(spin_limit)),
        ])?;
        prog.dispatch([tiles as u32, 1, 1])
    }

    /// `z` (order n, row-major) ← L⁻¹ in its lower triangle (zeros above it in the diagonal
    /// tiles, the tiles above those untouched) by one
    /// chained launch of [`TRTRI_CHAIN`], from L in `l`'s lower triangle and the transposed
    /// inverses of its diagonal tiles of [`CHAIN_TILE`] in `inv` (as [`Self::potrf_chain`]
    /// keeps them); `sync` holds [`CHAIN_HEAD`] words and a flag per tile.
    pub fn trtri_chain(
        &self,
        (l, inv, z): (&Buffer<f64>, &Buffer<f64>, &Buffer<f64>),
        sync: &Buffer<u32>,
        n: usize,
        spin_limit: usize,
    ) -> Result<()> {
        let prog = self.chain_program(&self.inverse_chain, &TRTRI_CHAIN)?;
        let (_, tiles) = chain_tiles(n);
        debug_assert!(sync.len() >= CHAIN_HEAD + tiles && inv.len() >= n * CHAIN_TILE);
        let u = |x: usize| Uniform::U32(x as u32);
        l.bind_base(0);
        inv.bind_base(1);
        z.bind_base(2);
        sync.bind_base(3);
        prog.set_all(&[("n", u(n)), ("spin_limit", u(spin_limit))])?;
        prog.dispatch([tiles as u32, 1, 1])
    }

    /// W ← 2^exponent·T·V, or with `transposed` 2^exponent·Tᵀ·V, T the lower triangle of `t`
    /// (order n, row-major; nothing above its diagonal read), V and W `k` vectors of n entries
    /// one after another from the given offsets (k at most [`TRMV_SIDES`]).
    pub fn trmv(
        &self,
        (t, n): (&Buffer<f64>, usize),
        transposed: bool,
        (v, v_off): (&Buffer<f64>, usize),
        (w, w_off): (&Buffer<f64>, usize),
        k: usize,
        exponent: i32,
    ) -> Result<()> {
        debug_assert!((1..=TRMV_SIDES).contains(&k));
        let prog = self.program(&self.trmv, &TRMV, "")?;
        let u = |x: usize| Uniform::U32(x as u32);
        t.bind_base(0);
        v.bind_base(1);
        w.bind_base(2);
        prog.set_all(&[
            ("n", u(n)),
            ("k", u(k)),
            ("transposed", Uniform::I32(i32::from(transposed))),
            ("exponent", Uniform::I32(exponent)),
            ("v_off", u(v_off)),
            ("w_off", u(w_off)),
        ])?;
        let mut row0 = 0;
        while row0 < n {
            let rows = (n - row0).min(MAX_ROWS_PER_LAUNCH);
            prog.set("row0", u(row0))?;
            prog.dispatch([rows as u32, 1, 1])?;
            row0 += rows;
        }
        Ok(())
    }
}
