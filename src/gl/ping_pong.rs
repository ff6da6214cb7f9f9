//! The ping-pong pair of render textures the algorithms alternate.

use super::context::Context;
use super::render_texture::RenderTexture;
use super::texture::{R32F, TexelFormat};
use crate::error::Result;

/// Two equal render textures: passes read the source (S) and write the target (T), then swap.
///
/// The two keep their places in the pair, 0 and 1 (texture 0 starts as the source);
/// [`PingPong::source_index`] says which one is the source now.
pub struct PingPong<F: TexelFormat = R32F> {
    pair: [RenderTexture<F>; 2],
    source: usize,
}

impl PingPong<R32F> {
    /// Allocates both R32F textures.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        Self::allocate(ctx, width, height)
    }
}

impl<F: TexelFormat> PingPong<F> {
    /// Allocates both textures, of format `F`.
    pub fn allocate(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        Self::allocate_layers(ctx, width, height, 1)
    }

    /// Allocates both, each `layers` textures drawn at once (multiple render targets).
    pub fn allocate_layers(
        ctx: &Context,
        width: usize,
        height: usize,
        layers: usize,
    ) -> Result<Self> {
        Ok(Self {
            pair: [
                RenderTexture::allocate_layers(ctx, width, height, layers)?,
                RenderTexture::allocate_layers(ctx, width, height, layers)?,
            ],
            source: 0,
        })
    }

    /// The texture passes read (C_S, L_S).
    pub fn source(&self) -> &RenderTexture<F> {
        &self.pair[self.source]
    }

    /// The texture passes write (C_T, L_T).
    pub fn target(&self) -> &RenderTexture<F> {
        &self.pair[1 - self.source]
    }

    /// Which texture of the pair (0 or 1) is the source now: 0 before any swap.
    pub fn source_index(&self) -> usize {
        self.source
    }

    /// Texture 0 or 1 of the pair, whatever its role now.
    pub fn get(&self, index: usize) -> &RenderTexture<F> {
        &self.pair[index]
    }

    /// The source alone, the target freed (to read a result back without holding both).
    pub fn into_source(self) -> RenderTexture<F> {
        let [first, second] = self.pair;
        if self.source == 0 { first } else { second }
    }

    /// Exchanges source and target.
    pub fn swap(&mut self) {
        self.source = 1 - self.source;
    }

    /// Width of each texture.
    pub fn width(&self) -> usize {
        self.pair[0].width()
    }

    /// Height of each texture.
    pub fn height(&self) -> usize {
        self.pair[0].height()
    }
}
