//! The tuning values the methods take from the environment, declared once with their ranges,
//! and one rule that checks them all: a number in its knob's range, then the product kernel's
//! tiles against the device's limits. A bad value is a one-line
//! [`DeviceError::BadEnvironment`] or [`DeviceError::BadTuning`] before any work is done, never
//! a hang, a panic or a wrong result.

use crate::error::{DeviceError, Error, Result};
use crate::gl::Context;
use crate::tiled::KernelConfig;

/// A numeric tuning variable: its name, what it means, and the values it may take.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// The environment variable.
    pub name: &'static str,
    /// What its value must be, for the error message.
    pub expected: &'static str,
    /// The smallest value allowed.
    pub min: u64,
    /// The largest value allowed.
    pub max: u64,
    /// A multiple the value must be of (1: any).
    pub multiple_of: u64,
}

impl Knob {
    /// The value when the variable is set, checked against the knob's range; `None` when unset
    /// or empty.
    pub fn read(&self) -> Result<Option<u64>> {
        match std::env::var(self.name) {
            Ok(v) if !v.trim().is_empty() => self.parse(&v).map(Some),
            Err(std::env::VarError::NotUnicode(v)) => Err(self.bad(v.to_string_lossy().into())),
            _ => Ok(None),
        }
    }

    /// `text` as a value of this knob.
    pub fn parse(&self, text: &str) -> Result<u64> {
        match text.trim().parse::<u64>() {
            Ok(n) if (self.min..=self.max).contains(&n) && n % self.multiple_of == 0 => Ok(n),
            _ => Err(self.bad(text.to_string())),
        }
    }

    /// The value where it is set and valid, else `default` (for the places that read a knob
    /// after [`check_environment`] has refused a bad one).
    pub fn value_or(&self, default: u64) -> u64 {
        self.read().ok().flatten().unwrap_or(default)
    }

    fn bad(&self, value: String) -> Error {
        DeviceError::BadEnvironment {
            name: self.name,
            value,
            expected: self.expected,
        }
        .into()
    }
}

/// `SYMRASTER_TILED_DIAG`: the order of the diagonal blocks the tiled Cholesky factors and
/// inverts in one work group.
pub const TILED_DIAG: Knob = Knob {
    name: "SYMRASTER_TILED_DIAG",
    expected: "a multiple of 16 from 16 to 128 (the order of the tiled Cholesky's diagonal blocks)",
    min: 16,
    max: 128,
    multiple_of: 16,
};

/// `SYMRASTER_TILED_OUTER`: the tiled Cholesky's outer block-column width (rounded up to a
/// multiple of the diagonal blocks' order).
pub const TILED_OUTER: Knob = Knob {
    name: "SYMRASTER_TILED_OUTER",
    expected: "a number of columns from 1 to 65536 (the tiled Cholesky's outer block columns)",
    min: 1,
    max: 65536,
    multiple_of: 1,
};

/// `SYMRASTER_TILED_SPLIT`: the order from which full storage is factored with RFP's split.
pub const TILED_SPLIT: Knob = Knob {
    name: "SYMRASTER_TILED_SPLIT",
    expected: "an order from 1 to 4294967295 (where full storage is factored with RFP's split)",
    min: 1,
    max: u32::MAX as u64,
    multiple_of: 1,
};

/// `SYMRASTER_TILED_LD_PAD`: values added to full storage's row stride.
pub const TILED_LD_PAD: Knob = Knob {
    name: "SYMRASTER_TILED_LD_PAD",
    expected: "a number of values from 0 to 65536 (the padding of full storage's rows)",
    min: 0,
    max: 65536,
    multiple_of: 1,
};

/// `SYMRASTER_TILED_MAX_BUFFER_BYTES`: lowers the bytes of one storage buffer of a split
/// matrix (it never raises the device's limit).
pub const TILED_MAX_BUFFER_BYTES: Knob = Knob {
    name: "SYMRASTER_TILED_MAX_BUFFER_BYTES",
    expected: "a number of bytes (≥ 4) for one storage buffer of a tiled matrix",
    min: 4,
    max: u64::MAX,
    multiple_of: 1,
};

/// `SYMRASTER_MAPPED_UPLOAD`: 0 turns off uploads through a mapping, 1 keeps them.
pub const MAPPED_UPLOAD: Knob = Knob {
    name: "SYMRASTER_MAPPED_UPLOAD",
    expected: "0 or 1 (whether large uploads go through a mapping)",
    min: 0,
    max: 1,
    multiple_of: 1,
};

/// `SYMRASTER_TILED_CONFIG`: the product kernel's tiles, "wg_x,wg_y,tm,tn,bk,reads,nb".
pub const TILED_CONFIG: &str = "SYMRASTER_TILED_CONFIG";

/// What [`TILED_CONFIG`] must hold.
const CONFIG_EXPECTED: &str = "\"wg_x,wg_y,tm,tn,bk,reads,nb\" with tm and tn multiples of 4 \
     (at most 16 each), reads 0, 1 or 2, nb a multiple of 16 up to 128 (e.g. 16,16,8,8,16,1,32)";

