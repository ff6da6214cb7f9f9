//! Weighted least squares through the GPU's factor (section 5.3); Algorithm 1's refinement
//! itself is in [`crate::least_squares`].

use super::estimate::{
    SINGLE_CONDITION_LIMIT, double_vec, finish_estimate, largest, solve_carrying, start_estimate,
    x0_with_first_solves,
};
use super::least_squares_direct;
use super::range::{DiagonalParts, RangeScaling};
use super::residual::DeviceResidual;
use super::tiled::DeviceFactor;
use super::{Cholesky, Gpu, Method};
use crate::error::{Error, NumericalError, Result};
use crate::least_squares::design::{Design, design_of};
use crate::least_squares::double::{Scaled, scaled_norm, solve_in_double};
use crate::least_squares::{
    DoubleFactor, Fallback, NormalEquations, Solution, SolveOptions, Timings, check_pivots,
    check_rank, check_shapes, refine, single_factor_failure,
};
use crate::matrix::{
    Element, Matrix, MatrixView, check_finite, check_finite_vec, check_finite_view,
};
use crate::phases::Phases;
use crate::scaling::{exponent_of, norm_inf, times_power_of_two};
use std::time::Instant;

impl Gpu {
    /// Solves min ‖D(b − Aᵀx)‖₂ (section 2): C = AD²Aᵀ and its factor L on the GPU in single
    /// precision, x⁰ by forward and back substitution, then Algorithm 1's mixed-precision
    /// refinement until the options' test holds (see the [module docs](crate::least_squares)
    /// for where each step runs and when it stops). Up to order
    /// [`SpdFactor::DOUBLE_UP_TO`](crate::least_squares::SpdFactor::DOUBLE_UP_TO) by default, C
    /// and L are formed in f64 on the GPU instead ([`SolveOptions::spd_factor`]). Stagnation
    /// or the iteration limit hand over to an f64 Cholesky on the CPU unless
    /// `options.fallback` is off, and so does a GPU factor that fails (C may still be SPD in
    /// f64, as LAPACK's dsposv assumes); the solution says so in [`Solution::fallback`].
    ///
    /// `a` is m x n (m ≤ n for a unique solution), `d` the n diagonal entries of D² (the
    /// paper's texture d), `b` the n observations (any finite f64: b is scaled by a power of
    /// two, so x(2^k·b) = 2^k·x(b) exactly). n < m or fewer than m non-zero weights is
    /// [`SingularProduct`](crate::NumericalError::SingularProduct); a singular or numerically
    /// singular AD²Aᵀ gives [`NotPositiveDefinite`](crate::NumericalError::NotPositiveDefinite),
    /// [`NumericallySingular`](crate::NumericalError::NumericallySingular) (no fallback) or
    /// [`SingularToDouble`](crate::NumericalError::SingularToDouble).
    ///
    /// f32 input is widened to f64 (exactly); x is f64, to the options' tolerance.
    pub fn least_squares<T: Element>(
        &self,
        a: &Matrix<T>,
        d: &[T],
        b: &[T],
        options: SolveOptions,
    ) -> Result<Solution> {
        self.least_squares_view(a.into(), d, b, options)
    }

    /// [`Gpu::least_squares`] with A borrowed where it lies: any [`MatrixView`], such as the
    /// caller's observations-by-unknowns X in row-major order read as A = Xᵀ
    /// (`MatrixView::new(x, n, m, m, 1)?.transpose()`), with no transposed copy. An f64 A whose
    /// rows or columns are contiguous is read in place (it goes to the GPU as it lies, its
    /// columns put in place there); f32 is widened line by line, and a view with neither rows
    /// nor columns contiguous is copied row-major first.
    pub fn least_squares_view<T: Element>(
        &self,
        a: MatrixView<'_, T>,
        d: &[T],
        b: &[T],
        options: SolveOptions,
    ) -> Result<Solution> {
        let mut phase = Phases::new(Instant::now());
        let mut store = Vec::new();
        let a = design_of(a, &mut store)?;
        let (d, b) = (double_vec(d), double_vec(b));
        phase.mark("A, d and b in f64");
        self.least_squares_f64(a, &d, &b, &options)
    }

