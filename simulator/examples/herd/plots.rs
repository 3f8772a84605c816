//! The charts, drawn with plotters' SVG backend: write calls and completion
//! time against the number of clients, offered and served load over time in
//! the outage (every configuration, and the three retry limits side by
//! side), and the calls reaching each layer in the layered outage.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::sim::admission::{AdmissionSetup, AdmissionSummary, Pacing};
use crate::sim::layers::{LAYERS, SERVICES};
use crate::sim::limit::RetryLimit;
use crate::sim::outage::OutageSetup;
use crate::sim::strategy::Strategy;
use crate::sim::sweep::{ContentionPoint, LayersResult, OutageResult};

/// The file name of the write-calls chart.
pub(crate) const WRITE_CALLS: &str = "herd-write-calls.svg";
/// The file name of the completion-time chart.
pub(crate) const COMPLETION_TIME: &str = "herd-completion-time.svg";
/// The file name of the outage chart.
pub(crate) const OUTAGE_LOAD: &str = "herd-outage-load.svg";
/// The file name of the retry-limits chart.
pub(crate) const LIMITS_LOAD: &str = "herd-limits-load.svg";
/// The file name of the pacing chart.
pub(crate) const PACING_LOAD: &str = "herd-pacing-load.svg";
/// The file name of the layered-outage chart.
pub(crate) const LAYER_CALLS: &str = "herd-layer-calls.svg";

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The line colours, in the order of [`Strategy::ALL`].
const PALETTE: [RGBColor; 7] = [
    RGBColor(120, 120, 120),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];

/// One line colour per strategy, the same in every chart.
fn colour(strategy: Strategy) -> RGBColor {
    let index = Strategy::ALL.iter().position(|s| *s == strategy).unwrap_or(0);
    PALETTE[index % PALETTE.len()]
}

/// The three retry limits' colours, in the order of [`RetryLimit::ALL`].
const LIMIT_PALETTE: [RGBColor; 3] = [RGBColor(214, 39, 40), RGBColor(255, 127, 14), RGBColor(31, 119, 180)];

/// What the charts show.
pub(crate) struct Figures<'a> {
    /// The contention sweep.
    pub(crate) points: &'a [ContentionPoint],
    /// The outage model's parameters.
    pub(crate) outage: &'a OutageSetup,
    /// Every outage configuration.
    pub(crate) outages: &'a [OutageResult],
    /// The strategy whose retry limits are drawn side by side.
    pub(crate) limits_strategy: Strategy,
    /// Every layered-outage rule.
    pub(crate) layers: &'a [LayersResult],
    /// The overload model and each limit's figures.
    pub(crate) pacing: (&'a AdmissionSetup, &'a [AdmissionSummary]),
}

/// Writes the five charts into `dir`; returns their paths.
pub(crate) fn write_all(dir: &Path, figures: &Figures<'_>) -> Result<Vec<PathBuf>> {
    let Figures {
        points,
        outage: setup,
        outages,
        limits_strategy,
        layers,
        pacing,
    } = *figures;
    std::fs::create_dir_all(dir)?;
    let max = |value: fn(&ContentionPoint) -> f64| points.iter().map(value).fold(1.0, f64::max);
    let min = |value: fn(&ContentionPoint) -> f64| points.iter().map(value).fold(f64::INFINITY, f64::min);

    let calls = dir.join(WRITE_CALLS);
    let writes = |p: &ContentionPoint| p.summary.writes;
    against_clients(
        &calls,
        "Write calls until every client has written",
        "write calls (mean)",
        0.0..max(writes) * 1.05,
        SeriesLabelPosition::UpperLeft,
        points,
        writes,
    )?;

    let time = dir.join(COMPLETION_TIME);
    let millis = |p: &ContentionPoint| p.summary.completion_ms;
    against_clients(
        &time,
        "Time until every client has written (log scale)",
        "completion time, ms (mean)",
        (min(millis).max(1.0) * 0.8..max(millis) * 1.25).log_scale(),
        SeriesLabelPosition::LowerRight,
        points,
        millis,
    )?;

    let load = dir.join(OUTAGE_LOAD);
    outage_grid(&load, setup, outages)?;
    let limits = dir.join(LIMITS_LOAD);
    limits_chart(&limits, setup, outages, limits_strategy)?;
    let layer_calls = dir.join(LAYER_CALLS);
    layers_chart(&layer_calls, layers)?;
    let paced = dir.join(PACING_LOAD);
    pacing_chart(&paced, pacing.0, pacing.1)?;
    Ok(vec![calls, time, load, limits, layer_calls, paced])
}

