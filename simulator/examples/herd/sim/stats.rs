//! Summaries of runs: means over the runs of one contention cell, the
//! figures of one outage configuration (amplification, peak load, time to
//! drain) and of one layered-outage rule (calls reaching each layer).

use std::time::Duration;

use super::contention::ContentionRun;
use super::layers::{LAYERS, LayersRun};
use super::outage::{OutageRun, OutageSetup};

/// Offered load within this fraction above the base rate counts as drained.
pub(crate) const DRAIN_TOLERANCE: f64 = 0.05;

/// The means over the runs of one (clients, strategy) cell.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ContentionSummary {
    /// Mean completion time, in milliseconds.
    pub(crate) completion_ms: f64,
    /// Mean write calls per run.
    pub(crate) writes: f64,
    /// Clients that gave up, over all runs (0 when the retries suffice).
    pub(crate) gave_up: u64,
    /// The most retries one client made, over all runs.
    pub(crate) most_retries: u32,
}

impl ContentionSummary {
    /// Summarizes `runs` (all zero for no runs).
    pub(crate) fn of(runs: &[ContentionRun]) -> Self {
        let count = runs.len().max(1) as f64;
        ContentionSummary {
            completion_ms: runs.iter().map(|r| r.completion.as_secs_f64() * 1e3).sum::<f64>() / count,
            writes: runs.iter().map(|r| r.writes as f64).sum::<f64>() / count,
            gave_up: runs.iter().map(|r| r.gave_up).sum(),
            most_retries: runs.iter().map(|r| r.most_retries).max().unwrap_or(0),
        }
    }
}

/// The figures of one outage configuration: means over its runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OutageSummary {
    /// Runs summarized.
    pub(crate) runs: usize,
    /// Requests started (first attempts).
    pub(crate) requests: f64,
    /// Calls that reached the server: first attempts and retries.
    pub(crate) calls: f64,
    /// Calls served (each request is served at most once).
    pub(crate) served: f64,
    /// Requests that failed after using every retry.
    pub(crate) exhausted: f64,
    /// Requests that failed because the budget or the throttle refused a
    /// retry.
    pub(crate) refused: f64,
    /// Served requests over requests started.
    pub(crate) served_share: f64,
    /// Mean calls per second reaching the server while it is down.
    pub(crate) offered_during_outage: f64,
    /// Mean retries per second reaching the server while it is down.
    pub(crate) retries_during_outage: f64,
    /// Total calls divided by first attempts.
    pub(crate) amplification: f64,
    /// The busiest second's offered load, in calls per second.
    pub(crate) peak_offered: f64,
    /// From the server's recovery until the offered load falls to within
    /// [`DRAIN_TOLERANCE`] of the base rate and stays there until new
    /// requests stop; `None` if some run never drains.
    pub(crate) drain: Option<Duration>,
    /// Calls reaching the server in each second.
    pub(crate) offered_per_second: Vec<f64>,
    /// Calls served in each second.
    pub(crate) served_per_second: Vec<f64>,
}

impl OutageSummary {
    /// Summarizes `runs` of `setup` (all zero for no runs).
    pub(crate) fn of(setup: &OutageSetup, runs: &[OutageRun]) -> Self {
        let count = runs.len().max(1) as f64;
        let mean = |f: &dyn Fn(&OutageRun) -> f64| runs.iter().map(f).sum::<f64>() / count;
        let requests = mean(&|r| r.requests as f64);
        let calls = mean(&|r| r.calls as f64);
        let served = mean(&|r| r.served as f64);
        let during_outage = |series: &[u32]| per_second_during_outage(setup, series);
        let drains: Option<Vec<Duration>> = runs.iter().map(|r| drain_time(setup, &r.offered_per_second)).collect();
        OutageSummary {
            runs: runs.len(),
            requests,
            calls,
            served,
            exhausted: mean(&|r| r.exhausted as f64),
            refused: mean(&|r| r.refused as f64),
            served_share: served / requests.max(1.0),
            offered_during_outage: mean(&|r| during_outage(&r.offered_per_second)),
            retries_during_outage: mean(&|r| during_outage(&r.retries_per_second)),
            amplification: calls / requests.max(1.0),
            peak_offered: mean(&|r| f64::from(r.offered_per_second.iter().copied().max().unwrap_or(0))),
            drain: drains.map(|d| d.iter().sum::<Duration>().div_f64(count)),
            offered_per_second: mean_series(runs.iter().map(|r| r.offered_per_second.as_slice()), count),
            served_per_second: mean_series(runs.iter().map(|r| r.served_per_second.as_slice()), count),
        }
    }
}

/// The figures of one layered-outage rule: means over its runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LayersSummary {
    /// Runs summarized.
    pub(crate) runs: usize,
    /// Requests started per run.
    pub(crate) requests: f64,
    /// Calls reaching A, B and C per request.
    pub(crate) calls_per_request: [f64; LAYERS],
    /// The most calls one request made reach C, over all runs.
    pub(crate) most_bottom_calls: u32,
    /// The busiest second's calls at C (mean over the runs).
    pub(crate) bottom_peak: f64,
}

