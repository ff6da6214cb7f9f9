//! A reference rasterizer in f64, to check geometry without a GPU.
//!
//! A fragment is produced for each pixel whose centre lies inside a triangle. The paper's
//! triangles keep every edge .5 away from pixel centres; the diagonal shared by the two
//! triangles of a rectangle may pass through centres, and such a centre goes to exactly one of
//! them, as GL guarantees for shared edges. T0 and T1 are interpolated linearly, as a GPU does
//! for w = 1.

use symraster::draw::Vertex;

/// One fragment: its pixel and interpolated texture coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fragment {
    /// Pixel column.
    pub x: usize,
    /// Pixel row.
    pub y: usize,
    /// Interpolated T0.
    pub t0: [f64; 3],
    /// Interpolated T1.
    pub t1: [f64; 2],
}

/// The texel a coordinate selects: `floor`, as the shaders do.
pub fn texel(c: f64) -> i64 {
    c.floor() as i64
}

/// Rasterizes a triangle list into a `width` x `height` viewport.
pub fn rasterize(vertices: &[Vertex], width: usize, height: usize) -> Vec<Fragment> {
    let mut out = Vec::new();
    for tri in vertices.chunks_exact(3) {
        rasterize_triangle(tri, width, height, &mut out);
    }
    out
}

fn rasterize_triangle(tri: &[Vertex], width: usize, height: usize, out: &mut Vec<Fragment>) {
    let p = |v: &Vertex| (v.position[0] as f64, v.position[1] as f64);
    let (mut ia, mut ib, ic) = (0, 1, 2);
    let area = |a: (f64, f64), b: (f64, f64), c: (f64, f64)| {
        (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
    };
    let mut twice_area = area(p(&tri[0]), p(&tri[1]), p(&tri[2]));
    if twice_area == 0.0 {
        return;
    }
    if twice_area < 0.0 {
        // Make the triangle counter-clockwise so that interiors have positive edge functions.
        std::mem::swap(&mut ia, &mut ib);
        twice_area = -twice_area;
    }
    let (a, b, c) = (p(&tri[ia]), p(&tri[ib]), p(&tri[ic]));
    // A centre exactly on an edge belongs to one of the two triangles sharing it (a top-left
    // style rule): traversed in opposite directions, the edge passes the test in one only.
    let owns = |from: (f64, f64), to: (f64, f64)| {
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        dy < 0.0 || (dy == 0.0 && dx > 0.0)
    };
    let inside = |e: f64, from, to| e > 0.0 || (e == 0.0 && owns(from, to));
    let (xmin, xmax) = (a.0.min(b.0).min(c.0), a.0.max(b.0).max(c.0));
    let (ymin, ymax) = (a.1.min(b.1).min(c.1), a.1.max(b.1).max(c.1));
    let x0 = xmin.floor().max(0.0) as usize;
    let y0 = ymin.floor().max(0.0) as usize;
    let x1 = (xmax.ceil().max(0.0) as usize).min(width);
    let y1 = (ymax.ceil().max(0.0) as usize).min(height);
    for y in y0..y1 {
        for x in x0..x1 {
            let q = (x as f64 + 0.5, y as f64 + 0.5);
            let (e_bc, e_ca, e_ab) = (area(b, c, q), area(c, a, q), area(a, b, q));
            if inside(e_bc, b, c) && inside(e_ca, c, a) && inside(e_ab, a, b) {
                let w = [e_bc / twice_area, e_ca / twice_area, e_ab / twice_area];
                let (va, vb, vc) = (&tri[ia], &tri[ib], &tri[ic]);
                let lerp = |f: &dyn Fn(&Vertex) -> f32| {
                    w[0] * f(va) as f64 + w[1] * f(vb) as f64 + w[2] * f(vc) as f64
                };
                out.push(Fragment {
                    x,
                    y,
                    t0: [lerp(&|v| v.t0[0]), lerp(&|v| v.t0[1]), lerp(&|v| v.t0[2])],
                    t1: [lerp(&|v| v.t1[0]), lerp(&|v| v.t1[1])],
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use symraster::draw::texel_quad;

    #[test]
    fn texel_quad_covers_one_pixel_once() {
        let f = rasterize(&texel_quad(2, 1), 4, 4);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].x, f[0].y), (2, 1));
    }

    #[test]
    fn rectangle_with_centres_on_its_diagonal_covers_each_pixel_once() {
        // A 1 x 3 column: its diagonal passes through the centre of the middle pixel.
        let r = symraster::draw::rectangle(1.0, 2.0, 2.0, 5.0, |_, _| ([0.0; 3], [0.0; 2]));
        let mut f: Vec<_> = rasterize(&r, 8, 8).iter().map(|f| (f.x, f.y)).collect();
        f.sort();
        assert_eq!(f, vec![(1, 2), (1, 3), (1, 4)]);
    }
}
