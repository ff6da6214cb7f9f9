//! The vertices a pass draws: the paper's vertex (position V, texture coordinates T0 and T1)
//! and the rectangles built of them.

/// One vertex: its position V and the two texture coordinates T0, T1 the rasterizer
/// interpolates (the paper's TEXCOORD0 and TEXCOORD1).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// V, in texels of the render target.
    pub position: [f32; 2],
    /// T0 (three components: Kernel 1 uses .yx and .yz).
    pub t0: [f32; 3],
    /// T1.
    pub t1: [f32; 2],
}

impl Vertex {
    /// A vertex with T0 = (t0x, t0y, t0z) and T1 = (t1x, t1y).
    pub const fn new(position: [f32; 2], t0: [f32; 3], t1: [f32; 2]) -> Self {
        Self { position, t0, t1 }
    }

    /// A vertex whose texture coordinates are unused.
    pub const fn bare(x: f32, y: f32) -> Self {
        Self::new([x, y], [0.0; 3], [0.0; 2])
    }
}

/// Two triangles covering the axis-aligned rectangle [x0, x1] x [y0, y1], every corner carrying
/// the texture coordinates `attrs(x, y)` so they interpolate across it.
pub fn rectangle(
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    attrs: impl Fn(f32, f32) -> ([f32; 3], [f32; 2]),
) -> [Vertex; 6] {
    let v = |x: f32, y: f32| {
        let (t0, t1) = attrs(x, y);
        Vertex::new([x, y], t0, t1)
    };
    [
        v(x0, y0),
        v(x0, y1),
        v(x1, y1),
        v(x0, y0),
        v(x1, y1),
        v(x1, y0),
    ]
}

/// Two triangles covering exactly texel (x, y).
pub fn texel_quad(x: usize, y: usize) -> [Vertex; 6] {
    let (x, y) = (x as f32, y as f32);
    rectangle(x, y, x + 1.0, y + 1.0, |_, _| ([0.0; 3], [0.0; 2]))
}

/// The paper's vertex: attribute 0 is the position V, 1 is T0 (three components), 2 is T1.
impl crate::gl::VertexFormat for Vertex {
    type Data = [f32; 7];
    const ATTRIBUTES: &'static [crate::gl::Attribute] = &[
        crate::gl::Attribute::f32s(0, 2, 0),
        crate::gl::Attribute::f32s(1, 3, 8),
        crate::gl::Attribute::f32s(2, 2, 20),
    ];

    fn data(&self) -> [f32; 7] {
        let (v, t0, t1) = (self.position, self.t0, self.t1);
        [v[0], v[1], t0[0], t0[1], t0[2], t1[0], t1[1]]
    }
}
