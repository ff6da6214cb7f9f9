//! Composes one frame from a [`Snapshot`]: each texture as a heatmap, the last pass's triangles
//! outlined, a legend, the status lines and an optional help overlay, drawn with GL into any
//! framebuffer (a window's, or the recorder's offscreen one).

use super::colormap::{self, NAN_COLOUR, Range, UNUSED_COLOURS};
use super::session::{Panel, PanelKind, Snapshot};
use symraster::error::Result;
use symraster::gl::{
    Attribute, Context, Framebuffer, Program, Rgba8, Texture, VertexArray, VertexFormat,
};

/// The keys of the window, shown by its help overlay (H) and in the README.
pub const HELP: &[&str] = &[
    "Right / N      next pass",
    "Left / P       previous pass (re-runs from the start)",
    "Home / End     first / last pass",
    "Space          play / pause",
    "Up / Down      play faster / slower",
    "Tab / S-Tab    texture in the large view (first: follow the pass)",
    "F              switch format: full / packed",
    "O              switch operation: assembly / Cholesky",
    "R              restart with a new random matrix",
    "+ - wheel      zoom the large view (0 resets zoom and pan)",
    "drag           pan the large view",
    "H / F1         show / hide this help",
    "Q / Esc        quit",
    "",
    "viridis: dark = min, yellow = max of each texture",
    "magenta: NaN, never written (textures start as NaN)",
    "grey checker: texel holds no matrix entry",
    "red: the triangles of the pass just run",
];

const BACKGROUND: [u8; 3] = [18, 18, 22];
const TEXT: [u8; 3] = [230, 230, 230];
const DIM_TEXT: [u8; 3] = [150, 150, 160];
const OUTLINE: [u8; 3] = [255, 48, 48];
const HIGHLIGHT: [u8; 3] = [255, 255, 255];

/// Which texture the large view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// The texture the last pass wrote.
    #[default]
    Follow,
    /// A fixed panel (index into [`Snapshot::panels`]).
    Panel(usize),
}

/// What the user controls in the picture: the large view's texture, zoom and pan, the cursor.
#[derive(Clone, Debug)]
pub struct ViewState {
    /// The texture of the large view.
    pub selection: Selection,
    /// Zoom of the large view (1 fits the texture).
    pub zoom: f32,
    /// Pan of the large view, in pixels.
    pub pan: [f32; 2],
    /// The mouse position in pixels from the top-left corner.
    pub cursor: Option<[f32; 2]>,
    /// Whether the help overlay is shown.
    pub help: bool,
    /// The third status line (keys hint, play state, messages).
    pub hint: String,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            selection: Selection::Follow,
            zoom: 1.0,
            pan: [0.0, 0.0],
            cursor: None,
            help: false,
            hint: String::new(),
        }
    }
}

impl ViewState {
    /// The panel shown large.
    pub fn selected(&self, snapshot: &Snapshot) -> usize {
        match self.selection {
            Selection::Follow => snapshot.outline.as_ref().map_or(0, |o| o.panel),
            Selection::Panel(i) => i.min(snapshot.panels.len().saturating_sub(1)),
        }
    }
}

/// An axis-aligned rectangle in pixels, top-left origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f32,
    /// Top.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

impl Rect {
    fn contains(&self, p: [f32; 2]) -> bool {
        p[0] >= self.x && p[0] < self.x + self.w && p[1] >= self.y && p[1] < self.y + self.h
    }
}

/// Where a panel's texels are drawn: texel (x, y) covers
/// `[origin + (x, y) * cell, origin + (x + 1, y + 1) * cell)`, clipped to `clip`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Place {
    /// Index into [`Snapshot::panels`].
    pub panel: usize,
    /// Pixel position of the corner of texel (0, 0).
    pub origin: [f32; 2],
    /// Size of one texel in pixels (x, y).
    pub cell: [f32; 2],
    /// The region the panel may draw in.
    pub clip: Rect,
    /// Whether this is the large view.
    pub large: bool,
}

impl Place {
    /// The pixel position of texture coordinate (x, y) (in texels).
    pub fn to_pixels(self, p: [f32; 2]) -> [f32; 2] {
        [
            self.origin[0] + p[0] * self.cell[0],
            self.origin[1] + p[1] * self.cell[1],
        ]
    }

