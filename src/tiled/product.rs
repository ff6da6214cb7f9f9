//! A product C ← α·A·diag(d)·Bᵀ + β·C as one typed value: what is multiplied, how C is
//! updated, and which of C's entries are written.

use crate::gl::Buffer;

/// How a product updates C: the (α, β) of C ← α·A·diag(d)·Bᵀ + β·C.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Update {
    /// C ← A·Bᵀ (C not read: it may hold anything, NaN included).
    Replace,
    /// C ← −A·Bᵀ (C not read).
    Negate,
    /// C ← C + A·Bᵀ.
    Accumulate,
    /// C ← C − A·Bᵀ.
    Subtract,
    /// C ← α·A·Bᵀ + β·C.
    Scaled { alpha: f32, beta: f32 },
}

impl Update {
    /// The (α, β) the kernels are launched with.
    pub fn alpha_beta(self) -> (f32, f32) {
        match self {
            Update::Replace => (1.0, 0.0),
            Update::Negate => (-1.0, 0.0),
            Update::Accumulate => (1.0, 1.0),
            Update::Subtract => (-1.0, 1.0),
            Update::Scaled { alpha, beta } => (alpha, beta),
        }
    }

    /// The same α adding onto C (β = 1): a later slice of a depth cut into launches.
    pub fn onto_c(self) -> Update {
        let (alpha, _) = self.alpha_beta();
        Update::Scaled { alpha, beta: 1.0 }
    }
}

/// Which of C's entries a product writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mask {
    /// All of them.
    Full,
    /// Those (i, j) with j ≤ i + shift: a lower triangle whose diagonal is `shift` columns to
    /// the right (0: C's own lower triangle).
    Lower { shift: isize },
}

impl Mask {
    /// The shift of the lower mask (`None`: all entries), as the kernels take it.
    pub fn shift(self) -> Option<isize> {
        match self {
            Mask::Full => None,
            Mask::Lower { shift } => Some(shift),
        }
    }

    /// The mask for a shift as the kernels take it (`None`: all entries).
    pub fn from_shift(shift: Option<isize>) -> Mask {
        shift.map_or(Mask::Full, |shift| Mask::Lower { shift })
    }
}

/// Where an operand's rows (A's of C's rows, B's of C's columns) may be nonzero along the
/// depth: the rest is known to hold zeros, so the packed-panel product skips its whole depth
/// slices there (a triangular operand: half the flops of its product, as LAPACK's trmm).
/// Kernels that do not skip read the zeros, which leave every sum as it was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Support {
    /// Every entry.
    #[default]
    All,
    /// Row i's entries at depth k ≥ i + shift (an upper triangle where shift is 0).
    From { shift: isize },
    /// Row i's entries at depth k ≤ i + shift (a lower triangle where shift is 0).
    UpTo { shift: isize },
}

impl Support {
    /// The same support on the sub-view whose row 0 and depth 0 are this view's `row0` and `k0`.
    pub fn sub(self, row0: usize, k0: usize) -> Support {
        let d = row0 as isize - k0 as isize;
        match self {
            Support::All => Support::All,
            Support::From { shift } => Support::From { shift: shift + d },
            Support::UpTo { shift } => Support::UpTo { shift: shift + d },
        }
    }

    /// (kind, shift) as the kernels take them: 0 all, 1 from, 2 up to. A shift past ±2³⁰
    /// (beyond any operand's rows and depth) is clamped there, which leaves the same slices
    /// and keeps the kernels' sums of a row and the shift inside an int.
    pub fn uniforms(self) -> (i32, i32) {
        let clamp = |shift: isize| shift.clamp(-(1 << 30), 1 << 30) as i32;
        match self {
            Support::All => (0, 0),
            Support::From { shift } => (1, clamp(shift)),
            Support::UpTo { shift } => (2, clamp(shift)),
        }
    }
}

/// C ← α·A·diag(d)·Bᵀ + β·C over the entries of `mask`, operands of type `T` (a single-buffer
/// [`super::Operand`] or a possibly split [`super::Region`]). Built with [`Product::new`] and
/// the builder methods.
#[derive(Clone, Copy)]
pub struct Product<'a, T> {
    pub c: T,
    pub a: T,
    pub b: T,
    /// The diagonal scaling of the depth (`None`: 1).
    pub d: Option<&'a Buffer<f32>>,
    /// Whether every entry of `d` is known (checked by the caller) to be ≥ 0, so a SYRK may
    /// pack A·√d once for both operands ([`PanelVariant::root_d`](super::PanelVariant)).
    pub d_nonnegative: bool,
    pub update: Update,
    pub mask: Mask,
    /// Where A's and B's rows may be nonzero along the depth (default: everywhere).
    pub support: [Support; 2],
}

impl<'a, T> Product<'a, T> {
    /// C ← A·Bᵀ over all of C.
    pub fn new(c: T, a: T, b: T) -> Self {
        Product {
            c,
            a,
            b,
            d: None,
            d_nonnegative: false,
            update: Update::Replace,
            mask: Mask::Full,
            support: [Support::All; 2],
        }
    }

    /// The depth scaled by `d` (`None`: not scaled).
    pub fn scaled(self, d: Option<&'a Buffer<f32>>) -> Self {
        Product { d, ..self }
    }

    /// `d`'s entries declared ≥ 0 (the caller checked them) or not.
    pub fn nonnegative(self, d_nonnegative: bool) -> Self {
        Product {
            d_nonnegative,
            ..self
        }
    }

    /// C updated as `update` says.
    pub fn update(self, update: Update) -> Self {
        Product { update, ..self }
    }

    /// C ← C + A·Bᵀ.
    pub fn accumulate(self) -> Self {
        self.update(Update::Accumulate)
    }

    /// C ← C − A·Bᵀ.
    pub fn subtract(self) -> Self {
        self.update(Update::Subtract)
    }

    /// C ← −A·Bᵀ.
    pub fn negate(self) -> Self {
        self.update(Update::Negate)
    }

    /// Only the entries of `mask` written.
    pub fn mask(self, mask: Mask) -> Self {
        Product { mask, ..self }
    }

    /// Only C's lower triangle written.
    pub fn lower(self) -> Self {
        self.mask(Mask::Lower { shift: 0 })
    }

    /// A's and B's entries known zero outside `a` and `b` (the product may skip them).
    pub fn support(self, a: Support, b: Support) -> Self {
        Product {
            support: [a, b],
            ..self
        }
    }

    /// The same product on other operands (the pieces of a split one), their supports
    /// unknown (every entry) unless the caller gives them again.
    pub fn with<U>(self, c: U, a: U, b: U) -> Product<'a, U> {
        Product {
            c,
            a,
            b,
            d: self.d,
            d_nonnegative: self.d_nonnegative,
            update: self.update,
            mask: self.mask,
            support: [Support::All; 2],
        }
    }
}
