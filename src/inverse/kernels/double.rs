//! Double-precision products on the GPU (glsl/inverse/dgemm.comp) for what the sign function
//! and the Lyapunov solver need in f64: the Newton-Schulz refinement of each inverse and the
//! polish of S (where I − S² and I − M·X cancel to f64's last digits), the commutation test
//! ‖A·S − S·A‖_F and the Lyapunov residual Q − A·X − X·Aᵀ. Only the matrices' values and
//! per-tile sums of squares cross to the CPU; no product runs there.

use super::{DeviceSquare, Inverter};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, ComputeProgram, Context, Uniform};
use std::cell::{OnceCell, Ref, RefCell};
use crate::matrix::Matrix;
use crate::tiled::View;

/// Work groups a product should launch before a larger tile is taken: enough for every
/// multiprocessor of a large GPU (132 on the H100/H200) to hold about two.
const MIN_GROUPS: usize = 256;

/// The work-group tile of the f64 product (glsl/inverse/dgemm.comp): how many entries of C one
/// work group (16 x 16 invocations, 512 for two of the 128 x 128 ones) computes, and how many
/// each invocation holds in registers. Larger tiles read less per flop; smaller ones give
/// small products enough work groups ([`DoubleTile::for_product`] picks by C's shape). No
/// tile holds 8 x 8 entries per invocation: NVIDIA's compiler rounded such tiles' f64
/// accumulators to f32 (docs/contributing.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoubleTile {
    /// 64 x 64, 4 x 4 per invocation, depth slices of 16.
    Small,
    /// 128 x 64, 8 x 4 per invocation, depth slices of 8.
    Medium,
    /// 64 x 128, 4 x 8 per invocation, depth slices of 8 (Medium's registers, the other way
    /// round: B's slice is the wider one). A variant for the sweep (bench/src/bin/dgemm_bench.rs).
    Wide,
    /// 128 x 64, 8 x 4 per invocation, depth slices of 4: half Medium's shared memory (more
    /// resident work groups) for twice the barriers. A variant for the sweep.
    MediumShallow,
    /// 64 x 64, 4 x 4 per invocation, depth slices of 8: Small with half its shared memory
    /// (the tile of products too small for [`DoubleTile::LargePairs`]).
    SmallShallow,
    /// Medium with each invocation's rows and columns in adjacent pairs: its reads of a slice
    /// are half as many 16-byte loads.
    MediumPairs,
    /// Small's registers in pairs, depth slices of 16.
    SmallPairs,
    /// 128 x 128 by 512 invocations of 8 x 4 in pairs (Medium's registers, a wider tile: less
    /// read per flop); the tile of large products.
    LargePairs,
    /// 128 x 128 by 512 invocations of 4 x 8 in pairs: fewer 16-byte reads per depth than
    /// LargePairs (a warp's rows are one pair apart, its columns sixteen).
    LargePairsTall,
}

/// A tile's sizes: BM x BN per work group, TM x TN per invocation, depth slices of BK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TileShape {
    bm: usize,
    bn: usize,
    tm: usize,
    tn: usize,
    bk: usize,
    /// Rows and columns in adjacent pairs (the kernel's PAIRS).
    pairs: bool,
}

impl DoubleTile {
    /// Every tile, in declaration order (the programs' index): the two measured first, then
    /// the sweep's variants ([`DoubleTile::for_product`] picks `SmallShallow` or
    /// `LargePairs`).
    pub const ALL: [DoubleTile; 9] = [
        DoubleTile::Small,
        DoubleTile::Medium,
        DoubleTile::Wide,
        DoubleTile::MediumShallow,
        DoubleTile::SmallShallow,
        DoubleTile::MediumPairs,
        DoubleTile::SmallPairs,
        DoubleTile::LargePairs,
        DoubleTile::LargePairsTall,
    ];

    fn shape(self) -> TileShape {
        let (bm, bn, tm, tn, bk, pairs) = match self {
            DoubleTile::Small => (64, 64, 4, 4, 16, false),
            DoubleTile::Medium => (128, 64, 8, 4, 8, false),
            DoubleTile::Wide => (64, 128, 4, 8, 8, false),
            DoubleTile::MediumShallow => (128, 64, 8, 4, 4, false),
            DoubleTile::SmallShallow => (64, 64, 4, 4, 8, false),
            DoubleTile::MediumPairs => (128, 64, 8, 4, 8, true),
            DoubleTile::SmallPairs => (64, 64, 4, 4, 16, true),
            DoubleTile::LargePairs => (128, 128, 8, 4, 8, true),
            DoubleTile::LargePairsTall => (128, 128, 4, 8, 8, true),
        };
        TileShape {
            bm,
            bn,
            tm,
            tn,
            bk,
            pairs,
        }
    }

    /// Rows of C per work group.
    pub fn rows(self) -> usize {
        self.shape().bm
    }