    /// The pixel (column, row) at the centre of texel (x, y).
    #[cfg(test)]
    pub fn centre_pixel(&self, x: usize, y: usize) -> (u32, u32) {
        let p = self.to_pixels([x as f32 + 0.5, y as f32 + 0.5]);
        (p[0].floor() as u32, p[1].floor() as u32)
    }

    /// The texel under pixel position `p`, if any.
    pub fn texel_at(&self, p: [f32; 2], panel: &Panel) -> Option<(usize, usize)> {
        if !self.clip.contains(p) {
            return None;
        }
        let x = ((p[0] - self.origin[0]) / self.cell[0]).floor();
        let y = ((p[1] - self.origin[1]) / self.cell[1]).floor();
        (x >= 0.0 && y >= 0.0 && (x as usize) < panel.width && (y as usize) < panel.height)
            .then_some((x as usize, y as usize))
    }

    fn extent(&self, panel: &Panel) -> Rect {
        Rect {
            x: self.origin[0],
            y: self.origin[1],
            w: panel.width as f32 * self.cell[0],
            h: panel.height as f32 * self.cell[1],
        }
    }
}

/// Where everything goes in a frame of a given size.
#[derive(Clone, Debug)]
pub struct FrameLayout {
    /// Frame size in pixels.
    pub size: (u32, u32),
    /// Font scale (8 x 8 glyphs times this).
    pub font: f32,
    /// Line height in pixels.
    pub line: f32,
    /// The large view first, then one thumbnail per panel.
    pub places: Vec<Place>,
}

impl FrameLayout {
    /// The layout of `snapshot` in a frame of `size`.
    pub fn new(snapshot: &Snapshot, view: &ViewState, size: (u32, u32)) -> Self {
        let (w, h) = (size.0 as f32, size.1 as f32);
        let font: f32 = if size.0 >= 1000 && size.1 >= 600 {
            2.0
        } else {
            1.0
        };
        let line = 8.0 * font + 4.0;
        let header = 3.0 * line + 8.0;
        let split = (w * 0.62).floor();
        let legend = 10.0 * font + line + 12.0;
        let mut places = Vec::new();
        if snapshot.panels.is_empty() {
            return Self {
                size,
                font,
                line,
                places,
            };
        }
        let selected = view.selected(snapshot);
        let area = Rect {
            x: 8.0,
            y: header + line,
            w: (split - 16.0).max(1.0),
            h: (h - header - line - legend).max(1.0),
        };
        places.push(fit(
            selected,
            &snapshot.panels[selected],
            area,
            view.zoom,
            view.pan,
            true,
        ));
        let n = snapshot.panels.len() as f32;
        let slot = ((h - header - 4.0) / n).floor();
        for (i, panel) in snapshot.panels.iter().enumerate() {
            let area = Rect {
                x: split + 8.0,
                y: header + i as f32 * slot + line,
                w: (w - split - 16.0).max(1.0),
                h: (slot - line - 6.0).max(1.0),
            };
            places.push(fit(i, panel, area, 1.0, [0.0, 0.0], false));
        }
        Self {
            size,
            font,
            line,
            places,
        }
    }

    /// The large view's place.
    pub fn large(&self) -> Option<&Place> {
        self.places.first()
    }

    /// The thumbnail of panel `i`.
    #[cfg(test)]
    pub fn thumbnail(&self, i: usize) -> Option<&Place> {
        self.places.iter().skip(1).find(|p| p.panel == i)
    }

    /// The (panel, x, y) of the texel under pixel position `p`.
    pub fn hit(&self, snapshot: &Snapshot, p: [f32; 2]) -> Option<(usize, usize, usize)> {
        self.places.iter().find_map(|place| {
            place
                .texel_at(p, &snapshot.panels[place.panel])
                .map(|(x, y)| (place.panel, x, y))
        })
    }
}

/// Fits a panel in `area`: whole pixels per texel when they fit, one-row textures drawn taller.
fn fit(i: usize, panel: &Panel, area: Rect, zoom: f32, pan: [f32; 2], large: bool) -> Place {
    let (tw, th) = (panel.width as f32, panel.height as f32);
    let mut s = if panel.height == 1 {
        area.w / tw
    } else {
        (area.w / tw).min(area.h / th)
    };
    if s >= 1.0 {
        s = s.floor();
    }
    let sy = if panel.height == 1 {
        s.clamp(6.0, area.h.clamp(1.0, 32.0)).floor()
    } else {
        s
    };
    Place {
        panel: i,
        origin: [(area.x - pan[0]).floor(), (area.y - pan[1]).floor()],
        cell: [s * zoom, sy * zoom],
        clip: area,
        large,
    }
}