impl LayersSummary {
    /// Summarizes `runs` (all zero for no runs).
    pub(crate) fn of(runs: &[LayersRun]) -> Self {
        let requests: u64 = runs.iter().map(|r| r.requests).sum();
        let per_request = |layer: usize| {
            let calls: u64 = runs.iter().map(|r| r.calls[layer]).sum();
            calls as f64 / requests.max(1) as f64
        };
        let count = runs.len().max(1) as f64;
        LayersSummary {
            runs: runs.len(),
            requests: requests as f64 / count,
            calls_per_request: [per_request(0), per_request(1), per_request(2)],
            most_bottom_calls: runs.iter().map(|r| r.most_bottom_calls).max().unwrap_or(0),
            bottom_peak: runs
                .iter()
                .map(|r| f64::from(r.bottom_per_second.iter().copied().max().unwrap_or(0)))
                .sum::<f64>()
                / count,
        }
    }
}

/// The element-wise mean of `count` series of possibly different lengths
/// (missing values count as zero).
fn mean_series<'a>(series: impl Iterator<Item = &'a [u32]>, count: f64) -> Vec<f64> {
    let mut sum: Vec<f64> = Vec::new();
    for values in series {
        if sum.len() < values.len() {
            sum.resize(values.len(), 0.0);
        }
        for (total, &value) in sum.iter_mut().zip(values) {
            *total += f64::from(value);
        }
    }
    sum.into_iter().map(|total| total / count).collect()
}

/// The mean of `series` (a count per 1 s bucket) over the whole seconds
/// the server is down.
fn per_second_during_outage(setup: &OutageSetup, series: &[u32]) -> f64 {
    let from = usize::try_from(setup.warmup.as_secs()).unwrap_or(usize::MAX);
    let until = usize::try_from(setup.recovery().as_secs()).unwrap_or(usize::MAX);
    let seconds = until.saturating_sub(from).max(1) as f64;
    let total: u32 = series.iter().skip(from).take(until.saturating_sub(from)).sum();
    f64::from(total) / seconds
}

/// The time to drain after recovery, at the resolution of the 1 s buckets
/// of `offered`: the start of the first second (from recovery on) after
/// which every second up to the horizon stays within tolerance of the base
/// rate, minus the recovery time.
fn drain_time(setup: &OutageSetup, offered: &[u32]) -> Option<Duration> {
    let threshold = setup.base_rate() * (1.0 + DRAIN_TOLERANCE);
    let recovery = usize::try_from(setup.recovery().as_secs()).ok()?;
    let horizon = usize::try_from(setup.horizon.as_secs()).ok()?.min(offered.len());
    let calm_from = (recovery..horizon)
        .rev()
        .take_while(|&second| f64::from(offered[second]) <= threshold)
        .last()?;
    let calm_start = Duration::from_secs(calm_from as u64);
    Some(calm_start.saturating_sub(setup.recovery()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_is_the_start_of_the_calm_tail() {
        let setup = OutageSetup {
            warmup: Duration::from_secs(1),
            outage: Duration::from_secs(2),
            horizon: Duration::from_secs(8),
            ..OutageSetup::DEFAULT
        };
        // Recovery at 3 s; base rate 200/s; calm from second 6 on.
        let offered = [200, 900, 900, 900, 300, 250, 210, 200, 50];
        assert_eq!(drain_time(&setup, &offered), Some(Duration::from_secs(3)));
        let never = [200, 900, 900, 900, 300, 200, 210, 400, 50];
        assert_eq!(drain_time(&setup, &never), None);
        let at_once = [200, 900, 900, 200, 200, 200, 200, 200];
        assert_eq!(drain_time(&setup, &at_once), Some(Duration::ZERO));
    }

    #[test]
    fn outage_load_is_the_mean_over_the_down_seconds() {
        let setup = OutageSetup {
            warmup: Duration::from_secs(1),
            outage: Duration::from_secs(2),
            ..OutageSetup::DEFAULT
        };
        assert_eq!(per_second_during_outage(&setup, &[500, 300, 100, 700]), 200.0);
        assert_eq!(
            per_second_during_outage(&setup, &[500, 300]),
            150.0,
            "missing seconds count as 0"
        );
    }

    #[test]
    fn layer_calls_are_per_request_over_all_runs() {
        let runs = [
            LayersRun {
                requests: 2,
                calls: [2, 4, 8],
                most_bottom_calls: 5,
                bottom_per_second: vec![3, 5],
            },
            LayersRun {
                requests: 2,
                calls: [2, 2, 4],
                most_bottom_calls: 2,
                bottom_per_second: vec![1],
            },
        ];
        let summary = LayersSummary::of(&runs);
        assert_eq!(summary.calls_per_request, [1.0, 1.5, 3.0]);
        assert_eq!((summary.requests, summary.most_bottom_calls), (2.0, 5));
        assert_eq!(summary.bottom_peak, 3.0);
    }

    #[test]
    fn series_means_pad_with_zeros() {
        let series: [&[u32]; 2] = [&[2, 4], &[4]];
        assert_eq!(mean_series(series.into_iter(), 2.0), [3.0, 2.0]);
    }
}
