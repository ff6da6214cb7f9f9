//! Runs a plan on the CPU: the soft rasterizer generates fragments, the kernels run in f64 with
//! the shaders' floor() fetches. Checks the geometry, texture coordinates and pass order with
//! no GPU at all.

use std::collections::HashSet;
use symraster::geometry::soft_raster::{Fragment, rasterize, texel};
use symraster::geometry::{Kernel, Plan, Target};

/// A texture in f64.
#[derive(Clone, Debug)]
pub struct Tex {
    pub w: usize,
    pub h: usize,
    pub data: Vec<f64>,
}

impl Tex {
    pub fn new(w: usize, h: usize, data: Vec<f64>) -> Self {
        assert_eq!(data.len(), w * h);
        Self { w, h, data }
    }

    /// texRECT: texel floor(c); out-of-range reads are a geometry bug.
    pub fn fetch(&self, x: f64, y: f64) -> f64 {
        let (tx, ty) = (texel(x), texel(y));
        assert!(
            tx >= 0 && ty >= 0 && (tx as usize) < self.w && (ty as usize) < self.h,
            "fetch at ({x}, {y}) outside {}x{}",
            self.w,
            self.h
        );
        self.data[ty as usize * self.w + tx as usize]
    }
}

/// The emulated textures of a run.
pub struct Emulation {
    pub pair: [Tex; 2],
    pub source: usize,
    pub a: Option<Tex>,
    pub d: Option<Tex>,
    pub b: Option<Tex>,
}

impl Emulation {
    /// Runs every pass; returns the texels written by each pass, in order.
    pub fn run(&mut self, plan: &Plan) -> Vec<Vec<(usize, usize)>> {
        let mut written = Vec::new();
        for pass in &plan.passes {
            let (vw, vh) = pass.viewport;
            let frags = rasterize(plan.vertices_of(pass), vw, vh);
            let mut seen = HashSet::new();
            for f in &frags {
                assert!(
                    seen.insert((f.x, f.y)),
                    "{} pass step {}: texel ({}, {}) drawn twice",
                    pass.kernel.name(),
                    pass.step,
                    f.x,
                    f.y
                );
            }
            let values: Vec<f64> = frags
                .iter()
                .map(|f| self.kernel(pass.kernel, pass.target, f))
                .collect();
            let target = match pass.target {
                Target::ScaledColumn => self.b.as_mut().unwrap(),
                Target::Target => &mut self.pair[1 - self.source],
                Target::Source => &mut self.pair[self.source],
            };
            for (f, v) in frags.iter().zip(values) {
                target.data[f.y * target.w + f.x] = v;
            }
            written.push(frags.iter().map(|f| (f.x, f.y)).collect());
            if pass.swap_after {
                self.source = 1 - self.source;
            }
        }
        written
    }

    fn kernel(&self, kernel: Kernel, target: Target, f: &Fragment) -> f64 {
        // The pair's texture the pass reads: the one it does not write.
        let s = match target.reads() {
            Target::Source => &self.pair[self.source],
            _ => &self.pair[1 - self.source],
        };
        let here = (f.x as f64 + 0.5, f.y as f64 + 0.5);
        let [t0x, t0y, t0z] = f.t0;
        let [t1x, t1y] = f.t1;
        match kernel {
            Kernel::ColumnScaling => {
                self.a.as_ref().unwrap().fetch(t0y, t0x) * self.d.as_ref().unwrap().fetch(t0y, t0z)
            }
            Kernel::OuterProductAddition => {
                s.fetch(here.0, here.1)
                    + self.a.as_ref().unwrap().fetch(t0x, t0y)
                        * self.b.as_ref().unwrap().fetch(t1x, t1y)
            }
            Kernel::SquareRoot => s.fetch(here.0, here.1).sqrt(),
            Kernel::Normalization => s.fetch(here.0, here.1) / s.fetch(t0x, t0y),
            Kernel::OuterProductSubtraction => {
                s.fetch(here.0, here.1) - s.fetch(t0x, t0y) * s.fetch(t1y, t1x)
            }
            Kernel::Copy => s.fetch(here.0, here.1),
        }
    }
}