/// A value for a label: fixed point when moderate, scientific otherwise.
pub fn format_value(v: f32) -> String {
    let a = v.abs();
    if v.is_nan() {
        "NaN".into()
    } else if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.3e}")
    } else {
        format!("{v:.4}")
    }
}

/// The heatmap of a panel as RGBA texels, row 0 first.
pub fn heatmap(panel: &Panel) -> Vec<[u8; 4]> {
    let range = panel.range.unwrap_or(Range { min: 0.0, max: 1.0 });
    let mut out = Vec::with_capacity(panel.width * panel.height);
    for y in 0..panel.height {
        for x in 0..panel.width {
            let c = colormap::texel_colour(range, panel.value(x, y), panel.holds_entry(x, y), x, y);
            out.push([c[0], c[1], c[2], 255]);
        }
    }
    out
}

/// A vertex of the frame's geometry: a position in pixels and a colour (r, g, b), or for
/// images a texture coordinate (u, v, 0).
#[derive(Clone, Copy, Debug)]
struct FrameVertex {
    position: [f32; 2],
    extra: [f32; 3],
}

impl VertexFormat for FrameVertex {
    type Data = [f32; 5];
    const ATTRIBUTES: &'static [Attribute] = &[Attribute::f32s(0, 2, 0), Attribute::f32s(1, 3, 8)];

    fn data(&self) -> [f32; 5] {
        let (p, e) = (self.position, self.extra);
        [p[0], p[1], e[0], e[1], e[2]]
    }
}

/// Triangles with a colour (or texture coordinate) per vertex.
#[derive(Default)]
struct Batch {
    vertices: Vec<FrameVertex>,
}

impl Batch {
    fn vertex(&mut self, position: [f32; 2], extra: [f32; 3]) {
        self.vertices.push(FrameVertex { position, extra });
    }

    fn rect(&mut self, r: Rect, colour: [u8; 3]) {
        let c = rgb(colour);
        let (x0, y0, x1, y1) = (r.x, r.y, r.x + r.w, r.y + r.h);
        for p in [[x0, y0], [x0, y1], [x1, y1], [x0, y0], [x1, y1], [x1, y0]] {
            self.vertex(p, c);
        }
    }

    fn frame(&mut self, r: Rect, t: f32, colour: [u8; 3]) {
        self.rect(Rect { h: t, ..r }, colour);
        self.rect(
            Rect {
                y: r.y + r.h - t,
                h: t,
                ..r
            },
            colour,
        );
        self.rect(Rect { w: t, ..r }, colour);
        self.rect(
            Rect {
                x: r.x + r.w - t,
                w: t,
                ..r
            },
            colour,
        );
    }

    fn line(&mut self, a: [f32; 2], b: [f32; 2], t: f32, colour: [u8; 3]) {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt();
        if len == 0.0 {
            return;
        }
        // Extend by half the thickness at both ends so corners close.
        let (ux, uy) = (dx / len * t / 2.0, dy / len * t / 2.0);
        let (nx, ny) = (-uy, ux);
        let a = [a[0] - ux, a[1] - uy];
        let b = [b[0] + ux, b[1] + uy];
        let c = rgb(colour);
        let q = [
            [a[0] + nx, a[1] + ny],
            [a[0] - nx, a[1] - ny],
            [b[0] - nx, b[1] - ny],
            [b[0] + nx, b[1] + ny],
        ];
        for i in [0, 1, 2, 0, 2, 3] {
            self.vertex(q[i], c);
        }
    }