    /// Columns of C per work group.
    pub fn cols(self) -> usize {
        self.shape().bn
    }

    /// The tile for a C of `rows` x `cols`: 128 x 128 in pairs where it fits inside C and still
    /// launches [`MIN_GROUPS`] work groups, else 64 x 64 with depth slices of 8, the fastest of
    /// the others from order 1024 to 8192 (`figures/h200/experiments/dgemm.csv`).
    pub fn for_product(rows: usize, cols: usize) -> Self {
        let large = DoubleTile::LargePairs;
        if rows >= large.rows()
            && cols >= large.cols()
            && rows.div_ceil(large.rows()) * cols.div_ceil(large.cols()) >= MIN_GROUPS
        {
            large
        } else {
            DoubleTile::SmallShallow
        }
    }

    /// The depth one launch covers: each invocation runs a loop over its slices and one over
    /// each slice's BK depths (the loops inside are unrolled), together within
    /// [`crate::gl::LOOP_BUDGET`] iterations for the software renderers' limit.
    pub fn depth_per_launch(self) -> usize {
        let bk = self.shape().bk;
        crate::gl::LOOP_BUDGET / (bk + 1) * bk
    }

    /// "BMxBN" (with "kBK" where a variant differs only in its depth slices), for messages
    /// and benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            DoubleTile::Small => "64x64",
            DoubleTile::Medium => "128x64",
            DoubleTile::Wide => "64x128",
            DoubleTile::MediumShallow => "128x64k4",
            DoubleTile::SmallShallow => "64x64k8",
            DoubleTile::MediumPairs => "128x64p",
            DoubleTile::SmallPairs => "64x64p",
            DoubleTile::LargePairs => "128x128p",
            DoubleTile::LargePairsTall => "128x128pt",
        }
    }

    /// The kernel's source with this tile's #defines.
    fn source(self) -> String {
        let s = self.shape();
        format!(
            "#version 430\n#define WG_X {}\n#define WG_Y {}\n#define BM {}u\n#define BN {}u\n\
             #define TM {}u\n#define TN {}u\n#define BK {}u\n#define PAIRS {}\n{}",
            s.bn / s.tn,
            s.bm / s.tm,
            s.bm,
            s.bn,
            s.tm,
            s.tn,
            s.bk,
            u8::from(s.pairs),
            crate::inverse::table::DGEMM.source
        )
    }
}

/// The f64 product's programs, one per [`DoubleTile`], and the f64 ↔ f32 conversions
/// ([`convert`](crate::inverse::convert)), each compiled on first use.
pub struct DoublePrograms {
    programs: [OnceCell<ComputeProgram>; DoubleTile::ALL.len()],
    convert: OnceCell<ComputeProgram>,
    /// The per-work-group sums of the products and conversions, kept between calls (grown
    /// when too small): one allocation and first touch per Inverter, not one per product.
    partial: RefCell<Option<Buffer<f64>>>,
    /// A one-entry f32 buffer bound where a conversion has no f32 operand.
    unused: OnceCell<Buffer<f32>>,
    /// Squares handed back by finished calls ([`Inverter::recycle_double`],
    /// [`Inverter::recycle_single`]) for the next call of the same order: allocating and first
    /// touching a large square costs time on every call, several squares per Lyapunov solve.
    free_double: RefCell<Vec<Buffer<f64>>>,
    free_single: RefCell<Vec<Buffer<f32>>>,
}

/// The most squares of each precision kept for reuse (a Lyapunov solve at order n hands back
/// 6 f64 and about 11 f32 ones).
const KEPT_SQUARES: usize = 16;

/// `b`, pushed onto `free`, the oldest dropped beyond [`KEPT_SQUARES`] and every kept square
/// of another order dropped: the device memory held between calls is at most one call's.
fn keep<T: crate::gl::Pod>(free: &RefCell<Vec<Buffer<T>>>, b: Buffer<T>) {
    let mut free = free.borrow_mut();
    free.retain(|kept| kept.len() == b.len());
    if free.len() == KEPT_SQUARES {
        free.remove(0);
    }
    free.push(b);
}

/// A kept buffer of exactly `len` entries, if any.
fn reuse<T: crate::gl::Pod>(free: &RefCell<Vec<Buffer<T>>>, len: usize) -> Option<Buffer<T>> {
    let mut free = free.borrow_mut();
    let at = free.iter().rposition(|b| b.len() == len)?;
    Some(free.remove(at))
}

impl DoublePrograms {
    /// None compiled yet.
    pub fn new() -> Self {
        Self {
            programs: Default::default(),
            convert: OnceCell::new(),
            partial: RefCell::new(None),
            unused: OnceCell::new(),
            free_double: RefCell::new(Vec::new()),
            free_single: RefCell::new(Vec::new()),
        }
    }