    /// [`Gpu::least_squares`] in f64.
    fn least_squares_f64(
        &self,
        a: Design<'_>,
        d: &[f64],
        b: &[f64],
        options: &SolveOptions,
    ) -> Result<Solution> {
        let mut phase = Phases::new(Instant::now());
        options.validate()?;
        check_shapes(a.view(), d, b)?;
        // A's finiteness, the one check that reads all of A, is made as A goes up to the GPU
        // (`solve_scaled`); its error still comes before d's, b's and the rank's.
        let cheap = check_finite_vec("d", d)
            .and_then(|()| check_finite_vec("b", b))
            .and_then(|()| check_rank(a.view(), d));
        if let Err(e) = cheap {
            check_finite_view("A", a.view())?;
            return Err(e);
        }
        phase.mark("checks of d, b and the rank");
        // b by a power of two so that its largest entry lies in [1, 2): exact, so b and 2^k·b
        // give the same scaled problem bit for bit, and AD²b and the residuals stay clear of
        // f64's and f32's range edges whatever b's scale.
        let solution = with_scaled_rhs(b, |scaled_b| self.solve_scaled(a, d, scaled_b, options));
        phase.mark("the solve, its buffers freed");
        solution
    }

    /// [`Gpu::least_squares`] for b already scaled (max |b| in [1, 2) or b = 0).
    fn solve_scaled(
        &self,
        a: Design<'_>,
        d: &[f64],
        b: &[f64],
        options: &SolveOptions,
    ) -> Result<Solution> {
        let start = Instant::now();
        let mut phase = Phases::new(start);
        let (m, n) = a.shape();
        // A is checked piece by piece as each piece is copied up, while in cache (A by columns,
        // the rows of the caller's X = Aᵀ, and strided rows); whole rows go up through the
        // driver, checked on the pool beside it. Where A did not go up, it is checked here.
        let whole_rows = matches!(a, Design::Rows(rows) if rows.as_row_major().is_some());
        let (method, device_residual) = if whole_rows {
            beside_check_of_a(a.view(), || self.upload_problem(a, d, b, options))?
        } else {
            let uploaded = self.upload_problem(a, d, b, options);
            if !matches!(&uploaded, Ok((_, Some(device))) if device.a_checked()) {
                check_finite_view("A", a.view())?;
            }
            uploaded?
        };
        phase.mark("A, d, b to the GPU in f64 (A checked), AD²b");
        // C's diagonal, once, row by row as mantissa and exponent so that it cannot overflow
        // or underflow: it sets the range scaling and checks the factor's pivots. From A's
        // copy on the GPU where there is one (a pass over A on the host otherwise).
        let on_device = match &device_residual {
            Some(device) => device.diagonal_parts(DiagonalParts::d_exponent(d))?,
            None => None,
        };
        let diagonal = match on_device {
            Some(rows) => DiagonalParts::from_rows(rows),
            None => DiagonalParts::of(&a, d),
        };
        let scaling = RangeScaling::of(&diagonal, d)?;
        // C' = 4^e·2^f·C, the matrix the factors belong to, and its diagonal.
        let c_exponent = scaling.exponent;
        let scaled_diagonal = diagonal.scaled(scaling.exponent);
        if let Some(device) = &device_residual
            && let Some(kernels) = self.double_factor_kernels(
                m,
                c_exponent + c_exponent.rem_euclid(2),
                method,
                options,
                "least squares' f64 factor",
            )
        {
            phase.mark("diagonal, scaling");
            let problem = least_squares_direct::Problem {
                a,
                d,
                b,
                device,
                scaling: &scaling,
                scaled_diagonal: &scaled_diagonal,
                start,
            };
            return least_squares_direct::solve(self, &kernels, problem, options);
        }
        let d32: Vec<f32> = d.iter().map(|&v| (v * scaling.d) as f32).collect();
        check_finite_vec(
            "d (scaled and rounded to single precision for the GPU)",
            &d32,
        )?;
        phase.mark("diagonal, scaling");
        let single_a = || {
            let a32 = a.map_row_major(|v| (v * scaling.a) as f32);
            check_finite(
                "A (scaled and rounded to single precision for the GPU)",
                &a32,
            )?;
            Ok::<_, crate::Error>(a32)
        };
        let format = options.gpu.format;
        let mut factored = || {
            // The tiled factor's diagonal (and C''s column sums) come back with its status, in
            // one read.
            let (factor_l, pivots, sums): (_, Vec<f32>, _) = match (method, &device_residual) {
                (Method::Tiled, Some(device)) if scaling.fits_single(diagonal.largest_entry()) => {
                    let exponent = scaling.a.log2() as i32;
                    let a32 = device.single_precision_a(exponent)?;
                    let (f, pivots, sums) =
                        self.factor_product_tiled_on_device(a32, (m, n), &d32, format)?;
                    (Factor::Device(f), pivots, sums)
                }
                (Method::Tiled, _) => {
                    let (f, pivots, sums) =
                        self.factor_product_tiled(&single_a()?, &d32, format)?;
                    (Factor::Device(f), pivots, sums)
                }
                _ => {
                    let l =
                        self.factor_product_single(&single_a()?, &d32, options.gpu.method(method))?;
                    let pivots = {
                        let l = l.l()?;
                        (0..l.rows()).map(|j| l[(j, j)]).collect()
                    };
                    (Factor::Host(l), pivots, None)
                }
            };
            phase.mark("C and L on the GPU");
            check_pivots(&pivots, &scaled_diagonal)?;
            Ok::<_, Error>((factor_l, sums))
        };
        // The failing column where the f32 factor failed and C may still be SPD in f64.
        let factored = factored().map_err(|e| (single_factor_failure(&e), e));
        let (factor_l, column_sums) = match factored {
            Ok(f) => f,
            Err((Some(column), _)) if options.fallback => {
                log::warn!(
                    "the f32 factor failed at column {column}: solving with an f64 Cholesky on \
                     the CPU"
                );
                let double = DoubleFactor::of(a.view(), d, scaling.a, scaling.d)?;
                let factor = start.elapsed();
                return solve_in_double(
                    &NormalEquations::new(a.view(), d, b),
                    &double,
                    &Scaled {
                        exponent: c_exponent,
                        diagonal: &scaled_diagonal,
                    },
                    options,
                    Fallback::SingleFactorFailed { column },
                    (start, factor),
                );
            }
            Err((_, e)) => return Err(e),
        };
        let factor = start.elapsed();
        phase.mark("factor done, pivots checked");

        // The CPU's products, only where the GPU does not form them.
        let host_equations = std::cell::OnceCell::new();
        let equations = || host_equations.get_or_init(|| NormalEquations::new(a.view(), d, b));
        let rhs: &[f64] = match &device_residual {
            Some(device) => device.rhs(),
            None => equations().rhs(),
        };
        let solve_each = |vs: &[&[f32]]| factor_l.solve_each(vs);
        let (x0, first_solves) =
            x0_with_first_solves(m, |solve| scaling.correct_with(rhs, solve), solve_each)?;
        let x0_time = start.elapsed();
        phase.mark("x⁰, with the ‖C⁻¹‖₁ estimate's first two solves");
        // ‖C⁻¹‖ = 4^e·2^f·‖C'⁻¹‖, C' the scaled matrix the factor belongs to; the estimate's
        // few solves run where the factor is (its accuracy needs only a digit or two), each
        // beside a correction's while the refinement runs.
        let estimate = start_estimate(m, first_solves, solve_each)?;
        let correct =
            |r: &[f64]| scaling.correct_with(r, |v| solve_carrying(&estimate, v, solve_each));

        // ‖C'‖₁ from the column sums of the f32 C' the factor came from where they came back
        // with it (to f32's rounding of C', which a norm for the stopping test and κ₁ bears),
        // else estimated through products with C in f64.
        let norm_c_scaled = match column_sums.as_deref().and_then(largest) {
            Some(norm) => norm,
            None => scaled_norm(m, c_exponent, |vs| match &device_residual {
                Some(device) => device.apply_each(vs),
                None => Ok(vs.iter().map(|v| equations().apply(v)).collect()),
            })?,
        };
        let norm_c = times_power_of_two(norm_c_scaled, -c_exponent);
        phase.mark("‖C‖₁");
        let tolerance = options.tolerance_for(m);
        let refinement = refine(
            |x| match &device_residual {
                Some(device) => device.residual(x),
                None => Ok(equations().residual(x)),
            },
            correct,
            &x0,
            norm_c,
            norm_inf(rhs),
            options.stopping(m),
        )?;
        let refine_time = start.elapsed() - x0_time;
        phase.mark("refinement");

        let fallback = Fallback::after(refinement.stop, options.fallback);
        let scaled = Scaled {
            exponent: c_exponent,
            diagonal: &scaled_diagonal,
        };
        if let Some(reason) = fallback {
            log::warn!(
                "refinement stopped ({reason:?}) at backward error {:.2e}: solving again with an \
                 f64 Cholesky on the CPU",
                refinement.backward_error
            );
            let double = DoubleFactor::of(a.view(), d, scaling.a, scaling.d)?;
            let solution = solve_in_double(
                equations(),
                &double,
                &scaled,
                options,
                reason,
                (start, factor),
            )?;
            return Ok(solution.after_single(x0, refinement, (x0_time, start.elapsed() - x0_time)));
        }
        let inverse_norm = finish_estimate(estimate, solve_each)?;
        let mut condition = norm_c_scaled * inverse_norm;
        if options.fallback && (condition.is_nan() || condition >= SINGLE_CONDITION_LIMIT) {
            // Past 2/u₃₂ the f32 factor's estimate cannot tell an ill-conditioned C from a
            // singular one (refinement converges on a consistent singular system too): an f64
            // factor decides, and its estimate is the one reported. (Off with the fallback, as
            // in the paper's settings: there the estimate is the f32 factor's, a lower bound.)
            let double = DoubleFactor::of(a.view(), d, scaling.a, scaling.d)?;
            condition = norm_c_scaled * double.inverse_norm_scaled();
            double.check_singular(&scaled_diagonal)?;
        }
        phase.mark("‖C⁻¹‖₁ estimate");
        let timings = Timings {
            factor,
            x0: x0_time,
            refine: refine_time,
            total: start.elapsed(),
        };
        Solution::refined(
            refinement, x0, options, tolerance, condition, fallback, timings,
        )
    }