    /// Draws `s` (ASCII; others as '?') with its top-left at (x, y); returns the width.
    fn text(&mut self, x: f32, y: f32, s: &str, scale: f32, colour: [u8; 3], max_x: f32) -> f32 {
        let glyph_w = 8.0 * scale;
        let mut cx = x;
        for ch in s.chars() {
            if cx + glyph_w > max_x {
                break;
            }
            let code = if ch.is_ascii() {
                ch as usize
            } else {
                '?' as usize
            };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            for (row, bits) in glyph.iter().enumerate() {
                // Runs of lit pixels (bit 0 is the leftmost) become one rectangle each.
                let mut col = 0;
                while col < 8 {
                    if bits & (1 << col) == 0 {
                        col += 1;
                        continue;
                    }
                    let start = col;
                    while col < 8 && bits & (1 << col) != 0 {
                        col += 1;
                    }
                    self.rect(
                        Rect {
                            x: cx + start as f32 * scale,
                            y: y + row as f32 * scale,
                            w: (col - start) as f32 * scale,
                            h: scale,
                        },
                        colour,
                    );
                }
            }
            cx += glyph_w;
        }
        cx - x
    }
}

fn rgb(c: [u8; 3]) -> [f32; 3] {
    [
        c[0] as f32 / 255.0,
        c[1] as f32 / 255.0,
        c[2] as f32 / 255.0,
    ]
}

const SOLID_VERTEX: &str = "#version 330 core
layout(location = 0) in vec2 position;
layout(location = 1) in vec3 extra;
uniform vec2 viewport;
out vec3 value;
void main() {
    value = extra;
    gl_Position = vec4(position.x / viewport.x * 2.0 - 1.0, 1.0 - position.y / viewport.y * 2.0, 0.0, 1.0);
}
";
const SOLID_FRAGMENT: &str = "#version 330 core
in vec3 value;
out vec4 colour;
void main() { colour = vec4(value, 1.0); }
";
const IMAGE_FRAGMENT: &str = "#version 330 core
uniform sampler2D image;
in vec3 value;
out vec4 colour;
void main() { colour = texture(image, value.xy); }
";

/// Draws frames with GL on the context it was made on (the one the passes run on).
pub struct Renderer {
    ctx: Context,
    solid: Program,
    image: Program,
    vertices: VertexArray<FrameVertex>,
    /// One RGBA8 texture per panel (nearest filtering: a texel stays a crisp square).
    heatmaps: Vec<Texture<Rgba8>>,
    heatmaps_of: Option<u64>,
}

impl Renderer {
    /// Compiles the two small programs (solid colour, heatmap image).
    pub fn new(ctx: &Context) -> Result<Self> {
        let solid = Program::new(ctx, "viewer solid", SOLID_VERTEX, SOLID_FRAGMENT)?;
        let image = Program::new(ctx, "viewer image", SOLID_VERTEX, IMAGE_FRAGMENT)?;
        image.set_sampler("image", 0)?;
        let vertices = VertexArray::streaming(ctx)?;
        Ok(Self {
            ctx: ctx.clone(),
            solid,
            image,
            vertices,
            heatmaps: Vec::new(),
            heatmaps_of: None,
        })
    }

    /// Draws `snapshot` into `framebuffer` (None: the window's) of `size` pixels and returns
    /// where everything went. Leaves no state behind that a pass could trip on (no scissor, no
    /// blending).
    pub fn draw(
        &mut self,
        snapshot: &Snapshot,
        view: &ViewState,
        framebuffer: Option<&Framebuffer>,
        size: (u32, u32),
    ) -> Result<FrameLayout> {
        let layout = FrameLayout::new(snapshot, view, size);
        if self.heatmaps_of != Some(snapshot.id) {
            self.heatmaps = snapshot
                .panels
                .iter()
                .map(|p| Texture::with_texels(&self.ctx, p.width, p.height, &heatmap(p)))
                .collect::<Result<_>>()?;
            self.heatmaps_of = Some(snapshot.id);
        }
        let (overlay, thumbs, rest) = self.overlays(snapshot, view, &layout);
        match framebuffer {
            Some(f) => f.bind(),
            None => Framebuffer::bind_default(&self.ctx),
        }
        self.ctx.set_viewport(size.0 as usize, size.1 as usize);
        self.ctx.set_plain_raster_state();
        let bg = rgb(BACKGROUND);
        self.ctx.clear([bg[0], bg[1], bg[2], 1.0]);
        self.vertices.bind();
        // Heatmaps: the large one clipped to its area (it may be zoomed and panned).
        self.image.bind();
        self.image.set_viewport(size.0 as f32, size.1 as f32);
        for place in &layout.places {
            let panel = &snapshot.panels[place.panel];
            let r = place.extent(panel);
            let mut quad = Batch::default();
            let (x0, y0, x1, y1) = (r.x, r.y, r.x + r.w, r.y + r.h);
            for (p, uv) in [
                ([x0, y0], [0.0, 0.0]),
                ([x0, y1], [0.0, 1.0]),
                ([x1, y1], [1.0, 1.0]),
                ([x0, y0], [0.0, 0.0]),
                ([x1, y1], [1.0, 1.0]),
                ([x1, y0], [1.0, 0.0]),
            ] {
                quad.vertex(p, [uv[0], uv[1], 0.0]);
            }
            self.heatmaps[place.panel].bind(0);
            self.scissor(place.large.then_some(place.clip), size);
            self.upload_and_draw(&quad)?;
        }
        self.solid.bind();
        self.solid.set_viewport(size.0 as f32, size.1 as f32);
        self.scissor(layout.large().map(|p| p.clip), size);
        self.upload_and_draw(&overlay)?;
        for (clip, batch) in &thumbs {
            self.scissor(Some(*clip), size);
            self.upload_and_draw(batch)?;
        }
        self.scissor(None, size);
        self.upload_and_draw(&rest)?;
        self.ctx.unbind_program_and_vertex_array();
        self.ctx.check(|| "drawing the viewer's frame".into())?;
        Ok(layout)
    }

