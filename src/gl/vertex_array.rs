//! Vertex arrays over any vertex type: a VAO with one buffer of vertices, whose attributes the
//! vertex type describes ([`VertexFormat`]).

use super::buffer::{Buffer, BufferTarget, BufferUsage};
use super::context::Context;
use super::pod::Pod;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::marker::PhantomData;

/// One vertex attribute: the shader input at `location` reads `components` f32 values
/// (1 to 4) from byte `offset` of each vertex's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attribute {
    /// `layout(location = ...)` in the vertex shader.
    pub location: u32,
    /// Number of f32 components: 1 to 4.
    pub components: u32,
    /// Byte offset in [`VertexFormat::Data`].
    pub offset: usize,
}

impl Attribute {
    /// An attribute of `components` f32 values at byte `offset`, for shader input `location`.
    pub const fn f32s(location: u32, components: u32, offset: usize) -> Self {
        Self {
            location,
            components,
            offset,
        }
    }
}

/// A vertex type a [`VertexArray`] can hold: its attributes, and its data as GL reads it.
pub trait VertexFormat: Copy {
    /// One vertex's data, attribute after attribute, e.g. `[f32; 5]`.
    type Data: Pod;
    /// The attributes, with byte offsets into [`Self::Data`].
    const ATTRIBUTES: &'static [Attribute];
    /// This vertex's data.
    fn data(&self) -> Self::Data;
}

/// A VAO with one buffer of vertices of type `V` (the paper's vertex is `draw::Vertex`).
pub struct VertexArray<V: VertexFormat> {
    ctx: Context,
    vao: glow::VertexArray,
    // Dropped after the VAO that points into it.
    buffer: Buffer<V::Data>,
    _vertex: PhantomData<V>,
}

impl<V: VertexFormat> VertexArray<V> {
    /// Creates the VAO and uploads `vertices` once (a run's geometry).
    pub fn new(ctx: &Context, vertices: &[V]) -> Result<Self> {
        Self::with_usage(ctx, vertices, BufferUsage::Static)
    }

    /// An empty vertex array whose contents are replaced for about every draw
    /// ([`VertexArray::upload`]), such as a frame's overlay.
    pub fn streaming(ctx: &Context) -> Result<Self> {
        Self::with_usage(ctx, &[], BufferUsage::Stream)
    }

    fn with_usage(ctx: &Context, vertices: &[V], usage: BufferUsage) -> Result<Self> {
        let data: Vec<V::Data> = vertices.iter().map(V::data).collect();
        let buffer = Buffer::new(ctx, BufferTarget::Vertices, usage, &data)?;
        let gl = ctx.gl();
        let vao = unsafe { gl.create_vertex_array() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "vertex array",
                message,
            })
        })?;
        let array = Self {
            ctx: ctx.clone(),
            vao,
            buffer,
            _vertex: PhantomData,
        };
        let stride = size_of::<V::Data>() as i32;
        unsafe {
            gl.bind_vertex_array(Some(vao));
            array.buffer.bind();
            for a in V::ATTRIBUTES {
                gl.enable_vertex_attrib_array(a.location);
                gl.vertex_attrib_pointer_f32(
                    a.location,
                    a.components as i32,
                    glow::FLOAT,
                    false,
                    stride,
                    a.offset as i32,
                );
            }
            gl.bind_vertex_array(None);
        }
        ctx.check(|| format!("setting up a vertex array of {} vertices", vertices.len()))?;
        Ok(array)
    }

    /// Replaces the vertices (any number).
    pub fn upload(&mut self, vertices: &[V]) -> Result<()> {
        let data: Vec<V::Data> = vertices.iter().map(V::data).collect();
        self.buffer.upload(&data)
    }

    /// Binds the VAO.
    pub fn bind(&self) {
        unsafe { self.ctx.gl().bind_vertex_array(Some(self.vao)) }
    }

    /// Draws `count` vertices from `first` as triangles (the VAO must be bound).
    pub fn draw(&self, first: usize, count: usize) {
        debug_assert!(first + count <= self.len());
        unsafe {
            self.ctx
                .gl()
                .draw_arrays(glow::TRIANGLES, first as i32, count as i32)
        }
    }

    /// Number of vertices held.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// True when it holds no vertex.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
}

impl<V: VertexFormat> Drop for VertexArray<V> {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_vertex_array(self.vao) }
    }
}
