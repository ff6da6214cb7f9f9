//! Algorithm 1's residual on the GPU in double precision: rᵏ = AD²b − A·D²·Aᵀ·xᵏ from A, d
//! and b themselves (never from the single-precision C), with A, d and AD²b kept on the device
//! so that each iteration moves only vectors of length m.

use super::Gpu;
use crate::error::{DeviceError, Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage, ComputeProgram, Context, Uniform};
use crate::matrix::Matrix;

const TRANSPOSE_PRODUCT: &str =
    include_str!("../../glsl/least_squares/weighted_transpose_product.comp");
const RESIDUAL: &str = include_str!("../../glsl/least_squares/residual.comp");
/// Invocations per work group in both kernels (their `local_size_x`).
const GROUP: usize = 64;
/// The most work groups one residual dispatch uses (rows beyond loop within a group).
const MAX_ROW_GROUPS: usize = 65_535;

/// The problem's data on the GPU in f64, ready to evaluate residuals.
pub struct DeviceResidual {
    m: usize,
    n: usize,
    a: Buffer<f64>,
    d: Buffer<f64>,
    f: Buffer<f64>,
    x: Buffer<f64>,
    y: Buffer<f64>,
    r: Buffer<f64>,
    transpose_product: ComputeProgram,
    residual: ComputeProgram,
    rhs: Vec<f64>,
}

impl DeviceResidual {
    /// Uploads A (m x n), d and b in double precision and forms AD²b there. Needs compute
    /// shaders with GLSL doubles (OpenGL 4.3) and A within one storage buffer; otherwise
    /// [`DeviceError::Unsupported`], and the caller evaluates residuals on the CPU.
    pub fn new(
        ctx: &Context,
        max_bytes: u64,
        a: &Matrix<f64>,
        d: &[f64],
        b: &[f64],
    ) -> Result<Self> {
        let (m, n) = a.shape();
        assert_eq!((d.len(), b.len()), (n, n), "checked by the caller");
        let bytes = (m as u64).saturating_mul(n as u64).saturating_mul(8);
        if bytes > max_bytes {
            return Err(DeviceError::Unsupported {
                what: "evaluate residuals on the GPU".into(),
                why: format!(
                    "A in double precision takes {bytes} bytes, more than one storage buffer \
                     holds here ({max_bytes})"
                ),
            }
            .into());
        }
        let storage =
            |data: &[f64]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, data);
        let scratch = |len: usize| {
            Buffer::<f64>::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len.max(1),
            )
        };
        let mut device = Self {
            m,
            n,
            a: storage(a.as_slice())?,
            d: storage(d)?,
            f: Buffer::zeroed(ctx, BufferTarget::Storage, BufferUsage::Static, m)?,
            x: scratch(m)?,
            y: scratch(n)?,
            r: scratch(m)?,
            transpose_product: ComputeProgram::new(
                ctx,
                "weighted_transpose_product",
                TRANSPOSE_PRODUCT,
            )?,
            residual: ComputeProgram::new(ctx, "residual", RESIDUAL)?,
            rhs: Vec::new(),
        };
        // AD²b = −(0 − A·(d∘b)): the residual kernel with f = 0 and y = d∘b.
        let db: Vec<f64> = d.iter().zip(b).map(|(d, b)| d * b).collect();
        device.y.write(0, &db)?;
        device.run_residual();
        let rhs: Vec<f64> = device
            .r
            .download_range(0, m)?
            .into_iter()
            .map(|v| -v)
            .collect();
        device.f.write(0, &rhs)?;
        device.rhs = rhs;
        Ok(device)
    }

    /// AD²b, formed on the GPU in double precision.
    pub fn rhs(&self) -> &[f64] {
        &self.rhs
    }

    /// rᵏ = AD²b − A·D²·Aᵀ·x for an x of length m.
    pub fn residual(&self, x: &[f64]) -> Result<Vec<f64>> {
        if x.len() != self.m {
            return Err(Error::shape(format!(
                "the residual needs x of length {}, but it has {}",
                self.m,
                x.len()
            )));
        }
        self.x.write(0, x)?;
        let sizes = self.sizes();
        self.transpose_product.set_all(&sizes);
        self.a.bind_base(0);
        self.d.bind_base(1);
        self.x.bind_base(2);
        self.y.bind_base(3);
        self.transpose_product
            .dispatch([self.n.div_ceil(GROUP) as u32, 1, 1]);
        self.run_residual();
        self.r.download_range(0, self.m)
    }

    /// r = f − A·y with the buffers as they are (GL errors surface at the checked read-back
    /// that follows every call).
    fn run_residual(&self) {
        self.residual.set_all(&self.sizes());
        self.a.bind_base(0);
        self.f.bind_base(1);
        self.y.bind_base(2);
        self.r.bind_base(3);
        self.residual
            .dispatch([self.m.min(MAX_ROW_GROUPS) as u32, 1, 1]);
    }

    fn sizes(&self) -> [(&'static str, Uniform); 2] {
        [
            ("m", Uniform::U32(self.m as u32)),
            ("n", Uniform::U32(self.n as u32)),
        ]
    }
}

impl Gpu {
    /// The least-squares problem's data on this GPU for residuals in f64
    /// ([`DeviceResidual`]), or why not (no compute shaders, A too large for one buffer).
    pub fn device_residual(&self, a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<DeviceResidual> {
        if !self.info().has_compute() {
            return Err(DeviceError::Unsupported {
                what: "evaluate residuals on the GPU".into(),
                why: "it needs compute shaders with doubles (OpenGL 4.3)".into(),
            }
            .into());
        }
        DeviceResidual::new(self.context(), self.max_storage_bytes()?, a, d, b)
    }
}