    /// Limits drawing to `clip` (top-left origin, as the layout) or lifts the limit.
    fn scissor(&self, clip: Option<Rect>, size: (u32, u32)) {
        self.ctx.set_scissor(clip.map(|r| {
            [
                r.x as i32,
                size.1 as i32 - (r.y + r.h) as i32,
                r.w as i32,
                r.h as i32,
            ]
        }));
    }

    fn upload_and_draw(&mut self, batch: &Batch) -> Result<()> {
        if batch.vertices.is_empty() {
            return Ok(());
        }
        self.vertices.upload(&batch.vertices)?;
        self.vertices.draw(0, batch.vertices.len());
        Ok(())
    }

    /// The solid geometry: (clipped to the large view, clipped to each thumbnail, the rest).
    #[allow(clippy::type_complexity)]
    fn overlays(
        &self,
        snapshot: &Snapshot,
        view: &ViewState,
        layout: &FrameLayout,
    ) -> (Batch, Vec<(Rect, Batch)>, Batch) {
        let mut clipped = Batch::default();
        let mut rest = Batch::default();
        header(&mut rest, snapshot, view, layout);
        if let Some(large) = layout.large() {
            large_view(&mut clipped, &mut rest, snapshot, view, layout, large);
        }
        let thumbs = thumbnails(&mut rest, snapshot, layout);
        if view.help {
            help(&mut rest, layout);
        }
        (clipped, thumbs, rest)
    }
}

/// The header: status, readout under the cursor (or the pass's geometry), hint, a rule.
fn header(rest: &mut Batch, snapshot: &Snapshot, view: &ViewState, layout: &FrameLayout) {
    let (w, font, line) = (layout.size.0 as f32, layout.font, layout.line);
    let readout = view
        .cursor
        .and_then(|c| layout.hit(snapshot, c))
        .map(|(p, x, y)| snapshot.panels[p].describe(x, y))
        .unwrap_or_else(|| geometry_line(snapshot));
    for (i, (s, c)) in [
        (snapshot.status(), TEXT),
        (readout, TEXT),
        (view.hint.clone(), DIM_TEXT),
    ]
    .iter()
    .enumerate()
    {
        rest.text(8.0, 6.0 + i as f32 * line, s, font, *c, w - 4.0);
    }
    let rule = Rect {
        x: 0.0,
        y: 3.0 * line + 5.0,
        w,
        h: 1.0,
    };
    rest.rect(rule, DIM_TEXT);
}