/// One line per strategy of `value` against the client count, on a y axis
/// spanning `y_range` (linear or logarithmic), the legend at `legend`.
fn against_clients<Y>(
    path: &Path,
    title: &str,
    y_label: &str,
    y_range: Y,
    legend: SeriesLabelPosition,
    points: &[ContentionPoint],
    value: impl Fn(&ContentionPoint) -> f64,
) -> Result<()>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let x_max = points.iter().map(|p| p.clients).max().unwrap_or(1) as f64;
    let root = SVGBackend::new(path, (760, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max * 1.02, y_range)?;
    chart
        .configure_mesh()
        .x_desc("clients")
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(TRANSPARENT)
        .draw()?;
    for strategy in Strategy::ALL {
        let series: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.strategy == strategy)
            .map(|p| (p.clients as f64, value(p)))
            .collect();
        if series.is_empty() {
            continue;
        }
        let style = colour(strategy).stroke_width(2);
        chart
            .draw_series(LineSeries::new(series, style))?
            .label(strategy.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A grid of panels, one row per strategy, one column per retry limit:
/// offered (red) and served (blue) calls per second, the outage shaded.
/// Every panel has the same scales.
fn outage_grid(path: &Path, setup: &OutageSetup, results: &[OutageResult]) -> Result<()> {
    let columns = results
        .iter()
        .take_while(|r| r.strategy == results[0].strategy)
        .count()
        .max(1);
    let rows = results.len().div_ceil(columns).max(1);
    let height = u32::try_from(rows * 210 + 40).unwrap_or(u32::MAX);
    let width = u32::try_from(columns * 420).unwrap_or(u32::MAX);
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Offered (red) and served (blue) calls per second against time (s); server down in the grey band",
        ("sans-serif", 18),
    )?;
    let x_max = results
        .iter()
        .map(|r| r.summary.offered_per_second.len())
        .max()
        .unwrap_or(1) as f64;
    let y_max = results
        .iter()
        .flat_map(|r| r.summary.offered_per_second.iter().copied())
        .fold(1.0, f64::max);
    let down = (setup.warmup.as_secs_f64(), setup.recovery().as_secs_f64());
    for (panel, result) in root.split_evenly((rows, columns)).iter().zip(results) {
        let caption = format!("{} (amplification {:.2})", result.label(), result.summary.amplification);
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 14))
            .margin(6)
            .x_label_area_size(24)
            .y_label_area_size(44)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max * 1.05)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels(8)
            .y_labels(5)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(down.0, 0.0), (down.1, y_max * 1.05)],
            RGBColor(225, 225, 225).filled(),
        )))?;
        for (series, colour) in [
            (&result.summary.offered_per_second, RGBColor(214, 39, 40)),
            (&result.summary.served_per_second, RGBColor(31, 119, 180)),
        ] {
            let line = series.iter().enumerate().map(|(s, &n)| (s as f64 + 0.5, n));
            chart.draw_series(LineSeries::new(line, colour.stroke_width(2)))?;
        }
    }
    root.present()?;
    Ok(())
}