    /// Room for `len` per-work-group sums, reused across calls (every dispatch ends in a
    /// storage barrier, so the next launch's writes follow the last one's reads).
    pub(crate) fn partial(&self, ctx: &Context, len: usize) -> Result<Ref<'_, Buffer<f64>>> {
        let small = self.partial.borrow().as_ref().is_none_or(|b| b.len() < len);
        if small {
            let b = Buffer::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len.max(1).next_power_of_two(),
            )?;
            *self.partial.borrow_mut() = Some(b);
        }
        let b = Ref::filter_map(self.partial.borrow(), Option::as_ref);
        Ok(b.unwrap_or_else(|_| unreachable!("allocated above")))
    }

    /// A one-entry f32 buffer for unused bindings.
    pub(crate) fn unused(&self, ctx: &Context) -> Result<&Buffer<f32>> {
        if let Some(b) = self.unused.get() {
            return Ok(b);
        }
        let b = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Dynamic, 1)?;
        Ok(self.unused.get_or_init(|| b))
    }

    /// The conversions' program on `ctx`.
    pub(crate) fn convert(&self, ctx: &Context) -> Result<&ComputeProgram> {
        if let Some(p) = self.convert.get() {
            return Ok(p);
        }
        let kernel = &crate::inverse::table::CONVERT;
        let p = ComputeProgram::new(ctx, kernel, kernel.name, &format!("#version 430\n{}", kernel.source))?;
        Ok(self.convert.get_or_init(|| p))
    }

    /// The program of `tile` on `ctx`.
    fn get(&self, ctx: &Context, tile: DoubleTile) -> Result<&ComputeProgram> {
        let cell = &self.programs[tile as usize];
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let p = ComputeProgram::new(ctx, &crate::inverse::table::DGEMM, tile.name(), &tile.source())?;
        Ok(cell.get_or_init(|| p))
    }
}

impl Default for DoublePrograms {
    fn default() -> Self {
        Self::new()
    }
}

/// An order-n matrix of f64 in a storage buffer, row-major.
pub struct DoubleSquare {
    /// The buffer.
    pub buffer: Buffer<f64>,
    /// The order.
    pub n: usize,
}

impl DoubleSquare {
    /// Room for an order-n matrix (unwritten: fresh, or one a finished call handed back with
    /// [`Inverter::recycle_double`]).
    pub fn new(inv: &Inverter, what: &str, n: usize) -> Result<Self> {
        crate::tiled::storage::check_fits_f64(what, n * n, inv.max_bytes())?;
        if let Some(buffer) = reuse(&inv.dgemm_programs().free_double, (n * n).max(1)) {
            return Ok(Self { buffer, n });
        }
        Ok(Self {
            // Static: the values are written from the host, and a Dynamic buffer written so
            // may be placed in host memory, where the products would read it over the bus.
            buffer: Buffer::uninitialized(
                inv.context(),
                BufferTarget::Storage,
                BufferUsage::Static,
                (n * n).max(1),
            )?,
            n,
        })
    }

    /// Uploads the square `a`.
    pub fn upload(inv: &Inverter, what: &str, a: &Matrix<f64>) -> Result<Self> {
        let mut d = Self::new(inv, what, a.rows())?;
        d.buffer.upload(a.as_slice())?;
        Ok(d)
    }

    /// Overwrites the values with `a` (of the same order).
    pub fn write(&self, a: &Matrix<f64>) -> Result<()> {
        self.buffer.write(0, a.as_slice())
    }

    /// The whole matrix, or (`transposed`) its transpose, as an operand.
    pub fn op(&self, transposed: bool) -> DoubleOperand<'_> {
        let v = View::row_major(self.n, self.n);
        DoubleOperand {
            buffer: &self.buffer,
            view: if transposed { v.t() } else { v },
        }
    }

    /// Reads the matrix back.
    pub fn download(&self) -> Result<Matrix<f64>> {
        Matrix::from_row_major(
            self.n,
            self.n,
            self.buffer.download_range(0, self.n * self.n)?,
        )
    }
}

impl Inverter {
    /// Keeps `square`'s buffer for the next [`DoubleSquare::new`] of its order.
    pub fn recycle_double(&self, square: DoubleSquare) {
        keep(&self.dgemm_programs().free_double, square.buffer);
    }

    /// An order-n f32 square, unwritten: one handed back with [`Inverter::recycle_single`] or
    /// a fresh [`Inverter::buffer`].
    pub fn single_square(&self, what: &str, n: usize) -> Result<DeviceSquare> {
        if let Some(buffer) = reuse(&self.dgemm_programs().free_single, (n * n).max(1)) {
            return Ok(DeviceSquare { buffer, n });
        }
        Ok(DeviceSquare {
            buffer: self.buffer(what, n * n)?,
            n,
        })
    }

    /// Keeps `square`'s buffer for the next [`Inverter::single_square`] of its order.
    pub fn recycle_single(&self, square: DeviceSquare) {
        keep(&self.dgemm_programs().free_single, square.buffer);
    }