/// The large view's label, the pass's outline, the box under the cursor and the legend.
fn large_view(
    clipped: &mut Batch,
    rest: &mut Batch,
    snapshot: &Snapshot,
    view: &ViewState,
    layout: &FrameLayout,
    large: &Place,
) {
    let (font, line) = (layout.font, layout.line);
    let split = (layout.size.0 as f32 * 0.62).floor();
    let panel = &snapshot.panels[large.panel];
    let follow = if view.selection == Selection::Follow {
        " (follows the pass)"
    } else {
        ""
    };
    let label = format!(
        "{} {}x{}: {}{follow}",
        panel.name, panel.width, panel.height, panel.description
    );
    rest.text(large.clip.x, large.clip.y - 10.0, &label, 1.0, TEXT, split);
    if let Some(o) = snapshot.outline.as_ref().filter(|o| o.panel == large.panel) {
        draw_outline(clipped, large, &o.triangles, 2.0 * font);
    }
    if let Some((p, x, y)) = view.cursor.and_then(|c| layout.hit(snapshot, c))
        && p == large.panel
    {
        let a = large.to_pixels([x as f32, y as f32]);
        let b = large.to_pixels([x as f32 + 1.0, y as f32 + 1.0]);
        let r = Rect {
            x: a[0],
            y: a[1],
            w: (b[0] - a[0]).max(3.0),
            h: (b[1] - a[1]).max(3.0),
        };
        clipped.frame(r, 1.0, HIGHLIGHT);
    }
    let area = Rect {
        x: large.clip.x,
        y: large.clip.y + large.clip.h + 6.0,
        w: large.clip.w,
        h: 10.0 * font,
    };
    legend(rest, panel, area, font, line);
}

/// Each thumbnail's label and a frame on the one shown large; the pass's outline on a
/// thumbnail comes back with its clip rectangle.
fn thumbnails(rest: &mut Batch, snapshot: &Snapshot, layout: &FrameLayout) -> Vec<(Rect, Batch)> {
    let w = layout.size.0 as f32;
    let outline = snapshot.outline.as_ref();
    let selected = layout.large().map(|p| p.panel);
    let mut thumbs = Vec::new();
    for place in layout.places.iter().skip(1) {
        let panel = &snapshot.panels[place.panel];
        let written = outline.is_some_and(|o| o.panel == place.panel);
        let colour = if written { TEXT } else { DIM_TEXT };
        rest.text(
            place.clip.x,
            place.clip.y - 10.0,
            &thumbnail_label(panel, written),
            1.0,
            colour,
            w - 2.0,
        );
        let r = place.extent(panel);
        if selected == Some(place.panel) {
            rest.frame(grow(r, 2.0), 1.0, HIGHLIGHT);
        }
        if let Some(o) = outline.filter(|o| o.panel == place.panel) {
            let mut batch = Batch::default();
            draw_outline(&mut batch, place, &o.triangles, 1.0);
            thumbs.push((grow(r, 3.0), batch));
        }
    }
    thumbs
}

/// "NAME #texture [min, max] <- written".
fn thumbnail_label(panel: &Panel, written: bool) -> String {
    let range = panel
        .range
        .map(|r| format!(" [{}, {}]", format_value(r.min), format_value(r.max)))
        .unwrap_or_else(|| " [all NaN]".into());
    let texture = match &panel.kind {
        PanelKind::Matrix { index, .. } => format!(" #{index}"),
        _ => String::new(),
    };
    let arrow = if written { " <- written" } else { "" };
    format!("{}{texture}{range}{arrow}", panel.name)
}

/// `r` grown by `by` pixels on every side.
fn grow(r: Rect, by: f32) -> Rect {
    Rect {
        x: r.x - by,
        y: r.y - by,
        w: r.w + 2.0 * by,
        h: r.h + 2.0 * by,
    }
}

/// The key help ([`HELP`]) in a box in the middle of the frame.
fn help(rest: &mut Batch, layout: &FrameLayout) {
    let (w, h) = (layout.size.0 as f32, layout.size.1 as f32);
    let (font, line) = (layout.font, layout.line);
    let cols = HELP.iter().map(|l| l.len()).max().unwrap_or(0) as f32;
    let bw = (cols * 8.0 * font + 32.0).min(w - 16.0);
    let bh = (HELP.len() as f32 * line + 32.0).min(h - 16.0);
    let r = Rect {
        x: ((w - bw) / 2.0).floor(),
        y: ((h - bh) / 2.0).floor(),
        w: bw,
        h: bh,
    };
    rest.rect(r, [30, 30, 38]);
    rest.frame(r, 2.0, HIGHLIGHT);
    for (i, l) in HELP.iter().enumerate() {
        let y = r.y + 16.0 + i as f32 * line;
        rest.text(r.x + 16.0, y, l, font, TEXT, r.x + r.w - 8.0);
    }
}

