//! Runs a whole [`Plan`] on CPU arrays through the [`soft_raster`](super::soft_raster)
//! rasterizer, with the kernels' arithmetic in f64: Algorithms 3 and 5 executed exactly as the
//! GPU would (same fragments, same interpolated coordinates, same `floor` fetches), so plans can
//! be checked against the reference without a GPU, and every write and fetch is checked.

use super::soft_raster::{rasterize, texel};
use symraster::Matrix;
use symraster::draw::{Kernel, Plan, Target};

/// A w x h single-channel texture of f64, row by row: texel (x, y) at `data[y * w + x]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftTexture {
    /// Width in texels.
    pub width: usize,
    /// Height in texels.
    pub height: usize,
    /// The texels, row-major.
    pub data: Vec<f64>,
}

impl SoftTexture {
    /// A texture of `value`.
    pub fn filled(width: usize, height: usize, value: f64) -> Self {
        Self {
            width,
            height,
            data: vec![value; width * height],
        }
    }

    /// The texel at coordinates (u, v) as the shaders fetch it: texel (floor u, floor v);
    /// an error names the texture when that texel lies outside.
    fn fetch(&self, name: &str, u: f64, v: f64) -> Result<f64, String> {
        let (x, y) = (texel(u), texel(v));
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return Err(format!(
                "fetch from {name} at ({u}, {v}) = texel ({x}, {y}) outside its {}x{}",
                self.width, self.height
            ));
        }
        Ok(self.data[y as usize * self.width + x as usize])
    }
}

/// The state of a soft run: the ping-pong pair, b, and the texels each pass wrote.
#[derive(Clone, Debug)]
pub struct SoftRun {
    /// The pair's source (the result once the plan is done).
    pub source: SoftTexture,
    /// The pair's target.
    pub target: SoftTexture,
    /// The scaled column b (m x 1), assembly only.
    pub b: SoftTexture,
    /// For each pass run, the pixels it wrote, in rasterization order.
    pub writes: Vec<Vec<(usize, usize)>>,
}

/// Runs `plan` with the pair initialised to `source` (target zero). `a` (m x n) and `d` (n) are
/// assembly's inputs (A as the n x m texture of Algorithm 3). Fails on a fetch outside a
/// texture, a viewport that differs from the target's size, or a pixel written twice in a pass.
pub fn execute(
    plan: &Plan,
    source: SoftTexture,
    a: Option<(&Matrix<f64>, &[f64])>,
) -> Result<SoftRun, String> {
    let (w, h) = (source.width, source.height);
    let a_tex = a.map(|(a, _)| {
        let (m, n) = a.shape();
        SoftTexture {
            width: n,
            height: m,
            data: (0..m)
                .flat_map(|i| (0..n).map(move |k| a[(i, k)]))
                .collect(),
        }
    });
    let d_tex = a.map(|(_, d)| SoftTexture {
        width: d.len(),
        height: 1,
        data: d.to_vec(),
    });
    let m_b = a.map_or(0, |(a, _)| a.rows());
    let mut run = SoftRun {
        source,
        target: SoftTexture::filled(w, h, 0.0),
        b: SoftTexture::filled(m_b, 1, 0.0),
        writes: Vec::new(),
    };
    for (index, pass) in plan.passes.iter().enumerate() {
        let what = || {
            format!(
                "pass {index} ({} at step {})",
                pass.kernel.name(),
                pass.step
            )
        };
        let expected = match pass.target {
            Target::ScaledColumn => (m_b, 1),
            _ => (w, h),
        };
        if pass.viewport != expected {
            return Err(format!(
                "{}: viewport {:?} but the target is {expected:?}",
                what(),
                pass.viewport
            ));
        }
        let (vw, vh) = pass.viewport;
        let fragments = rasterize(plan.vertices_of(pass), vw, vh);
        let mut written = vec![false; vw * vh];
        let mut values = Vec::with_capacity(fragments.len());
        for f in &fragments {
            if std::mem::replace(&mut written[f.y * vw + f.x], true) {
                return Err(format!(
                    "{}: pixel ({}, {}) written twice",
                    what(),
                    f.x,
                    f.y
                ));
            }
            let here = f.y * w + f.x;
            let (t0, t1) = (f.t0, f.t1);
            // The pair's texture the pass reads: the one it does not write.
            let s = match pass.target.reads() {
                Target::PairSource => &run.source,
                _ => &run.target,
            };
            let value = match pass.kernel {
                Kernel::ColumnScaling => {
                    let at = a_tex.as_ref().ok_or("no assembly inputs")?;
                    let dt = d_tex.as_ref().ok_or("no assembly inputs")?;
                    at.fetch("A", t0[1], t0[0])? * dt.fetch("d", t0[1], t0[2])?
                }
                Kernel::OuterProductAddition => {
                    let at = a_tex.as_ref().ok_or("no assembly inputs")?;
                    s.data[here] + at.fetch("A", t0[0], t0[1])? * run.b.fetch("b", t1[0], t1[1])?
                }
                Kernel::SquareRoot => s.data[here].sqrt(),
                Kernel::Normalization => s.data[here] / s.fetch("L", t0[0], t0[1])?,
                Kernel::OuterProductSubtraction => {
                    s.data[here] - s.fetch("L", t0[0], t0[1])? * s.fetch("L", t1[1], t1[0])?
                }
                Kernel::Copy => s.data[here],
                other => return Err(format!("{other:?} draws blocks, not R32F texels")),
            };
            values.push(value);
        }
        let dest = match pass.target {
            Target::ScaledColumn => &mut run.b,
            Target::PairTarget => &mut run.target,
            Target::PairSource => &mut run.source,
        };
        for (f, v) in fragments.iter().zip(values) {
            dest.data[f.y * dest.width + f.x] = v;
        }
        run.writes
            .push(fragments.iter().map(|f| (f.x, f.y)).collect());
        if pass.swap_after {
            std::mem::swap(&mut run.source, &mut run.target);
        }
    }
    Ok(run)
}