    /// Frees the squares kept for reuse (they hold device memory between calls).
    pub fn release_kept_squares(&self) {
        self.dgemm_programs().free_double.borrow_mut().clear();
        self.dgemm_programs().free_single.borrow_mut().clear();
    }
}

/// A strided view of a buffer of f64.
#[derive(Clone, Copy)]
pub struct DoubleOperand<'a> {
    /// The buffer.
    pub buffer: &'a Buffer<f64>,
    /// Which entries, as for the f32 kernels.
    pub view: View,
}

/// C = α·A·B + β·D + γ·I in f64 (A rows x depth, B depth x cols; D: C's shape, read only where
/// β ≠ 0), optionally returning ‖C‖_F².
#[derive(Clone, Copy)]
pub struct DoubleProduct<'a> {
    /// The result (must not overlap A or B).
    pub c: DoubleOperand<'a>,
    /// The left factor.
    pub a: DoubleOperand<'a>,
    /// The right factor.
    pub b: DoubleOperand<'a>,
    /// The term scaled by β (C itself allowed).
    pub d: DoubleOperand<'a>,
    /// α.
    pub alpha: f64,
    /// β (0: D unread).
    pub beta: f64,
    /// γ, added on C's diagonal.
    pub gamma: f64,
    /// Only C's lower triangle wanted: the tiles wholly above its diagonal are skipped (left
    /// unwritten).
    pub lower: bool,
}

impl<'a> DoubleProduct<'a> {
    /// C = A·B.
    pub fn new(c: DoubleOperand<'a>, a: DoubleOperand<'a>, b: DoubleOperand<'a>) -> Self {
        Self {
            c,
            a,
            b,
            d: c,
            alpha: 1.0,
            beta: 0.0,
            gamma: 0.0,
            lower: false,
        }
    }

    /// α in place of 1.
    pub fn alpha(self, alpha: f64) -> Self {
        Self { alpha, ..self }
    }

    /// Adds β·D.
    pub fn plus(self, beta: f64, d: DoubleOperand<'a>) -> Self {
        Self { beta, d, ..self }
    }

    /// Adds γ·I.
    pub fn plus_identity(self, gamma: f64) -> Self {
        Self { gamma, ..self }
    }

    /// Only C's lower triangle (entries above it may be left unwritten).
    pub fn lower(self) -> Self {
        Self {
            lower: true,
            ..self
        }
    }
}

/// The two 32-bit halves of `v`, as the kernel unpacks them.
pub(crate) fn halves(v: f64) -> (Uniform, Uniform) {
    let bits = v.to_bits();
    (Uniform::U32(bits as u32), Uniform::U32((bits >> 32) as u32))
}

impl Inverter {
    /// Runs the f64 product `p`; with `sums`, returns ‖C‖_F² (per-tile sums added on the
    /// CPU), else 0. The tile is [`DoubleTile::for_product`]'s.
    pub fn dgemm(&self, p: DoubleProduct<'_>, sums: bool) -> Result<f64> {
        let tile = DoubleTile::for_product(p.c.view.rows, p.c.view.cols);
        self.dgemm_with(p, sums, tile)
    }

    /// [`Inverter::dgemm`] with work-group tile `tile`.
    pub fn dgemm_with(&self, p: DoubleProduct<'_>, sums: bool, tile: DoubleTile) -> Result<f64> {
        self.dgemm_programs().dgemm(self.context(), p, sums, tile)
    }
}