/// Offered calls per second at the failing server over time for one
/// strategy, one line per retry limit, the outage shaded.
fn limits_chart(path: &Path, setup: &OutageSetup, results: &[OutageResult], strategy: Strategy) -> Result<()> {
    let chosen: Vec<&OutageResult> = results.iter().filter(|r| r.strategy == strategy).collect();
    let x_max = chosen
        .iter()
        .map(|r| r.summary.offered_per_second.len())
        .max()
        .unwrap_or(1) as f64;
    let y_max = chosen
        .iter()
        .flat_map(|r| r.summary.offered_per_second.iter().copied())
        .fold(1.0, f64::max);
    let root = SVGBackend::new(path, (760, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Calls per second at the server, {} jitter (down in the grey band)",
        strategy.label()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("time, s")
        .y_desc("offered calls/s (mean)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(TRANSPARENT)
        .draw()?;
    let down = (setup.warmup.as_secs_f64(), setup.recovery().as_secs_f64());
    chart.draw_series(std::iter::once(Rectangle::new(
        [(down.0, 0.0), (down.1, y_max * 1.05)],
        RGBColor(225, 225, 225).filled(),
    )))?;
    for result in chosen {
        let index = RetryLimit::ALL.iter().position(|l| *l == result.limit).unwrap_or(0);
        let style = LIMIT_PALETTE[index % LIMIT_PALETTE.len()].stroke_width(2);
        let line = result
            .summary
            .offered_per_second
            .iter()
            .enumerate()
            .map(|(s, &n)| (s as f64 + 0.5, n));
        chart
            .draw_series(LineSeries::new(line, style))?
            .label(result.limit.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Calls reaching A, B and C per request, one group of bars per rule, on a
/// logarithmic scale.
fn layers_chart(path: &Path, results: &[LayersResult]) -> Result<()> {
    let groups = results.len().max(1);
    let y_max = results
        .iter()
        .flat_map(|r| r.summary.calls_per_request)
        .fold(1.0, f64::max);
    let root = SVGBackend::new(path, (860, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Calls reaching each service per request while C is down (log scale)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..groups as f64, (0.8..y_max * 1.6).log_scale())?;
    let labels: Vec<&str> = results.iter().map(|r| r.rule.label()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups * 2 + 1)
        .x_label_formatter(&|x| {
            let group = x.floor();
            if (x - group - 0.5).abs() < 1e-6 {
                labels.get(group as usize).map_or_else(String::new, |l| (*l).to_owned())
            } else {
                String::new()
            }
        })
        .y_desc("calls per request (mean)")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(TRANSPARENT)
        .draw()?;
    let bar = 0.8 / LAYERS as f64;
    for layer in 0..LAYERS {
        let colour = LIMIT_PALETTE[(LAYERS - 1 - layer) % LIMIT_PALETTE.len()];
        let left = |group: usize| group as f64 + 0.1 + bar * layer as f64;
        chart
            .draw_series(results.iter().enumerate().map(|(group, result)| {
                let x = left(group);
                Rectangle::new(
                    [(x, 0.8), (x + bar * 0.9, result.summary.calls_per_request[layer])],
                    colour.filled(),
                )
            }))?
            .label(format!("calls at {}", SERVICES[layer]))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
        chart.draw_series(results.iter().enumerate().map(|(group, result)| {
            let value = result.summary.calls_per_request[layer];
            Text::new(
                format!("{value:.1}"),
                (left(group), value * 1.12),
                ("sans-serif", 12).into_font(),
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The limits' colours, in the order of [`Pacing::ALL`].
const PACING_PALETTE: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Calls per second at an overloaded backend over time, one line per
/// limit, the overload shaded.
fn pacing_chart(path: &Path, setup: &AdmissionSetup, results: &[AdmissionSummary]) -> Result<()> {
    let x_max = results.iter().map(|r| r.offered_per_second.len()).max().unwrap_or(1) as f64;
    let y_max = results
        .iter()
        .flat_map(|r| r.offered_per_second.iter().copied())
        .fold(1.0, f64::max);
    let root = SVGBackend::new(path, (760, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Calls per second at the backend ({} in the grey band)",
                setup.backend.label()
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("time, s")
        .y_desc("calls/s at the backend (mean)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(TRANSPARENT)
        .draw()?;
    let (from, until) = setup.backend.trouble();
    chart.draw_series(std::iter::once(Rectangle::new(
        [(from.as_secs_f64(), 0.0), (until.as_secs_f64(), y_max * 1.05)],
        RGBColor(225, 225, 225).filled(),
    )))?;
    for result in results {
        let index = Pacing::ALL.iter().position(|p| *p == result.pacing).unwrap_or(0);
        let style = PACING_PALETTE[index % PACING_PALETTE.len()].stroke_width(2);
        let line = result
            .offered_per_second
            .iter()
            .enumerate()
            .map(|(s, &n)| (s as f64 + 0.5, n));
        chart
            .draw_series(LineSeries::new(line, style))?
            .label(result.pacing.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