    /// The method for this problem and, for the tiled one, A, d and b on the GPU in f64
    /// (`None` where the device cannot hold them: residuals then run on the CPU).
    fn upload_problem(
        &self,
        a: Design<'_>,
        d: &[f64],
        b: &[f64],
        options: &SolveOptions,
    ) -> Result<(Method, Option<DeviceResidual>)> {
        let (m, n) = a.shape();
        let method = self.check_problem_size(m, n, options.gpu)?;
        // The tiled method keeps everything on the GPU: A goes up once in f64 (residuals) and
        // is rounded to f32 there for the factor; C and L stay there, corrections are solved
        // there; only L's diagonal comes back, for the pivot check. Where the device cannot
        // hold A in f64, residuals run on the CPU and A goes up in f32.
        if method == Method::Tiled
            && !options.takes_double_factor(m)
            && let Ok(k) = self.tiled_kernels()
        {
            // The f32 assembly's, factor's and solves' programs compile side by side with what
            // runs first, where the driver compiles in its own threads.
            k.start_products();
            k.start_chained(m, true);
        }
        let device_residual = match method {
            Method::Tiled => match self.device_residual(a.view(), d, b) {
                Ok(r) => Some(r),
                Err(e) => {
                    log::info!("residuals on the CPU: {e}");
                    None
                }
            },
            _ => None,
        };
        Ok((method, device_residual))
    }
}