impl DoublePrograms {
    /// Runs the f64 product `p` on `ctx` with work-group tile `tile`; with `sums`, returns
    /// ‖C‖_F² (per-tile sums added on the CPU), else 0.
    pub(crate) fn dgemm(
        &self,
        ctx: &Context,
        p: DoubleProduct<'_>,
        sums: bool,
        tile: DoubleTile,
    ) -> Result<f64> {
        let (c, a, b) = (p.c.view, p.a.view, p.b.view);
        debug_assert!(a.rows == c.rows && b.cols == c.cols && a.cols == b.rows);
        if c.rows == 0 || c.cols == 0 {
            return Ok(0.0);
        }
        let groups = [c.cols.div_ceil(tile.cols()), c.rows.div_ceil(tile.rows())];
        let partial = self.partial(ctx, groups[0] * groups[1])?;
        let prog = self.get(ctx, tile)?;
        let u = |v: usize| Uniform::U32(v as u32);
        let depth = a.cols;
        let mut k0 = 0;
        loop {
            let k1 = (k0 + tile.depth_per_launch()).min(depth);
            let last = k1 == depth;
            // Later slices add onto C.
            let (d, beta, gamma) = if k0 == 0 {
                (p.d, p.beta, p.gamma)
            } else {
                (p.c, 1.0, 0.0)
            };
            p.c.buffer.bind_base(0);
            p.a.buffer.bind_base(1);
            p.b.buffer.bind_base(2);
            d.buffer.bind_base(3);
            partial.bind_base(4);
            let (al, ah) = halves(p.alpha);
            let (bl, bh) = halves(beta);
            let (gl, gh) = halves(gamma);
            let dv = d.view;
            prog.set_all(&[
                ("rows", u(c.rows)),
                ("cols", u(c.cols)),
                ("k0", u(k0)),
                ("k1", u(k1)),
                ("c_off", u(c.offset)),
                ("c_rs", u(c.rs)),
                ("c_cs", u(c.cs)),
                ("a_off", u(a.offset)),
                ("a_rs", u(a.rs)),
                ("a_cs", u(a.cs)),
                ("b_off", u(b.offset)),
                ("b_rs", u(b.rs)),
                ("b_cs", u(b.cs)),
                ("d_off", u(dv.offset)),
                ("d_rs", u(dv.rs)),
                ("d_cs", u(dv.cs)),
                ("alpha_lo", al),
                ("alpha_hi", ah),
                ("beta_lo", bl),
                ("beta_hi", bh),
                ("gamma_lo", gl),
                ("gamma_hi", gh),
                ("sums", Uniform::I32(i32::from(sums && last))),
                ("lower", Uniform::I32(i32::from(p.lower))),
            ])?;
            prog.dispatch([groups[0] as u32, groups[1] as u32, 1])?;
            if last {
                break;
            }
            k0 = k1;
        }
        if !sums {
            return Ok(0.0);
        }
        Ok(partial
            .download_range(0, groups[0] * groups[1])?
            .iter()
            .sum())
    }
}

/// ‖I − S²‖_F below which a polish step that no longer halves it ends the polish: from there
/// Newton-Schulz converges quadratically, so such a step has reached rounding. Above it (a
/// polish handed an unconverged Newton iterate, [`SignOptions::handover`]) a step need only
/// lower it.
///
/// [`SignOptions::handover`]: crate::inverse::SignOptions::handover
pub const QUADRATIC_BELOW: f64 = 1e-3;

/// ‖I − S²‖_F from which [`PolishCorrection::Single`] forms the correction in f32: where the
/// converged f32 iteration leaves S (‖E‖ ≈ 1e-5), its error (≲ u₃₂·‖S‖²·‖E‖, below) stays at
/// the level of the iterate's own. Newton-Schulz converges to the sign of the S it has, so
/// an error made at a larger ‖E‖ would stay in S: a polish handed an unconverged iterate
/// ([`SignOptions::handover`]) corrects in f64 until ‖E‖ is below this.
///
/// [`SignOptions::handover`]: crate::inverse::SignOptions::handover
pub const SINGLE_CORRECTION_BELOW: f64 = 1e-5;

/// How the polish S ← S + S·E/2 (E = I − S², formed in f64 where it cancels) forms its
/// correction S·E.
///
/// In f32 it suffices: fl₃₂(S)·fl₃₂(E) = S·E + Δ with ‖Δ‖ ≲ (√n + 2)·u₃₂·‖S‖·‖E‖, and the
/// next E' = ¾E² + ¼E³ − (S·Δ + Δ·S)/2 − Δ²/4, so ‖E'‖ ≲ ¾‖E‖² + (√n + 2)·u₃₂·‖S‖²·‖E‖: still
/// a contraction far below 1/2 per step (linear at rate ~√n·u₃₂·‖S‖² once ‖E‖ is below that),
/// with the same fixed point S² = I, whose test stays in f64. From the f32 iteration's
/// ‖E‖ ≈ 1e-5 two steps reach f64 rounding either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolishCorrection {
    /// S·E as an f64 product: two f64 products per step.
    Double,
    /// S·E as an f32 product of S and E/‖E‖_F rounded (one f64 product per step: E's).
    Single,
}

/// Which Newton-Schulz step of an inverse's refinement
/// ([`DoubleWork::refine_inverse_in_place`]) may end it before a step stops halving the
/// residual. A step from residual r gives I − M·X' = (I − M·X)², so r² bounds the next
/// residual up to rounding: from r² ≤ ε one more step reaches f64's rounding, and the step
/// after it (which would stop the halving rule) cannot gain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LastStep {
    /// Steps run until one stops halving the residual (LAPACK's refinement rule).
    Halving,
    /// The step from a residual r with r² at most this is the last; its residual is formed
    /// (and reported).
    Measured(f64),
    /// The same, its residual not formed (one f64 product fewer): r² stands for it in the
    /// residuals.
    Bound(f64),
}

impl LastStep {
    /// The inverses' default: the step from r² ≤ ε is the last, its residual formed.
    pub const AT_ROUNDING: LastStep = LastStep::Measured(f64::EPSILON);
}

