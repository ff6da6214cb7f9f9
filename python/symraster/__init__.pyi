"""symraster: dense symmetric linear algebra on an OpenGL GPU, with scipy.linalg's conventions.

``import symraster as la`` in place of ``import scipy.linalg as la`` works for ``cholesky``,
``cho_factor``, ``cho_solve``, ``solve``, ``inv``, ``signm`` and ``solve_continuous_lyapunov``
on real float32 and float64 arrays (C or Fortran order, strided views): the same names,
signatures, defaults, return dtypes and exceptions. Integer and bool inputs are converted as
scipy converts them; complex input raises ``TypeError``. ``syrk``, ``weighted_lstsq`` and
``Cholesky`` are symraster's own, and so are the batched functions (``batched_syrk``,
``batched_cholesky``, ``batched_solve``, ``batched_weighted_lstsq``): many small problems of
one order n ≤ ``BATCH_MAX_ORDER`` at once, as numpy's stacked arrays (the batch axis first),
with LAPACK's INFO per problem instead of an exception.

Stacks: ``cholesky``, ``cho_factor``, ``cho_solve``, ``solve``, ``inv`` and
``weighted_lstsq`` take arrays with leading (batch) dimensions, as numpy's and scipy's (≥ 1.15)
functions do: (..., n, n) matrices, right sides (..., n, k) or one (n,) for all, broadcast
against each other as numpy broadcasts; the results have scipy's shapes and dtypes. Stacks of
small problems (n ≤ ``BATCH_MAX_ORDER``) run on the batched kernels in one launch, their solves
refined in float64 to the single functions' accuracy; large orders, and the members the
batched kernels cannot finish, run one member at a time through the single functions. A
failing member raises the single function's exception naming the member (``.problem``, its
index in the stack); with ``return_info=True`` the function returns ``(result, info)``
instead: ``info`` an int32 array of the batch shape (LAPACK's INFO: 0; k > 0, column k − 1,
0-based, not positive definite or singular; −1, another numerical failure), each failed
member's result NaN. Inside Dask and xarray (``map_blocks``, ``apply_ufunc(...,
dask="parallelized")``) each block is such a stack; ``symraster.dask`` and
``use_device`` give each worker process its GPU (docs/scaling-out.md).

Precision: float64 in gives float64-accurate out, as scipy's (up to the condition number);
float32 in keeps float32's semantics. The GPU computes in float32: ``solve`` (every
``assume_a``), ``Cholesky.solve`` of a float64 matrix, ``inv``, ``signm``,
``solve_continuous_lyapunov`` and ``weighted_lstsq`` refine its results in float64, falling
back to float64 on the host where refinement cannot reach float64 accuracy. A float64 factor
itself (``cholesky``, ``cho_factor``, ``Cholesky.factor``) is computed in float64 on the host
(LAPACK's dpotrf, all cores) and ``cho_solve`` of a float64 factor solves with it as given in
float64 (dpotrs); their float32 forms run on the GPU. ``syrk`` returns the float32 GPU
product in the input's dtype (float32 accuracy).

Errors: a matrix that is not positive definite raises ``NotPositiveDefiniteError`` (a
``numpy.linalg.LinAlgError``) with ``.column``, the first failing column, 0-based (LAPACK's
INFO − 1); other numerical failures (singular, too ill-conditioned) ``NumericalError``, also a
``LinAlgError``; bad shapes and non-finite values ``ValueError`` as scipy raises them; no usable
OpenGL device ``DeviceError`` (a ``RuntimeError``). A Rust panic becomes a ``RuntimeError``.

Threads: one worker thread owns the OpenGL context (a context is current on one thread at a
time and the library's ``Gpu`` is not ``Send``). Calls from any number of Python threads are
queued to it and run one at a time; the GIL is released while a call waits and while its
arrays are copied, so other Python threads run meanwhile. A child process forked after the
parent's first call cannot use its OpenGL context and raises ``DeviceError``: use
multiprocessing's "spawn" or "forkserver" start method (a child forked before opens its own).

``method`` picks how the GPU computes: ``"auto"`` (the fastest this device runs), ``"tiled"``
(compute shaders, OpenGL 4.3), ``"blocked"`` or ``"faithful"`` (the paper's passes);
``storage`` is ``"full"`` or ``"packed"`` (the paper's rectangular packed format; LAPACK's RFP
for the tiled method).
"""

