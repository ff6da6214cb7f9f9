//! The vertex array and buffer holding a run's draw geometry, uploaded once per run.

use super::context::Context;
use crate::error::{DeviceError, Error, Result};
use crate::geometry::Vertex;
use glow::HasContext;

/// A VAO with one VBO of [`Vertex`]: attribute 0 the position, 1 is T0, 2 is T1.
pub struct VertexArray {
    ctx: Context,
    vao: glow::VertexArray,
    vbo: glow::Buffer,
    len: usize,
}

impl VertexArray {
    /// Creates the VAO and uploads `vertices`.
    pub fn new(ctx: &Context, vertices: &[Vertex]) -> Result<Self> {
        let gl = ctx.gl();
        unsafe {
            let vao = gl.create_vertex_array().map_err(|message| {
                Error::from(DeviceError::GlCreate {
                    what: "vertex array",
                    message,
                })
            })?;
            let vbo = match gl.create_buffer() {
                Ok(b) => b,
                Err(message) => {
                    gl.delete_vertex_array(vao);
                    return Err(Error::from(DeviceError::GlCreate {
                        what: "vertex buffer",
                        message,
                    }));
                }
            };
            let va = Self {
                ctx: ctx.clone(),
                vao,
                vbo,
                len: vertices.len(),
            };
            gl.bind_vertex_array(Some(vao));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
            gl.buffer_data_u8_slice(
                glow::ARRAY_BUFFER,
                Vertex::as_bytes(vertices),
                glow::STATIC_DRAW,
            );
            let stride = std::mem::size_of::<Vertex>() as i32;
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 2, glow::FLOAT, false, stride, 0);
            gl.enable_vertex_attrib_array(1);
            gl.vertex_attrib_pointer_f32(1, 3, glow::FLOAT, false, stride, 8);
            gl.enable_vertex_attrib_array(2);
            gl.vertex_attrib_pointer_f32(2, 2, glow::FLOAT, false, stride, 20);
            ctx.check(|| format!("uploading {} vertices", vertices.len()))?;
            Ok(va)
        }
    }

    /// Binds the VAO.
    pub fn bind(&self) {
        unsafe { self.ctx.gl().bind_vertex_array(Some(self.vao)) }
    }

    /// Draws `count` vertices from `first` as triangles (the VAO must be bound).
    pub fn draw(&self, first: usize, count: usize) {
        debug_assert!(first + count <= self.len);
        unsafe {
            self.ctx
                .gl()
                .draw_arrays(glow::TRIANGLES, first as i32, count as i32)
        }
    }

    /// Number of vertices held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no vertex.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for VertexArray {
    fn drop(&mut self) {
        unsafe {
            self.ctx.gl().delete_buffer(self.vbo);
            self.ctx.gl().delete_vertex_array(self.vao);
        }
    }
}
