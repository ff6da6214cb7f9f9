//! The heatmap colours: viridis (perceptually uniform) for values, distinct colours for NaN
//! (never written) and for texels that hold no matrix entry.

use std::sync::OnceLock;

/// Number of colour levels: values are quantized to 256 steps of viridis.
pub const LEVELS: usize = 256;

/// A texel that should hold an entry but is NaN or infinite: never written (the textures are
/// poisoned with NaN before the first pass) or the result of an invalid operation.
pub const NAN_COLOUR: [u8; 3] = [255, 0, 255];

/// The two shades of the checkerboard drawn over texels that hold no matrix entry (the strict
/// upper triangle in full format, any spare texel in packed format) and were never written.
pub const UNUSED_COLOURS: [[u8; 3]; 2] = [[40, 40, 46], [58, 58, 66]];

/// Viridis at `t` in [0, 1] (clamped), quantized to [`LEVELS`] levels.
pub fn viridis(t: f32) -> [u8; 3] {
    static LUT: OnceLock<Vec<[u8; 3]>> = OnceLock::new();
    let lut = LUT.get_or_init(|| {
        (0..LEVELS)
            .map(|i| {
                let c = colorous::VIRIDIS.eval_rational(i, LEVELS);
                [c.r, c.g, c.b]
            })
            .collect()
    });
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    lut[(t * (LEVELS - 1) as f32).round() as usize]
}

/// The value range a heatmap maps onto the colormap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Value drawn as the darkest colour.
    pub min: f32,
    /// Value drawn as the brightest colour.
    pub max: f32,
}

impl Range {
    /// The range of the finite values, or `None` when there is none.
    pub fn of(values: impl IntoIterator<Item = f32>) -> Option<Self> {
        values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(None, |r: Option<Range>, v| {
                Some(match r {
                    None => Range { min: v, max: v },
                    Some(r) => Range {
                        min: r.min.min(v),
                        max: r.max.max(v),
                    },
                })
            })
    }

    /// Where `v` lies in the range, 0 to 1 (0.5 when the range is a single value).
    pub fn normalize(&self, v: f32) -> f32 {
        let span = self.max - self.min;
        if span > 0.0 {
            ((v - self.min) / span).clamp(0.0, 1.0)
        } else {
            0.5
        }
    }

    /// The colour of a finite value.
    pub fn colour(&self, v: f32) -> [u8; 3] {
        viridis(self.normalize(v))
    }
}

/// The colour of texel (x, y) holding `v`; `holds_entry` says whether the layout stores a
/// matrix entry there.
pub fn texel_colour(range: Range, v: f32, holds_entry: bool, x: usize, y: usize) -> [u8; 3] {
    match (v.is_finite(), holds_entry) {
        (true, _) => range.colour(v),
        (false, true) => NAN_COLOUR,
        (false, false) => UNUSED_COLOURS[(x + y) % 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_dark_purple_to_yellow() {
        let lo = viridis(0.0);
        let hi = viridis(1.0);
        assert!(lo[2] > lo[1] && lo[0] < 100, "{lo:?}");
        assert!(hi[0] > 200 && hi[1] > 200 && hi[2] < 100, "{hi:?}");
        // Perceptual: luminance rises monotonically.
        let lum = |c: [u8; 3]| 0.2126 * c[0] as f32 + 0.7152 * c[1] as f32 + 0.0722 * c[2] as f32;
        for i in 1..LEVELS {
            let (a, b) = (i - 1, i);
            let t = |k: usize| k as f32 / (LEVELS - 1) as f32;
            assert!(lum(viridis(t(b))) >= lum(viridis(t(a))) - 1.0);
        }
    }

    #[test]
    fn special_colours_are_not_on_the_colormap() {
        for i in 0..LEVELS {
            let c = viridis(i as f32 / (LEVELS - 1) as f32);
            assert_ne!(c, NAN_COLOUR);
            assert!(!UNUSED_COLOURS.contains(&c));
        }
        let r = Range {
            min: -1.0,
            max: 3.0,
        };
        assert_eq!(texel_colour(r, f32::NAN, true, 0, 0), NAN_COLOUR);
        assert_eq!(texel_colour(r, f32::NAN, false, 1, 0), UNUSED_COLOURS[1]);
        assert_eq!(texel_colour(r, 3.0, false, 1, 0), viridis(1.0));
        assert_eq!(r.normalize(1.0), 0.5);
    }
}