from typing import Literal, Optional, Tuple, Union, overload

import numpy as np
from numpy.linalg import LinAlgError
from numpy.typing import ArrayLike, NDArray

__version__: str

_Method = Literal["auto", "tiled", "blocked", "faithful"]
_Storage = Literal["full", "packed", "rfp"]

class NumericalError(LinAlgError):
    """The computation met a matrix it cannot handle (singular, too ill-conditioned for the
    precision, a result out of range). ``column``: the failing column (0-based) where the
    error names one, else ``None``. ``problem``: for a stack, the failing member's index (an
    int for one batch dimension, a tuple for several); ``None`` for a single problem."""

    column: Optional[int]
    problem: Optional[Union[int, Tuple[int, ...]]]
    def __init__(
        self,
        message: str,
        column: Optional[int] = None,
        problem: Optional[Union[int, Tuple[int, ...]]] = None,
    ) -> None: ...

class NotPositiveDefiniteError(NumericalError):
    """The matrix is not positive definite. ``column`` is the first column whose pivot is not
    positive, 0-based: LAPACK's ``INFO − 1``, scipy's "(column+1)-th leading minor".
    ``problem``: for a stack, the index of the failing matrix (an int for one batch
    dimension, a tuple for several); ``None`` for a single matrix."""

    column: int
    problem: Optional[Union[int, Tuple[int, ...]]]
    def __init__(
        self,
        message: str,
        column: int,
        problem: Optional[Union[int, Tuple[int, ...]]] = None,
    ) -> None: ...

class DeviceError(RuntimeError):
    """OpenGL, the device or its configuration failed (no EGL or OpenGL 3.3 device, for one:
    install ``libegl1 libegl-mesa0 libgl1-mesa-dri`` or the GPU vendor's driver)."""

class AccuracyWarning(RuntimeWarning):
    """A float64 result did not reach float64 accuracy. The functions fall back to float64
    where refinement stalls, so none warns with it now; kept for filters written against
    it."""

class LinAlgWarning(RuntimeWarning):
    """An ill-conditioned matrix: ``solve`` and ``inv`` warn with it where scipy's do, when the
    reciprocal condition number 1/κ₁(a) is below the machine epsilon of the result's dtype
    ("Ill-conditioned matrix (rcond=...): result may not be accurate."). With scipy installed
    ``symraster.LinAlgWarning`` is ``scipy.linalg.LinAlgWarning`` itself (imported on first
    use), so filters written for scipy apply; without it, symraster's own subclass of
    ``RuntimeWarning``."""

class DeviceInfo(dict):
    """``info()``'s result: ``vendor``, ``renderer``, ``version``, ``gl_version`` (major,
    minor), ``max_texture_size``, ``driver_max_texture_size``, ``egl_device_index``,
    ``egl_device_count``, ``software``, ``methods`` (fastest first) and ``auto``. ``str()``
    gives the lines of ``symraster info``."""

def info() -> DeviceInfo:
    """The OpenGL device symraster runs on, its GL version and the methods it runs (opens
    the device on first use).

    >>> import symraster
    >>> print(symraster.info())  # doctest: +SKIP
    GL_VENDOR            Mesa
    GL_RENDERER          llvmpipe (LLVM 15.0.6, 256 bits)
    ...
    """

def cholesky(
    a: ArrayLike,
    lower: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    method: _Method = "auto",
    storage: _Storage = "full",
    return_info: bool = False,
) -> Union[NDArray[np.floating], Tuple[NDArray[np.floating], NDArray[np.int32]]]:
    """The Cholesky factor of a symmetric positive definite matrix, as ``scipy.linalg.cholesky``.

    Returns U with ``a = U.T @ U`` (default) or, with ``lower=True``, L with ``a = L @ L.T``;
    the other triangle is zero. Only the triangle named by ``lower`` is read. The result has
    the input's dtype (float32 for float32, float64 for float64 and the wider integers) and
    its accuracy: float32 is factored on the GPU, float64 in float64 on the host (LAPACK's
    dpotrf on all cores, each row and column scaled by a power of two first, so any scale
    and grading factors wherever the factor fits). ``overwrite_a`` is accepted and ignored
    (the input is never modified).

    Raises ``NotPositiveDefiniteError`` (a ``LinAlgError``, ``.column`` 0-based) when the
    matrix is not positive definite, ``ValueError`` for a non-square or non-finite input.

    A stack (..., n, n), as numpy's and scipy's ``cholesky`` take it, gives the stack of
    factors: float32 stacks through the batched kernels (``batched_cholesky``) for
    n ≤ ``BATCH_MAX_ORDER`` with the ``"auto"``/``"tiled"`` method and full storage (a member
    that fails there is tried again on the single path), float64 stacks and the rest one
    matrix at a time (float64's factor is the host's). If a matrix is not positive definite,
    ``NotPositiveDefiniteError`` names the first one (``.problem``, its index in the stack)
    and its ``.column``; with ``return_info=True``, ``(factors, info)`` instead, info an int32
    array of the batch shape (0, or the failing column + 1), a failed member's factor NaN. A
    stack of no matrices, or of matrices of order 0 (e.g. (2, 0, 0)), gives an empty result of
    its shape, as numpy's.
    """