/// Four order-n f64 matrices on the device: what the sign function's refinement, polish and
/// commutation test and the Lyapunov residual work in (allocated once per call).
pub struct DoubleWork {
    /// The matrix refined against (M, A).
    pub m: DoubleSquare,
    /// The matrix being refined or polished (X, S).
    pub x: DoubleSquare,
    /// The residual (I − M·X, I − S², Q).
    pub r: DoubleSquare,
    /// The next iterate or a product.
    pub t: DoubleSquare,
}

impl DoubleWork {
    /// Room for order n.
    pub fn new(inv: &Inverter, n: usize) -> Result<Self> {
        let square = |what: &str| DoubleSquare::new(inv, what, n);
        Ok(Self {
            m: square("the f64 matrix")?,
            x: square("the f64 iterate")?,
            r: square("the f64 residual")?,
            t: square("the next f64 iterate")?,
        })
    }

    /// Hands the four squares back for the next call of the order ([`Inverter::recycle_double`]).
    pub fn recycle(self, inv: &Inverter) {
        for square in [self.m, self.x, self.r, self.t] {
            inv.recycle_double(square);
        }
    }

    /// Newton-Schulz steps X ← X + X·(I − M·X) on the device, as
    /// [`refine_inverse`](super::refine_inverse) takes them on the CPU (only from ‖I − M·X‖_F
    /// below 1/2, while the residual drops, stopping once it no longer halves or after the
    /// step from a residual r with r² ≤ ε, [`LastStep::AT_ROUNDING`]); `m` and `x` are
    /// uploaded, the refined X read back.
    pub fn refine_inverse(
        &mut self,
        inv: &Inverter,
        m: &Matrix<f64>,
        x: &Matrix<f64>,
        max_steps: usize,
    ) -> Result<crate::inverse::Refined> {
        self.m.write(m)?;
        self.x.write(x)?;
        let (residuals, refined) =
            self.refine_inverse_in_place(inv, max_steps, LastStep::AT_ROUNDING)?;
        Ok(crate::inverse::Refined {
            x: self.x.download()?,
            residuals,
            refined,
            fallback: None,
        })
    }

    /// [`DoubleWork::refine_inverse`] of the X in `self.x` against the M in `self.m`, left in
    /// `self.x`: the residuals ‖I − M·X‖_F (the first before any step) and whether a step was
    /// kept. `last` says which step may end it before one stops halving the residual.
    pub fn refine_inverse_in_place(
        &mut self,
        inv: &Inverter,
        max_steps: usize,
        last: LastStep,
    ) -> Result<(Vec<f64>, bool)> {
        let residual = |w: &Self, x: &DoubleSquare| -> Result<f64> {
            let p = DoubleProduct::new(w.r.op(false), w.m.op(false), x.op(false))
                .alpha(-1.0)
                .plus_identity(1.0);
            Ok(inv.dgemm(p, true)?.sqrt())
        };
        let mut norm = residual(self, &self.x)?;
        let mut residuals = vec![norm];
        let mut refined = false;
        if norm < 0.5 {
            for _ in 0..max_steps {
                let p = DoubleProduct::new(self.t.op(false), self.x.op(false), self.r.op(false))
                    .plus(1.0, self.x.op(false));
                inv.dgemm(p, false)?;
                let final_step = match last {
                    LastStep::Halving => false,
                    LastStep::Measured(bound) | LastStep::Bound(bound) => norm * norm <= bound,
                };
                if final_step && matches!(last, LastStep::Bound(_)) {
                    refined = true;
                    residuals.push(norm * norm);
                    std::mem::swap(&mut self.x, &mut self.t);
                    break;
                }
                let next = residual(self, &self.t)?;
                if next.is_nan() || next >= norm {
                    break;
                }
                refined = true;
                residuals.push(next);
                std::mem::swap(&mut self.x, &mut self.t);
                let halves = next <= 0.5 * norm;
                norm = next;
                if !halves || final_step {
                    break;
                }
            }
        }
        Ok((residuals, refined))
    }

    /// Newton-Schulz steps S ← S + S·E/2 with E = I − S² on the device, while ‖E‖_F drops
    /// (from below 1) and is above ε·‖I‖_F, stopping after the first step that no longer
    /// halves it once it is below [`QUADRATIC_BELOW`] (the quadratic convergence has reached
    /// rounding): S uploaded from `x`, left in `self.x`; returns S, the steps and the final
    /// ‖I − S²‖_F.
    pub fn polish(
        &mut self,
        inv: &Inverter,
        x: &Matrix<f64>,
        max_steps: usize,
        correction: PolishCorrection,
    ) -> Result<(Matrix<f64>, usize, f64)> {
        self.x.write(x)?;
        self.polish_in_place(inv, max_steps, correction)
    }

    /// [`DoubleWork::polish`] from the S already in `self.x`.
    pub fn polish_in_place(
        &mut self,
        inv: &Inverter,
        max_steps: usize,
        correction: PolishCorrection,
    ) -> Result<(Matrix<f64>, usize, f64)> {
        let r = self.involution(inv)?;
        self.polish_from(inv, r, max_steps, correction)
    }