/// The single-precision factor of C', kept on the GPU (tiled) or read back (the rasterizing
/// methods): where x⁰, the corrections and the condition estimate's solves run.
enum Factor {
    Device(DeviceFactor),
    Host(Cholesky),
}

impl Factor {
    /// L·Lᵀ·x = b where the factor is, for each b of `bs` (each to the values it would get
    /// alone); on the GPU, read back together.
    fn solve_each(&self, bs: &[&[f32]]) -> Result<Vec<Vec<f32>>> {
        match self {
            Factor::Device(f) => f.solve_each(bs),
            Factor::Host(l) => l.solve_each_single(bs),
        }
    }
}

/// Runs `solve` on b scaled by a power of two so that its largest entry lies in [1, 2) (exact),
/// then scales x, x⁰ and the residual history back; an x that leaves f64's range then is
/// [`NumericalError::SolutionOutOfRange`]. Shared by the least-squares and SPD solves.
pub(super) fn with_scaled_rhs(
    b: &[f64],
    solve: impl FnOnce(&[f64]) -> Result<Solution>,
) -> Result<Solution> {
    let b_max = norm_inf(b);
    let k = if b_max == 0.0 { 0 } else { -exponent_of(b_max) };
    let scaled_b: Vec<f64> = b.iter().map(|&v| times_power_of_two(v, k)).collect();
    let mut solution = solve(&scaled_b)?;
    for v in solution
        .x
        .iter_mut()
        .chain(&mut solution.x0)
        .chain(&mut solution.residuals)
    {
        *v = times_power_of_two(*v, -k);
    }
    if let Some(index) = solution.x.iter().position(|v| !v.is_finite()) {
        return Err(NumericalError::SolutionOutOfRange {
            index,
            value: solution.x[index],
        }
        .into());
    }
    Ok(solution)
}

/// `work` on this thread beside A's finiteness check on the pool (the check reads all of A,
/// the upload copies it: the two overlap); the check's error comes first.
fn beside_check_of_a<R>(a: MatrixView<'_, f64>, work: impl FnOnce() -> Result<R>) -> Result<R> {
    let mut finite = Ok(());
    let result = rayon::in_place_scope(|scope| {
        scope.spawn(|_| finite = check_finite_view("A", a));
        work()
    });
    finite.and(result)
}