def cho_factor(
    a: ArrayLike,
    lower: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    method: _Method = "auto",
    storage: _Storage = "full",
    return_info: bool = False,
) -> Union[Tuple[NDArray[np.floating], bool], Tuple[Tuple[NDArray[np.floating], bool], NDArray[np.int32]]]:
    """``(c, lower)`` for ``cho_solve``, as ``scipy.linalg.cho_factor``: ``c`` holds the factor
    in the triangle named by ``lower`` and ``a``'s own entries in the other (scipy's "random
    data"). With ``overwrite_a=True`` and a writeable array of the computing dtype, ``a``
    itself is overwritten and returned. The factor has ``cholesky``'s accuracy: float64's for
    float64 input, float32's for float32.

    A stack (..., n, n) is factored as ``cholesky`` factors it, and ``lower`` comes back as
    scipy's does then: a bool array of the batch shape, which ``cho_solve`` takes.
    ``return_info=True``: ``((c, lower), info)``, as ``cholesky``'s."""

def cho_solve(
    c_and_lower: Tuple[ArrayLike, bool],
    b: ArrayLike,
    overwrite_b: bool = False,
    check_finite: bool = True,
    *,
    return_info: bool = False,
) -> Union[NDArray[np.floating], Tuple[NDArray[np.floating], NDArray[np.int32]]]:
    """x with ``(L @ L.T) @ x = b`` from a factor ``(c, lower)``, as ``scipy.linalg.cho_solve``
    (only the factor's triangle of ``c`` is read; it may come from scipy too). ``b`` is 1-D
    or 2-D; x has its shape and the common dtype. float32: one float32 solve on the GPU.
    float64: the two triangular solves with the factor as given, in float64 on the host
    (LAPACK's dpotrs), so x is as accurate as scipy's from the same factor.

    Stacks: ``c`` (..., n, n) (``lower`` a bool or a bool array of its batch shape, as
    ``cho_factor`` of a stack returns it) and ``b`` (n,) for every member or (..., n, k),
    broadcast. float32 stacks of n ≤ ``BATCH_MAX_ORDER`` run as one batched solve of the
    matrices L·Lᵀ (formed in float64), refined to float32 accuracy; float64 stacks one member
    at a time as above. ``return_info=True``: ``(x, info)``."""