/// The edges of the pass's triangles on a panel.
fn draw_outline(batch: &mut Batch, place: &Place, triangles: &[[f32; 2]], thickness: f32) {
    for t in triangles.chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            batch.line(place.to_pixels(a), place.to_pixels(b), thickness, OUTLINE);
        }
    }
}

/// The colour bar of a panel with its min and max, and the two special colours.
fn legend(batch: &mut Batch, panel: &Panel, r: Rect, font: f32, line: f32) {
    let bar_w = (256.0 * font).min(r.w * 0.45).floor();
    let steps = 128;
    for i in 0..steps {
        let x0 = r.x + (i as f32 * bar_w / steps as f32).floor();
        let x1 = r.x + ((i + 1) as f32 * bar_w / steps as f32).floor();
        batch.rect(
            Rect {
                x: x0,
                y: r.y,
                w: x1 - x0,
                h: r.h,
            },
            colormap::viridis(i as f32 / (steps - 1) as f32),
        );
    }
    let max_x = r.x + r.w;
    let ty = r.y + r.h + 3.0;
    match panel.range {
        Some(range) => {
            batch.text(r.x, ty, &format_value(range.min), font, TEXT, max_x);
            let max = format_value(range.max);
            let mx = r.x + bar_w - max.len() as f32 * 8.0 * font;
            batch.text(mx.max(r.x), ty, &max, font, TEXT, max_x);
        }
        None => {
            batch.text(r.x, ty, "no finite value yet", font, TEXT, max_x);
        }
    }
    let mut x = r.x + bar_w + 12.0 * font;
    let sw = r.h;
    batch.rect(
        Rect {
            x,
            y: r.y,
            w: sw,
            h: sw,
        },
        NAN_COLOUR,
    );
    x += sw + 4.0;
    x += batch.text(x, r.y + (r.h - 8.0 * font) / 2.0, "NaN", font, TEXT, max_x) + 10.0 * font;
    let half = (sw / 2.0).floor();
    for (i, (dx, dy)) in [(0.0, 0.0), (half, 0.0), (0.0, half), (half, half)]
        .into_iter()
        .enumerate()
    {
        batch.rect(
            Rect {
                x: x + dx,
                y: r.y + dy,
                w: half,
                h: half,
            },
            UNUSED_COLOURS[(i + i / 2) % 2],
        );
    }
    x += 2.0 * half + 4.0;
    batch.text(
        x,
        r.y + (r.h - 8.0 * font) / 2.0,
        "no entry",
        font,
        TEXT,
        max_x,
    );
    let _ = line;
}

/// A line describing the last pass's draw: viewport and triangle vertices.
fn geometry_line(snapshot: &Snapshot) -> String {
    match (&snapshot.last_pass, &snapshot.outline) {
        (Some(pass), Some(o)) => {
            let tris: Vec<String> = o
                .triangles
                .chunks_exact(3)
                .take(2)
                .map(|t| {
                    t.iter()
                        .map(|p| format!("({},{})", p[0], p[1]))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let more = if o.triangles.len() > 6 { " ..." } else { "" };
            format!(
                "viewport {}x{}, {} triangle(s): {}{more}",
                pass.viewport.0,
                pass.viewport.1,
                o.triangles.len() / 3,
                tris.join(" | ")
            )
        }
        _ => "textures after upload; NaN (magenta) marks texels no pass has written".into(),
    }
}

/// Reads the `size` pixels of `framebuffer` (None: the window's) back as RGBA rows, top row
/// first.
pub fn read_pixels(
    ctx: &Context,
    framebuffer: Option<&Framebuffer>,
    size: (u32, u32),
) -> Result<Vec<u8>> {
    match framebuffer {
        Some(f) => f.bind(),
        None => Framebuffer::bind_default(ctx),
    }
    let (w, h) = (size.0 as usize, size.1 as usize);
    let pixels = ctx.read_pixels_rgba8(w, h)?;
    // GL's row 0 is the bottom one.
    Ok(pixels
        .chunks_exact(w)
        .rev()
        .flatten()
        .flatten()
        .copied()
        .collect())
}
