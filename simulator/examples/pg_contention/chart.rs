//! The chart: transactions attempted and completion time against the
//! number of clients, the database's (solid) beside the simulator's
//! prediction (dashed), one colour per jitter mode.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use backoff_runtime::Jitter;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::Cell;
use crate::prediction::MODES;

/// The chart's file name: `pg-contention.svg` on the loopback as it is,
/// `pg-contention-hop-<US>us.svg` with a network delay of `US` microseconds
/// added per message.
pub(crate) fn file_name(added_hop: Duration) -> String {
    if added_hop.is_zero() {
        "pg-contention.svg".to_owned()
    } else {
        format!("pg-contention-hop-{}us.svg", added_hop.as_micros())
    }
}

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// One colour per mode, in [`MODES`] order (the herd charts' colours).
const PALETTE: [RGBColor; 5] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];

/// Writes the chart into `dir`, named after `added_hop`; returns its path.
pub(crate) fn write(dir: &Path, cells: &[Cell], hop_us: f64, added_hop: Duration) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(file_name(added_hop));
    draw(&path, cells, hop_us)?;
    Ok(path)
}

/// Draws the two panels into the SVG file at `path`.
fn draw(path: &Path, cells: &[Cell], hop_us: f64) -> Result<()> {
    let root = SVGBackend::new(path, (1200, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!("PostgreSQL (solid) against the simulator (dashed), one hop = {hop_us:.0} µs; log scales");
    let root = root.titled(&title, ("sans-serif", 18))?;
    let (left, right) = root.split_horizontally(600);
    let bounds = |value: fn(&Cell) -> [f64; 2]| {
        let values = cells.iter().flat_map(value);
        let (low, high) = values.fold((f64::INFINITY, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        (low.max(0.01) * 0.8)..(high * 1.25)
    };
    panel(
        &left,
        "transactions attempted (mean)",
        bounds(|c| [c.measured.attempts, c.predicted.writes]).log_scale(),
        cells,
        |c| [c.measured.attempts, c.predicted.writes],
    )?;
    panel(
        &right,
        "completion time, ms (mean)",
        bounds(|c| [c.measured.completion_ms, c.predicted.completion_ms]).log_scale(),
        cells,
        |c| [c.measured.completion_ms, c.predicted.completion_ms],
    )?;
    root.present()?;
    Ok(())
}

/// One panel: for each mode, the measured values (solid) and the predicted
/// ones (dashed) against the client count.
fn panel<DB, Y>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    y_label: &str,
    y_range: Y,
    cells: &[Cell],
    value: impl Fn(&Cell) -> [f64; 2],
) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let x_max = cells.iter().map(|c| c.clients).max().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max * 1.05, y_range)?;
    chart
        .configure_mesh()
        .x_desc("clients")
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(TRANSPARENT)
        .draw()?;
    for (index, mode) in MODES.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        let series = |which: usize| -> Vec<(f64, f64)> {
            cells
                .iter()
                .filter(|c| c.mode == *mode)
                .map(|c| (c.clients as f64, value(c)[which]))
                .collect()
        };
        let style = colour.stroke_width(2);
        chart
            .draw_series(LineSeries::new(series(0), style))?
            .label(label(*mode))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart.draw_series(DashedLineSeries::new(series(1), 6, 4, colour.stroke_width(1)))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The mode's name as the attribute writes it (`jitter = full`).
pub(crate) fn label(mode: Jitter) -> &'static str {
    match mode {
        Jitter::None => "none",
        Jitter::Additive => "additive",
        Jitter::Equal => "equal",
        Jitter::Full => "full",
        Jitter::Decorrelated => "decorrelated",
        _ => "other",
    }
}