def solve(
    a: ArrayLike,
    b: ArrayLike,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: Optional[str] = None,
    transposed: bool = False,
    *,
    method: _Method = "auto",
    storage: _Storage = "full",
    return_info: bool = False,
) -> Union[NDArray[np.floating], Tuple[NDArray[np.floating], NDArray[np.int32]]]:
    """x with ``a @ x = b``, as ``scipy.linalg.solve``; b 1-D or 2-D, x of b's shape.

    ``assume_a``:

    - ``"pos"`` (``"positive definite"``): the mixed-precision SPD solve (LAPACK's dsposv):
      the float32 Cholesky factor on the GPU, refinement in float64, a float64 CPU fallback
      where that stalls. float64 input gives float64 accuracy. Reads the triangle named by
      ``lower``. Not positive definite: ``NotPositiveDefiniteError``.
    - ``None``, ``"gen"``: a general matrix through the GPU's LU with partial pivoting (its
      inverse, refined in float64), then iterative refinement of x in float64.
      ``transposed=True`` solves ``a.T @ x = b``. Singular: ``NumericalError``.
    - ``"sym"``, ``"her"``: the symmetric matrix from the triangle named by ``lower``, solved as
      a general one.
    - ``"diagonal"``, ``"tridiagonal"``, ``"banded"``, ``"upper triangular"``,
      ``"lower triangular"``: ``NotImplementedError`` naming the structures that work; any
      other value ``ValueError``, as scipy.

    dtypes as scipy's: float32 with float32 gives float32, integers float64.

    Where the reciprocal condition number 1/κ₁(a) (computed from the inverse for ``"gen"``
    and ``"sym"``, estimated for ``"pos"``) is below the machine epsilon of x's dtype, warns
    ``LinAlgWarning`` ("Ill-conditioned matrix (rcond=...): result may not be accurate."),
    as scipy does. Unlike scipy, ``"pos"`` raises ``NumericalError`` ("a is singular to double
    precision") rather than return a result for a float64 matrix whose condition, judged as
    LAPACK's expert driver dposvx judges it (a scaled to a unit diagonal, so graded matrices
    whose unknowns have different units count as well conditioned), reaches 1/ε ≈ 4.5e15,
    and the GPU's float32 LU raises
    ``NumericalError`` for a matrix singular to single precision.

    Stacks, as scipy's (≥ 1.15) ``solve``: ``a`` (..., n, n) and ``b`` (n,) (one right side for
    every member: x (..., n)) or (..., n, k) (x (..., n, k)), their batch dimensions
    broadcast. ``"pos"`` with n ≤ ``BATCH_MAX_ORDER`` (``"auto"``/``"tiled"``, full storage):
    one batched launch for every member and right side (a float32 factor of the matrix
    equilibrated by powers of two), refined in float64 against ``a`` until the backward error
    reaches √n·ε of x's dtype, each refinement step a batched launch; members whose float32
    factor fails, whose pivots show a condition number past about 1e6, or whose refinement
    stalls are solved by the single path, as above. Other structures and larger orders: one
    member at a time. A failing member raises naming it (``.problem``); ``return_info=True``
    returns ``(x, info)`` instead (INFO per member, a failed member's x NaN).
    """

def inv(
    a: ArrayLike,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    assume_a: Optional[str] = None,
    lower: bool = False,
    return_info: bool = False,
) -> Union[NDArray[np.floating], Tuple[NDArray[np.floating], NDArray[np.int32]]]:
    """``a``⁻¹, as ``scipy.linalg.inv``: general (Gauss-Jordan with partial pivoting on the
    GPU) or, with ``assume_a="pos"``, SPD through the GPU Cholesky (the triangle named by
    ``lower`` read; ``NotPositiveDefiniteError`` if it is not), refined by Newton-Schulz steps
    in float64 on the GPU until they reach float64's rounding (float64 accuracy for float64
    input; where the float32 inverse is too far off for them, the float64 inverse on the
    host, refined the same way); ``"sym"`` inverts the
    symmetric matrix from that triangle. A singular or too ill-conditioned matrix raises
    ``NumericalError`` (a ``LinAlgError``); where the result comes back with 1/κ₁(a) below
    the machine epsilon of its dtype, ``LinAlgWarning`` as scipy's ``inv``.

    A stack (..., n, n) gives the stack of inverses: with ``assume_a="pos"`` and n ≤ 16, as
    ``solve``'s batched SPD solve of the identity's n columns; otherwise one matrix at a time.
    A failing member raises naming it (``.problem``); ``return_info=True`` returns
    ``(inverses, info)`` instead."""

@overload
def signm(A: ArrayLike, disp: Literal[True] = True) -> NDArray[np.floating]: ...
@overload
def signm(A: ArrayLike, disp: Literal[False]) -> Tuple[NDArray[np.floating], float]: ...
def signm(A: ArrayLike, disp: bool = True):
    """The matrix sign function, as ``scipy.linalg.signm``: the scaled Newton iteration on GPU
    inverses, polished in float64. With ``disp=False``, ``(S, errest)`` with errest
    ‖I − S²‖_F. An eigenvalue on or too near the imaginary axis raises ``NumericalError``."""

def solve_continuous_lyapunov(a: ArrayLike, q: ArrayLike) -> NDArray[np.floating]:
    """X with ``a @ X + X @ a.T = q``, as ``scipy.linalg.solve_continuous_lyapunov``, for a
    stable ``a`` (eigenvalues in the open left half plane): through the sign function on the
    GPU, refined in float64. An ``a`` that is not stable raises ``NumericalError``."""