    /// ‖I − S²‖_F of the S in `self.x`, with E = I − S² left in `self.r` (one f64 product).
    pub fn involution(&mut self, inv: &Inverter) -> Result<f64> {
        let (x, r) = (self.x.op(false), self.r.op(false));
        let p = DoubleProduct::new(r, x, x).alpha(-1.0).plus_identity(1.0);
        Ok(inv.dgemm(p, true)?.sqrt())
    }

    /// [`DoubleWork::polish_in_place`] where [`DoubleWork::involution`] has just given `r`
    /// (E in `self.r`).
    pub fn polish_from(
        &mut self,
        inv: &Inverter,
        r: f64,
        max_steps: usize,
        correction: PolishCorrection,
    ) -> Result<(Matrix<f64>, usize, f64)> {
        let n = self.x.n;
        // The f32 correction's rounded S, Eᵀ/‖E‖_F and their product (kept for the next call).
        let single = match correction {
            PolishCorrection::Double => None,
            PolishCorrection::Single => Some([
                inv.single_square("the polish's rounded S", n)?,
                inv.single_square("the polish's rounded I − S²", n)?,
                inv.single_square("the polish's f32 correction", n)?,
            ]),
        };
        let mut r = r;
        let mut steps = 0;
        // Done once S is an involution to working precision: ‖I − S²‖_F at most ε·‖I‖_F.
        let done = f64::EPSILON * (self.x.n as f64).sqrt();
        while steps < max_steps && r < 1.0 && r > done {
            let rounded = single.as_ref().filter(|_| r <= SINGLE_CORRECTION_BELOW);
            if let Some([s32, e32, u32]) = rounded {
                // T = S + (r/2)·fl₃₂(S)·fl₃₂(E/r): the tiled product is C ← A·Bᵀ, so Eᵀ is
                // narrowed (‖E‖_F = r ≥ max |E|: E/r fits f32 whatever its scale).
                let v = crate::tiled::View::row_major(n, n);
                inv.narrow(s32.op(v), self.x.op(false), 1.0)?;
                inv.narrow(e32.op(v), self.r.op(true), 1.0 / r)?;
                inv.tiled()
                    .gemm(crate::tiled::Product::new(u32.op(v), s32.op(v), e32.op(v)))?;
                inv.widen(self.t.op(false), u32.op(v), 0.5 * r, Some((1.0, &self.x.buffer)))?;
            } else {
                let p = DoubleProduct::new(self.t.op(false), self.x.op(false), self.r.op(false))
                    .alpha(0.5)
                    .plus(1.0, self.x.op(false));
                inv.dgemm(p, false)?;
            }
            std::mem::swap(&mut self.x, &mut self.t);
            let next = self.involution(inv)?;
            log::debug!(target: "symraster::inverse", "polish: f64 Newton-Schulz step, ‖I − S²‖_F {r:.3e} → {next:.3e}");
            if next.is_nan() || next >= r {
                // The step made S no better: the last S is kept (E in `self.r` is the
                // rejected one's; nothing reads it after the loop).
                std::mem::swap(&mut self.x, &mut self.t);
                break;
            }
            let halves = next <= 0.5 * r;
            r = next;
            steps += 1;
            if !halves && r < QUADRATIC_BELOW {
                break;
            }
        }
        for square in single.into_iter().flatten() {
            inv.recycle_single(square);
        }
        Ok((self.x.download()?, steps, r))
    }

    /// ‖A·S − S·A‖_F / (‖A‖_F·‖S‖_F) for S in `self.x` (after [`DoubleWork::polish`]), A
    /// uploaded into `self.m`.
    pub fn commutation(&mut self, inv: &Inverter, a: &Matrix<f64>, s: &Matrix<f64>) -> Result<f64> {
        self.m.write(a)?;
        self.commutation_in_place(inv, a, s)
    }

    /// [`DoubleWork::commutation`] with A already in `self.m`.
    pub fn commutation_in_place(
        &mut self,
        inv: &Inverter,
        a: &Matrix<f64>,
        s: &Matrix<f64>,
    ) -> Result<f64> {
        let (am, sx) = (self.m.op(false), self.x.op(false));
        inv.dgemm(DoubleProduct::new(self.t.op(false), am, sx), false)?;
        let p = DoubleProduct::new(self.t.op(false), sx, am)
            .alpha(-1.0)
            .plus(1.0, self.t.op(false));
        let d = inv.dgemm(p, true)?.sqrt();
        Ok(d / (a.frobenius_norm() * s.frobenius_norm()).max(f64::MIN_POSITIVE))
    }