/// The numeric knobs, in the order they are checked.
pub const KNOBS: [Knob; 6] = [
    TILED_DIAG,
    TILED_OUTER,
    TILED_SPLIT,
    TILED_LD_PAD,
    TILED_MAX_BUFFER_BYTES,
    MAPPED_UPLOAD,
];

/// The product kernel's tiles from [`TILED_CONFIG`] when set and valid in itself (its limits
/// on this device are checked by [`check_kernel_config`]).
pub fn kernel_config_from_env() -> Result<Option<KernelConfig>> {
    match std::env::var(TILED_CONFIG) {
        Ok(v) if !v.trim().is_empty() => match KernelConfig::parse(&v) {
            Some(c) => Ok(Some(c)),
            None => Err(DeviceError::BadEnvironment {
                name: TILED_CONFIG,
                value: v,
                expected: CONFIG_EXPECTED,
            }
            .into()),
        },
        Err(std::env::VarError::NotUnicode(v)) => Err(DeviceError::BadEnvironment {
            name: TILED_CONFIG,
            value: v.to_string_lossy().into(),
            expected: CONFIG_EXPECTED,
        }
        .into()),
        _ => Ok(None),
    }
}

/// Every tuning variable checked by the one rule: each numeric knob in its range, the
/// product kernel's tiles parsed. Run when a `Gpu` is made, so a bad value stops everything
/// before work starts.
pub fn check_environment() -> Result<()> {
    for knob in KNOBS {
        knob.read()?;
    }
    kernel_config_from_env().map(|_| ())
}

/// The compute limits a kernel configuration must respect on this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLimits {
    /// GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS.
    pub invocations: u64,
    /// GL_MAX_COMPUTE_WORK_GROUP_SIZE along x and y.
    pub size: [u64; 2],
    /// GL_MAX_COMPUTE_SHARED_MEMORY_SIZE in bytes.
    pub shared_bytes: u64,
}

impl GroupLimits {
    /// Asks the driver of `ctx` (which must have compute shaders).
    pub fn query(ctx: &Context) -> Result<Self> {
        use glow::HasContext;
        let gl = ctx.gl();
        let get = |name, i| unsafe { gl.get_parameter_indexed_i32(name, i).max(0) as u64 };
        let limits = Self {
            invocations: unsafe {
                gl.get_parameter_i32(glow::MAX_COMPUTE_WORK_GROUP_INVOCATIONS)
                    .max(0) as u64
            },
            size: [
                get(glow::MAX_COMPUTE_WORK_GROUP_SIZE, 0),
                get(glow::MAX_COMPUTE_WORK_GROUP_SIZE, 1),
            ],
            shared_bytes: unsafe {
                gl.get_parameter_i32(glow::MAX_COMPUTE_SHARED_MEMORY_SIZE)
                    .max(0) as u64
            },
        };
        ctx.check(|| "querying compute work group limits".into())?;
        Ok(limits)
    }
}

/// Checks a kernel configuration against the device: its work groups (the product's and the
/// diagonal block's of `diag` x `diag`) within the invocation and size limits, its shared
/// memory within the device's.
pub fn check_kernel_config(config: &KernelConfig, diag: usize, limits: &GroupLimits) -> Result<()> {
    let bad = |why: String| -> Result<()> {
        Err(DeviceError::BadTuning {
            what: format!(
                "the product kernel's tiles {},{},{},{},{},{},{}",
                config.wg_x,
                config.wg_y,
                config.tm,
                config.tn,
                config.bk,
                if config.texel {
                    2
                } else {
                    u8::from(config.shared)
                },
                config.nb
            ),
            why,
        }
        .into())
    };
    let (wx, wy) = (config.wg_x as u64, config.wg_y as u64);
    if wx * wy > limits.invocations {
        return bad(format!(
            "a work group of {wx} x {wy} invocations exceeds this device's \
             GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS of {}",
            limits.invocations
        ));
    }
    if wx > limits.size[0] || wy > limits.size[1] {
        return bad(format!(
            "a work group of {wx} x {wy} exceeds this device's GL_MAX_COMPUTE_WORK_GROUP_SIZE \
             of {} x {}",
            limits.size[0], limits.size[1]
        ));
    }
    let shared = config.shared_bytes() as u64;
    // The blocks of order nb factored and solved in shared memory (potrf_block, trsm_block:
    // the block padded, and two columns), and the inverted diagonal blocks' columns, rows and
    // pivots (potrf_inv_block: five vectors of `diag`).
    let nb = config.nb as u64;
    let blocks = (nb * (nb + 1) + 2 * nb) * 4;
    let inverted = 5 * diag as u64 * 4;
    for (what, bytes) in [
        ("the product's k-slices", shared),
        ("the diagonal blocks", blocks),
        ("the inverted diagonal blocks", inverted),
    ] {
        if bytes > limits.shared_bytes {
            return bad(format!(
                "{what} take {bytes} bytes of shared memory, and this device has \
                 GL_MAX_COMPUTE_SHARED_MEMORY_SIZE = {}",
                limits.shared_bytes
            ));
        }
    }
    Ok(())
}