def syrk(
    a: ArrayLike,
    d: Optional[ArrayLike] = None,
    lower: bool = True,
    *,
    method: _Method = "auto",
    storage: _Storage = "full",
    check_finite: bool = True,
) -> NDArray[np.floating]:
    """The lower triangle (``lower=False``: upper) of ``a @ diag(d) @ a.T``, the other
    triangle zero: the paper's assembly (Algorithm 3), ``a`` m x n, ``d`` n weights (default
    ones). Computed on the GPU in float32 and returned in the input's dtype (float32
    accuracy)."""

class LstsqResult:
    """``weighted_lstsq``'s result: ``x`` and the refined solve's diagnostics.

    ``fallback`` is one of:

    - ``None``: refinement with the GPU's float32 factor produced x;
    - ``"stagnated"``: the corrections stopped shrinking (the normal matrix is too
      ill-conditioned for a float32 factor) at step ``fallback_at`` (0-based), and the float64
      CPU Cholesky produced x;
    - ``"iteration_limit"``: refinement reached its step limit first (``fallback_at`` None);
    - ``"single_factor_failed"``: the GPU's float32 Cholesky failed at unknown
      ``fallback_at`` (column of ``x``, 0-based), though the normal matrix is SPD in float64.
    """

    x: NDArray[np.floating]
    """β, the unknowns (float64 accuracy; float32 dtype for float32 input)."""
    iterations: int
    """Refinement steps taken."""
    backward_error: float
    """The normwise backward error of the final x on the normal equations."""
    condition: float
    """An estimate of κ₁(xᵀ·diag(w)·x)."""
    forward_error_estimate: float
    """About condition × backward_error."""
    converged: bool
    """Whether the stopping test (backward error ≤ √m·2⁻⁵³) holds."""
    fallback: Optional[Literal["stagnated", "iteration_limit", "single_factor_failed"]]
    """Why the float64 CPU fallback produced x (see the class's docstring), or None where
    refinement did."""
    fallback_at: Optional[int]
    """The step ("stagnated") or the column of x ("single_factor_failed") the fallback was
    decided at, 0-based; None otherwise."""
    residuals: list
    """‖r‖₂ of each refinement step."""
    tolerance: float
    api_seconds: float
    """Seconds spent in the Rust library's call."""
    @property
    def fallback_ran(self) -> bool:
        """Whether the float64 fallback ran."""

def weighted_lstsq(
    x: ArrayLike,
    y: ArrayLike,
    w: Optional[ArrayLike] = None,
    *,
    method: _Method = "auto",
    storage: _Storage = "full",
    check_finite: bool = True,
    return_info: bool = False,
) -> Union[LstsqResult, StackedLstsqResult, Tuple[StackedLstsqResult, NDArray[np.int32]]]:
    """β minimising ‖diag(√w)·(y − x @ β)‖₂, ``x`` observations × unknowns (n x m, n ≥ m),
    ``y`` and ``w`` n entries (w ≥ 0, default ones): the paper's section 5.3, the normal
    equations' matrix xᵀ·diag(w)·x assembled and factored on the GPU in float32, refined in
    float64 (Algorithm 1) with a float64 fallback. Returns ``LstsqResult`` (``.x`` and the
    diagnostics). Fewer non-zero weights than unknowns raises ``NumericalError``, and so does
    a normal matrix singular to double precision (x without full column rank); the messages
    name ``x``, ``y`` and ``w`` and the normal matrix xᵀ·diag(w)·x.

    Stacks (many problems, e.g. one per pixel): ``x`` (..., n, m), ``y`` and ``w`` (..., n),
    broadcast (one design shared by a stack of observations: ``x`` (n, m), ``y`` (..., n));
    returns ``StackedLstsqResult`` (``.x`` (..., m)). With m ≤ ``BATCH_MAX_ORDER``
    (``"auto"``/``"tiled"``, full storage) every member's normal matrix is assembled on the GPU
    in one batched launch (x's columns and w scaled by powers of two, then the matrix
    equilibrated by its diagonal), factored in float32 and refined in float64 (the residual
    xᵀ·diag(w)·(y − x·β) from the data), each step a batched solve; members that fail there,
    whose pivots show a condition number past about 1e6 or whose refinement stalls are solved
    by the single path (``StackedLstsqResult.single``), as are all members past that order. A
    failing member raises naming it (``.problem``); ``return_info=True`` returns
    ``(result, info)`` instead (a failed member's x NaN). With ``return_info=True`` a single
    problem gives a ``StackedLstsqResult`` of batch shape () too."""

