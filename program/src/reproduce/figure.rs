//! A timing figure as one table: each column says once what it is (its CSV header, where its
//! value comes from in a measured point, and its curve's label when it is plotted), so the
//! CSV, the plot and the legend cannot drift apart.

use super::plot::{Series, plot_times};
use super::{Report, VendorRow, threads_used, vendor_label, write_text};
use std::fmt::Write as _;
use std::path::Path;
use symraster::error::{Error, InputError, Result};

/// The legend label of a plotted column.
pub enum Label {
    /// Exactly this text.
    Fixed(&'static str),
    /// A CPU baseline: the text and the number of threads it ran on.
    Cpu(&'static str),
    /// The vendor library's line from `vendor.csv`: the text and the file's own label.
    Vendor(&'static str),
}

impl Label {
    fn text(&self, threads: usize, vendor: &[VendorRow]) -> String {
        match self {
            Label::Fixed(t) => (*t).to_string(),
            Label::Cpu(t) => format!("{t}, {} threads", threads_used(threads)),
            Label::Vendor(t) => vendor_label(vendor, t),
        }
    }
}

/// An integer column that identifies a point (m, n).
pub struct Key<P> {
    /// CSV header.
    pub header: &'static str,
    /// Its value in a point.
    pub value: fn(&P) -> usize,
}

/// A time column in seconds; empty in the CSV and absent from the curve where `None`.
pub struct Column<P> {
    /// CSV header.
    pub header: &'static str,
    /// Its value in a point.
    pub value: fn(&P) -> Option<f64>,
    /// The curve it is drawn as, if any.
    pub curve: Option<Label>,
}

/// A figure's shape: its key columns (the first is the x axis) and its time columns.
pub struct Figure<P: 'static> {
    /// File stem under the output folder, e.g. `fig8_assembly`.
    pub stem: &'static str,
    /// Identifying columns.
    pub keys: &'static [Key<P>],
    /// Value columns, in CSV and legend order.
    pub columns: &'static [Column<P>],
    /// What the columns measure, for the y axis: "time (s)" or "GFLOP/s".
    pub y_label: &'static str,
}

impl<P> Figure<P> {
    /// The CSV header line's cells.
    pub fn headers(&self) -> Vec<&'static str> {
        let keys = self.keys.iter().map(|k| k.header);
        keys.chain(self.columns.iter().map(|c| c.header)).collect()
    }

    /// The CSV text of `points`.
    pub fn csv(&self, points: &[P]) -> String {
        let mut csv = self.headers().join(",") + "\n";
        for p in points {
            let keys = self.keys.iter().map(|k| (k.value)(p).to_string());
            let times = self
                .columns
                .iter()
                .map(|c| (c.value)(p).map_or(String::new(), |t| format!("{t:.6e}")));
            let cells: Vec<String> = keys.chain(times).collect();
            writeln!(csv, "{}", cells.join(",")).expect("writing to a String");
        }
        csv
    }

    /// The plotted curves of `points` that have at least one value.
    pub fn series(&self, points: &[P], threads: usize, vendor: &[VendorRow]) -> Vec<Series> {
        let x = |p: &P| self.keys.first().map_or(0, |k| (k.value)(p)) as f64;
        self.columns
            .iter()
            .filter_map(|c| {
                let label = c.curve.as_ref()?;
                let points: Vec<(f64, f64)> = points
                    .iter()
                    .filter_map(|p| (c.value)(p).map(|t| (x(p), t)))
                    .collect();
                (!points.is_empty()).then(|| Series {
                    name: label.text(threads, vendor),
                    points,
                })
            })
            .collect()
    }

    /// Writes `stem.csv`, `stem.svg` and `stem.png` under `out`.
    pub fn write(
        &self,
        out: &Path,
        title: &str,
        points: &[P],
        threads: usize,
        vendor: &[VendorRow],
        report: &mut Report,
    ) -> Result<()> {
        let stem = out.join(self.stem);
        let csv_path = stem.with_extension("csv");
        write_text(&csv_path, &self.csv(points))?;
        report.files.push(csv_path);
        let series = self.series(points, threads, vendor);
        // Render beside the destination, then rename: a figure is written whole or not at all.
        let partial = out.join(format!(".{}.partial", self.stem));
        plot_times(&partial, title, "m (matrix order)", self.y_label, &series)
            .map_err(|e| Error::from(InputError::Unsupported(e)))?;
        for ext in ["svg", "png"] {
            let (from, to) = (partial.with_extension(ext), stem.with_extension(ext));
            std::fs::rename(&from, &to).map_err(|e| {
                Error::from(InputError::Unsupported(format!(
                    "cannot write {}: {e}",
                    to.display()
                )))
            })?;
            report.files.push(to);
        }
        Ok(())
    }
}
