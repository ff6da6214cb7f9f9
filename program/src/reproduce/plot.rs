//! Log-scale timing plots (SVG and PNG) with a bundled font, so rendering never depends on the
//! fonts a server has.

use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

/// DejaVu Sans (free licence, see assets/fonts/DejaVu-LICENSE.txt), registered as sans-serif.
const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; failure would be a packaging bug.
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("bundled font is not a valid TTF"));
    });
}

/// One line of a plot: its name and its (m, seconds) points; NaN times are left out.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` with a log-scale y axis (`y_label`) into `stem.svg` and `stem.png`.
pub fn plot_times(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    register_font();
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    draw(
        SVGBackend::new(&svg, (960, 640)).into_drawing_area(),
        title,
        x_label,
        y_label,
        series,
    )?;
    draw(
        BitMapBackend::new(&png, (960, 640)).into_drawing_area(),
        title,
        x_label,
        y_label,
        series,
    )
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: &dyn std::fmt::Display| format!("plotting {title}: {e}");
    let points = || {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| p.1.is_finite() && p.1 > 0.0)
    };
    let (x_max, mut y_min, mut y_max) = points()
        .fold((1.0f64, f64::MAX, f64::MIN), |(x, lo, hi), p| {
            (x.max(p.0), lo.min(p.1), hi.max(p.1))
        });
    if y_min > y_max {
        (y_min, y_max) = (1e-3, 1.0);
    }
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..x_max * 1.05, (y_min / 2.0..y_max * 30.0).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(format!("{y_label} (log scale)"))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.1.is_finite() && p.1 > 0.0)
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