class StackedLstsqResult:
    """``weighted_lstsq``'s result for a stack: ``x`` and per-member diagnostics, arrays of
    the batch shape."""

    x: NDArray[np.floating]
    """β per member, (..., m) (float64 accuracy; float32 dtype for float32 input)."""
    backward_error: NDArray[np.float64]
    """The normwise backward error of each member's β on its normal equations (equilibrated
    as above; the single path's own where it solved the member)."""
    iterations: NDArray[np.int64]
    """Batched launches (the first solve and each refinement step) per member; the single
    path's refinement steps where it solved the member."""
    converged: NDArray[np.bool_]
    """Whether each member's refinement reached the backward error √m·ε of x's dtype."""
    single: NDArray[np.bool_]
    """Whether the single path (``weighted_lstsq`` of that member alone) solved the member."""

def use_device(index: Optional[int]) -> None:
    """Chooses the GPU (the EGL device of that index, as ``info()`` and ``symraster info``
    count them; ``None``: the default, the first hardware device, else Mesa's software
    renderer) for this process. Call it before the process's first GPU call: a process holds
    one GPU context, opened by that call, and choosing another device afterwards raises
    ``DeviceError``. At import the package reads ``SYMRASTER_EGL_DEVICE`` (the command line's
    variable for the same choice; empty: the default) and chooses that device; a value that is
    not an index raises ``DeviceError``. For several GPUs, one process per GPU (one Dask
    worker per GPU: ``symraster.dask.DevicePerWorker``)."""

class Cholesky:
    """The Cholesky factor of an SPD matrix kept on the GPU (the tiled method keeps it there;
    the other methods hold it on the host) for repeated solves.

    >>> f = Cholesky(c)            # doctest: +SKIP
    >>> x1, x2 = f.solve(b1), f.solve(b2)

    ``lower`` names the triangle of ``a`` read. For float64 ``a`` the object keeps the
    symmetric matrix (one float64 copy) and ``solve`` refines in float64 (float64 accuracy);
    for float32 it solves in float32. ``close()`` (or ``with``) frees the GPU memory at once.
    """

    dtype: np.dtype
    lower: bool
    order: int
    method: str
    """The method that computed the factor (``"tiled"``, ``"blocked"``, ``"faithful"``)."""
    storage: str
    on_gpu: bool
    """Whether the factor is held on the GPU (solves run there)."""
    def __init__(
        self,
        a: ArrayLike,
        lower: bool = False,
        *,
        method: _Method = "auto",
        storage: _Storage = "full",
        check_finite: bool = True,
    ) -> None: ...
    def solve(self, b: ArrayLike, check_finite: bool = True) -> NDArray[np.floating]:
        """x with ``a @ x = b``, b 1-D or 2-D. float64: refined in float64 from the GPU's
        float32 factor; where that stalls (a too ill-conditioned for float32), solved with
        the float64 factor instead (computed once on the host and kept), as dsposv falls
        back."""
    @property
    def factor(self) -> NDArray[np.floating]:
        """L (``lower=True``) or U = Lᵀ in the input's dtype: float64's accuracy for float64
        (dpotrf on the host, computed once), float32's (the GPU's factor) for float32."""
    def inv(self) -> NDArray[np.floating]:
        """a⁻¹: float64 as ``inv(a, assume_a="pos")`` (float64 accuracy), float32 through the
        GPU's factor (float32 accuracy)."""
    def close(self) -> None:
        """Frees the factor now; later use raises ``ValueError``."""
    def __enter__(self) -> "Cholesky": ...
    def __exit__(self, *exc: object) -> None: ...

BATCH_MAX_ORDER: int
# Every batched function takes an empty batch (B = 0) or problems of order 0 (n = 0) and
# returns numpy's empty shapes (info all 0); batched_syrk with k = 0 gives zeros.
"""The largest order n the batched functions take (256: one GPU work group per problem)."""