/// Whether any tuning variable of the tiled kernels is set (so [`self_check`] runs).
pub fn tiled_tuning_set() -> bool {
    [TILED_CONFIG, TILED_DIAG.name, TILED_OUTER.name]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// Runs a small assembly and Cholesky factorization with the tuned tiled kernels and compares
/// them with the f64 reference: a tiling that compiles but computes wrong (registers the
/// compiler cannot hold, a work group the driver runs wrongly) is refused here, before it
/// touches the caller's data.
pub fn self_check(gpu: &crate::Gpu) -> Result<()> {
    use crate::{Format, Method, Options, reference};
    let k = gpu.tiled_kernels()?;
    let config = k.config();
    // Several product tiles each way, and several diagonal blocks.
    let m = (2 * config.bm().max(config.bn()) + 5).max(3 * config.nb + 5);
    let n = 4 * config.bk + 3;
    let a = crate::Matrix::from_fn(m, n, |i, j| (((i * 7 + j * 13) % 17) as f32 - 8.0) / 8.0);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 5) as f32 / 4.0).collect();
    let options = Options::new(Format::Full).method(Method::Tiled);
    let wrong = |what: &str, error: f64| -> Result<()> {
        Err(DeviceError::BadTuning {
            what: format!(
                "the tiled kernels' tuning ({TILED_CONFIG}, {}, {})",
                TILED_DIAG.name, TILED_OUTER.name
            ),
            why: format!(
                "a check {what} of order {m} came out wrong (relative error {error:.1e} against                  the f64 reference)"
            ),
        }
        .into())
    };
    let c = gpu.assemble(&a, &d, options)?;
    let reference = reference::assemble(
        &a.to_f64(),
        &d.iter().map(|&x| x as f64).collect::<Vec<_>>(),
    );
    let error = crate::relative_error(&c.lower_triangle(), &reference.lower_triangle());
    if error.is_nan() || error >= 1e-5 {
        return wrong("assembly", error);
    }
    // A well-conditioned SPD matrix: C plus m on the diagonal.
    let spd = crate::Matrix::from_fn(m, m, |i, j| {
        let v = if i >= j { c[(i, j)] } else { c[(j, i)] };
        if i == j { v + m as f32 } else { v }
    });
    let l = gpu.cholesky_tiled(&spd, Format::Full)?.download()?;
    let product = reference::multiply_lower_by_transpose(&l.to_f64());
    let error = crate::relative_error(&product.lower_triangle(), &spd.to_f64().lower_triangle());
    if error.is_nan() || error >= 1e-5 {
        return wrong("Cholesky factorization", error);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_take_their_range_and_nothing_else() {
        assert_eq!(TILED_OUTER.parse("512").unwrap(), 512);
        assert_eq!(TILED_OUTER.parse(" 1 ").unwrap(), 1);
        for bad in [
            "0",
            "65537",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "x",
            "",
        ] {
            let e = TILED_OUTER.parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("SYMRASTER_TILED_OUTER") && !e.contains('\n'),
                "{e}"
            );
        }
        assert!(TILED_LD_PAD.parse("18446744073709551615").is_err());
        assert_eq!(TILED_LD_PAD.parse("0").unwrap(), 0);
        assert_eq!(TILED_DIAG.parse("64").unwrap(), 64);
        for bad in ["8", "40", "144", "0"] {
            assert!(TILED_DIAG.parse(bad).is_err(), "{bad}");
        }
        assert!(MAPPED_UPLOAD.parse("2").is_err());
        assert!(TILED_MAX_BUFFER_BYTES.parse("3").is_err());
    }

    #[test]
    fn kernel_configs_beyond_the_device_are_refused() {
        let limits = GroupLimits {
            invocations: 1024,
            size: [1024, 1024],
            shared_bytes: 48 * 1024,
        };
        for c in [KernelConfig::GPU, KernelConfig::CPU, KernelConfig::TEXEL] {
            check_kernel_config(&c, 32, &limits).unwrap();
        }
        let small = GroupLimits {
            invocations: 128,
            size: [128, 128],
            shared_bytes: 8 * 1024,
        };
        let e = check_kernel_config(&KernelConfig::GPU, 32, &small)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS") && !e.contains('\n'),
            "{e}"
        );
        let narrow = GroupLimits {
            size: [8, 1024],
            ..limits
        };
        assert!(check_kernel_config(&KernelConfig::GPU, 32, &narrow).is_err());
        let tiny = GroupLimits {
            shared_bytes: 4 * 1024,
            ..limits
        };
        let e = check_kernel_config(&KernelConfig::TEXEL, 32, &tiny)
            .unwrap_err()
            .to_string();
        assert!(e.contains("diagonal blocks"), "{e}");
    }
}