    /// R = Q − A·X − X·Aᵀ with A in `self.m` and Q in `self.r` (uploaded by the caller), X
    /// uploaded into `self.x`, R into `self.t`: R read back and ‖R‖_F.
    pub fn lyapunov_residual(
        &mut self,
        inv: &Inverter,
        x: &Matrix<f64>,
    ) -> Result<(Matrix<f64>, f64)> {
        self.x.write(x)?;
        let norm = self.lyapunov_residual_of(inv, &self.x, &self.t)?;
        Ok((self.t.download()?, norm))
    }

    /// R = Q − A·X − X·Aᵀ on the device for a symmetric Q (in `self.r`) and X, A in `self.m`,
    /// R any other square of the order: one f64 product R = Q − A·X, then R ← R + Rᵀ − Q
    /// ([`Inverter::symmetric_residual`]), half the products of
    /// [`DoubleWork::lyapunov_residual_of`]; returns ‖R‖_F.
    pub fn symmetric_lyapunov_residual_of(
        &self,
        inv: &Inverter,
        x: &DoubleSquare,
        r: &DoubleSquare,
    ) -> Result<f64> {
        let p = DoubleProduct::new(r.op(false), self.m.op(false), x.op(false))
            .alpha(-1.0)
            .plus(1.0, self.r.op(false));
        inv.dgemm(p, false)?;
        Ok(inv.symmetric_residual(r, &self.r)?.sqrt())
    }

    /// R = Q − A·X − X·Aᵀ on the device with A in `self.m` and Q in `self.r`, X and R any
    /// other squares of the order (R must not be X): R into `r`, returns ‖R‖_F.
    pub fn lyapunov_residual_of(
        &self,
        inv: &Inverter,
        x: &DoubleSquare,
        r: &DoubleSquare,
    ) -> Result<f64> {
        let (a, xo, q, t) = (self.m.op(false), x.op(false), self.r.op(false), r.op(false));
        inv.dgemm(DoubleProduct::new(t, a, xo).alpha(-1.0).plus(1.0, q), false)?;
        let p = DoubleProduct::new(t, xo, self.m.op(true))
            .alpha(-1.0)
            .plus(1.0, t);
        Ok(inv.dgemm(p, true)?.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_fit_the_kernel_and_shared_memory() {
        for tile in DoubleTile::ALL {
            let s = tile.shape();
            let (wg_x, wg_y) = (s.bn / s.tn, s.bm / s.tm);
            let threads = wg_x * wg_y;
            assert!(threads == 256 || threads == 512, "{tile:?}");
            // The reads' swizzle: one XOR per row of a slice.
            assert!(wg_y % 16 == 0 && wg_x % 16 == 0, "{tile:?}");
            // Whole staging loads per invocation (pairs of entries with PAIRS), and room in As
            // for the tile's sum.
            let per = if s.pairs { 2 * threads } else { threads };
            assert_eq!(s.bm * s.bk % per, 0, "{tile:?}");
            assert_eq!(s.bk * s.bn % per, 0, "{tile:?}");
            assert!(s.bm * s.bk >= per, "{tile:?}");
            if s.pairs {
                // Pairs of registers, and rows of whole 8-pair (128-byte) swizzle groups.
                assert!(s.tm % 2 == 0 && s.tn % 2 == 0, "{tile:?}");
                assert!(s.bm % 16 == 0 && s.bn % 16 == 0, "{tile:?}");
            } else {
                // The swizzle: rows of whole 16-double bank groups, 16/BK columns per
                // half-warp.
                assert!(s.bm % 16 == 0 && s.bn % 16 == 0 && 16 % s.bk == 0, "{tile:?}");
            }
            // Two buffers of both slices within GL's least maximum of shared memory.
            assert!(2 * s.bk * (s.bm + s.bn) * 8 <= 32768, "{tile:?}");
        }
    }

    #[test]
    fn a_launch_takes_the_most_depth_its_loop_budget_allows() {
        for tile in DoubleTile::ALL {
            let bk = tile.shape().bk;
            let per = tile.depth_per_launch();
            let iterations = |depth: usize| depth.div_ceil(bk) * (bk + 1);
            assert_eq!(per % bk, 0, "{tile:?}");
            assert!(iterations(per) <= crate::gl::LOOP_BUDGET, "{tile:?}");
            assert!(iterations(per + 1) > crate::gl::LOOP_BUDGET, "{tile:?}");
        }
    }

    #[test]
    fn small_products_keep_small_tiles() {
        let (small, large) = (DoubleTile::SmallShallow, DoubleTile::LargePairs);
        assert_eq!(DoubleTile::for_product(1, 1), small);
        assert_eq!(DoubleTile::for_product(1024, 1024), small);
        assert_eq!(DoubleTile::for_product(1500, 1500), small);
        assert_eq!(DoubleTile::for_product(2048, 2048), large);
        assert_eq!(DoubleTile::for_product(4096, 4096), large);
        // Enough work groups either way round, the large tile only where it fits inside C.
        assert_eq!(DoubleTile::for_product(64, 1 << 16), small);
        assert_eq!(DoubleTile::for_product(128, 1 << 15), large);
    }
}