def batched_syrk(
    a: ArrayLike, d: Optional[ArrayLike] = None, *, check_finite: bool = True
) -> NDArray[np.floating]:
    """The lower triangles of ``a[p] @ diag(d[p]) @ a[p].T`` for every problem p: ``a``
    (B, n, k), ``d`` (B, k) weights (default ones); returns (B, n, n), zeros above each
    diagonal, in the inputs' dtype (computed on the GPU in float32: float32 accuracy).
    n ≤ ``BATCH_MAX_ORDER``. B = 0 or n = 0 gives the empty (B, n, n); k = 0 zeros."""

def batched_cholesky(
    c: ArrayLike, lower: bool = True, *, check_finite: bool = True
) -> Tuple[NDArray[np.floating], NDArray[np.int32]]:
    """``(L, info)``: the Cholesky factors of the SPD matrices ``c`` (B, n, n), L (B, n, n)
    with ``c[p] = L[p] @ L[p].T`` and zeros above each diagonal (``lower=False``: U = Lᵀ per
    problem, zeros below), in ``c``'s dtype with float32 accuracy. Only the triangle named by
    ``lower`` is read. ``info`` (int32, (B,)) is LAPACK's and cuSOLVER's INFO per problem: 0,
    k > 0 when column k − 1's pivot is not positive (the matrix is not positive definite), −1
    when the factor leaves float32's range. A failed problem's L is all NaN and raises
    nothing; the others are right. n ≤ ``BATCH_MAX_ORDER``. An empty batch (0, n, n) or
    problems of order 0 (B, 0, 0) give numpy's empty L of that shape and ``info`` zeros (B,)."""

def batched_solve(
    c: ArrayLike,
    b: ArrayLike,
    refinement_steps: int = 1,
    *,
    lower: bool = True,
    check_finite: bool = True,
) -> Tuple[NDArray[np.floating], NDArray[np.int32]]:
    """``(x, info)`` with ``c[p] @ x[p] = b[p]`` for SPD ``c`` (B, n, n) (the triangle named by
    ``lower`` read) and ``b`` (B, n): x (B, n), ``info`` as ``batched_cholesky``'s, and
    ``n + 1`` where ``c[p]`` is singular to working precision (LAPACK's dposvx's INFO = N + 1):
    the float32 factor passed, but a pivot L(j,j)² fell to 1.9e-6·c[p](j,j) or below (a
    repeated or dependent unknown), so refinement cannot converge and x would be noise. A
    failed problem's x is NaN (unlike dposvx's, for INFO = n + 1 too); solve it alone with
    ``solve(a, b, assume_a="pos")``. dtypes as ``solve``'s: float32 with float32 gives
    float32, float64 (or integers) float64.

    Precision: the float32 factor, then ``refinement_steps`` (0 to 8) steps of iterative
    refinement with the residual in float64 on the GPU, x kept in float64. Each step shrinks
    the error by about κ·2⁻²⁴, so x comes close to the exact solution of the data as rounded
    once to float32; float64 input keeps that rounding (about κ·6e-8 relative). For float64
    accuracy use ``solve(a, b, assume_a="pos")`` per problem. B = 0 or n = 0: x empty (B, n),
    ``info`` zeros (B,)."""

def batched_weighted_lstsq(
    a: ArrayLike,
    d: ArrayLike,
    b: ArrayLike,
    refinement_steps: int = 1,
    *,
    check_finite: bool = True,
) -> Tuple[NDArray[np.floating], NDArray[np.int32]]:
    """``(x, info)``: x[p] minimising ‖diag(√d[p])·(b[p] − a[p] @ x[p])‖₂ for every problem,
    each ``a[p]`` observations × unknowns as in ``weighted_lstsq`` (``a`` (B, k, n), k ≥ n),
    ``d`` (B, k) non-negative weights and ``b`` (B, k) observations: x (B, n). The normal
    equations a[p]ᵀ·diag(d[p])·a[p] are formed, factored and solved on the GPU in one pass,
    with ``refinement_steps`` refinement steps (residual in float64) as ``batched_solve``'s,
    with the same precision. ``info`` per problem as ``batched_cholesky``'s (0 < k ≤ n: the
    normal matrix is singular at unknown k − 1, e.g. an unknown no observation with a
    non-zero weight determines; n + 1: it is singular to working precision, as
    ``batched_solve``'s, e.g. two unknowns whose columns of ``a[p]`` are equal or nearly so);
    a failed problem's x is NaN. dtype: the inputs'. B = 0 or
    n = 0 (no unknowns): x empty (B, n), ``info`` zeros (B,); k = 0 with n > 0 raises
    ``ValueError``."""
