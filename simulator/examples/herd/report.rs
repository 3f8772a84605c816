//! The figures as plain-text tables (Markdown pipe tables, so they can be
//! pasted into the docs as they are).

use std::time::Duration;

use crate::sim::admission::{AdmissionSetup, AdmissionSummary, Backend, ColdStart};
use crate::sim::burst::{BurstSetup, BurstSummary, Workload};
use crate::sim::contention::ContentionSetup;
use crate::sim::hedging::HedgeSetup;
use crate::sim::layers::{LAYERS, LayersSetup, SERVICES};
use crate::sim::limit::{BudgetSetup, ThrottleSetup};
use crate::sim::outage::OutageSetup;
use crate::sim::stats::{ContentionSummary, DRAIN_TOLERANCE, OutageSummary};
use crate::sim::strategy::Strategy;
use crate::sim::sweep::{ContentionPoint, LayersResult, OutageResult};
use crate::table::Table;

/// The strategies in `points`, in their first-seen order.
fn strategies_of(points: &[ContentionPoint]) -> Vec<Strategy> {
    let mut seen = Vec::new();
    for point in points {
        if !seen.contains(&point.strategy) {
            seen.push(point.strategy);
        }
    }
    seen
}

/// One contention figure against the client count: one row per count, one
/// column per strategy; `points` in the sweep's order (all strategies of one
/// count together).
fn contention_table(points: &[ContentionPoint], cell: impl Fn(&ContentionSummary) -> String) -> String {
    let strategies = strategies_of(points);
    let mut header = vec!["clients".to_owned()];
    header.extend(strategies.iter().map(|s| s.label().to_owned()));
    let mut table = Table::new(header);
    for chunk in points.chunks(strategies.len().max(1)) {
        let mut row = vec![chunk[0].clients.to_string()];
        row.extend(chunk.iter().map(|p| cell(&p.summary)));
        table.push(row);
    }
    table.render()
}

/// The parameters of the contention sweep, as a sentence.
pub(crate) fn contention_intro(setup: &ContentionSetup, runs: usize, seed: u64) -> String {
    let p = &setup.policy;
    format!(
        "Contention (Brooker 2015): each client reads then conditionally writes one row; hops \
         |Normal({:?}, {:?})|; backoff {:?} x {}^n capped at {:?}, up to {} retries; {runs} runs per \
         cell, seed {seed}.",
        setup.hop_mean,
        setup.hop_sd,
        p.get_initial_backoff(),
        p.get_multiplier(),
        p.get_max_backoff(),
        p.get_max_retries(),
    )
}

/// Mean write calls against the client count.
pub(crate) fn write_calls(points: &[ContentionPoint]) -> String {
    contention_table(points, |s| format!("{:.0}", s.writes))
}

/// Mean completion time (ms) against the client count.
pub(crate) fn completion_times(points: &[ContentionPoint]) -> String {
    contention_table(points, |s| format!("{:.0}", s.completion_ms))
}

/// Clients that gave up and the most retries one client needed, per cell.
pub(crate) fn retries_used(points: &[ContentionPoint]) -> String {
    contention_table(points, |s| {
        if s.gave_up == 0 {
            s.most_retries.to_string()
        } else {
            format!("{} ({} gave up)", s.most_retries, s.gave_up)
        }
    })
}

/// The retry limits compared, as a sentence.
fn limits_sentence(budget: &BudgetSetup, throttle: &ThrottleSetup) -> String {
    format!(
        "budget: {:.0}% of calls + {}/s over {:?}; throttle: {} tokens, {} per success, retries while above {}",
        budget.ratio * 100.0,
        budget.min_per_second,
        budget.window,
        throttle.max_tokens,
        throttle.token_ratio,
        f64::from(throttle.max_tokens) / 2.0,
    )
}

/// The parameters of the outage model, as a sentence.
pub(crate) fn outage_intro(
    setup: &OutageSetup,
    budget: &BudgetSetup,
    throttle: &ThrottleSetup,
    runs: usize,
    seed: u64,
) -> String {
    let p = &setup.policy;
    format!(
        "Outage: {} clients, one request each per {:?} ({:.0}/s); healthy for {:?}, down for {:?}, then \
         {:.0} calls/s (burst {:.0}); new requests until {:?}; up to {} retries from {:?} doubling to \
         {:?}; {}; means of {runs} runs, seed {seed}.",
        setup.clients,
        setup.request_interval,
        setup.base_rate(),
        setup.warmup,
        setup.outage,
        setup.capacity,
        setup.burst,
        setup.horizon,
        p.get_max_retries(),
        p.get_initial_backoff(),
        p.get_max_backoff(),
        limits_sentence(budget, throttle),
    )
}

/// The time to drain, or "> rest of the run" when some run never drained.
fn drain_cell(setup: &OutageSetup, summary: &OutageSummary) -> String {
    match summary.drain {
        Some(d) => format!("{:.1} s", d.as_secs_f64()),
        None => format!("> {} s", setup.horizon.saturating_sub(setup.recovery()).as_secs()),
    }
}

/// The headline figures of each outage configuration.
pub(crate) fn outage_summary(setup: &OutageSetup, results: &[OutageResult]) -> String {
    let drained = format!("drained after (within {:.0}%)", DRAIN_TOLERANCE * 100.0);
    let mut table = Table::new(
        [
            "configuration",
            "requests",
            "calls",
            "amplification",
            "peak offered/s",
            "served",
            "gave up: retries out",
            "gave up: limit",
            drained.as_str(),
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for result in results {
        let s = &result.summary;
        let drain = drain_cell(setup, s);
        table.push(vec![
            result.label(),
            format!("{:.0}", s.requests),
            format!("{:.0}", s.calls),
            format!("{:.2}", s.amplification),
            format!("{:.0}", s.peak_offered),
            format!("{:.0}", s.served),
            format!("{:.0}", s.exhausted),
            format!("{:.0}", s.refused),
            drain,
        ]);
    }
    table.render()
}

/// What each retry limit does to the failing server: the load it gets
/// while down, how soon the load is back to normal after, and the requests
/// served.
pub(crate) fn limits_summary(setup: &OutageSetup, results: &[OutageResult]) -> String {
    let drained = format!("recovered after (within {:.0}%)", DRAIN_TOLERANCE * 100.0);
    let mut table = Table::new(
        [
            "configuration",
            "offered/s while down",
            "retries/s while down",
            drained.as_str(),
            "requests served",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for result in results {
        let s = &result.summary;
        table.push(vec![
            result.label(),
            format!("{:.0}", s.offered_during_outage),
            format!("{:.1}", s.retries_during_outage),
            drain_cell(setup, s),
            format!("{:.1}%", s.served_share * 100.0),
        ]);
    }
    table.render()
}

/// The hedged outage: each limit's calls, amplification and load while
/// the server is down.
pub(crate) fn hedging_table(hedge: &HedgeSetup, results: &[(&'static str, OutageSummary)]) -> String {
    let mut table = Table::new(
        [
            "hedging",
            "requests",
            "calls",
            "amplification",
            "offered/s while down",
            "served",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for (label, s) in results {
        table.push(vec![
            format!("{label}, after {:?}, {} attempts", hedge.delay, hedge.max_attempts),
            format!("{:.0}", s.requests),
            format!("{:.0}", s.calls),
            format!("{:.2}", s.amplification),
            format!("{:.0}", s.offered_during_outage),
            format!("{:.0}", s.served),
        ]);
    }
    table.render()
}

/// The parameters of the layered outage, as a sentence.
pub(crate) fn layers_intro(
    setup: &LayersSetup,
    budget: &BudgetSetup,
    throttle: &ThrottleSetup,
    runs: usize,
    seed: u64,
) -> String {
    let p = &setup.policy;
    format!(
        "Layers: {} clients, one request each per {:?} ({:.0}/s) until {:?}; each request goes client -> A -> B \
         -> C and C is down; every layer retries its call up to {} times, {:?} jitter from {:?} doubling to \
         {:?}; hops |Normal({:?}, {:?})|; {} (one per layer); means of {runs} runs, seed {seed}.",
        setup.clients,
        setup.request_interval,
        setup.base_rate(),
        setup.horizon,
        p.get_max_retries(),
        p.get_jitter(),
        p.get_initial_backoff(),
        p.get_max_backoff(),
        setup.hop_mean,
        setup.hop_sd,
        limits_sentence(budget, throttle),
    )
}

/// Calls reaching each layer per request, and the most that reached C.
pub(crate) fn layers_table(results: &[LayersResult]) -> String {
    let mut header = vec!["rule".to_owned()];
    header.extend(SERVICES.iter().map(|s| format!("calls at {s} per request")));
    header.extend(["most at C for one request".to_owned(), "peak calls/s at C".to_owned()]);
    let mut table = Table::new(header);
    for result in results {
        let s = &result.summary;
        let mut row = vec![result.rule.label().to_owned()];
        row.extend((0..LAYERS).map(|layer| format!("{:.2}", s.calls_per_request[layer])));
        row.extend([s.most_bottom_calls.to_string(), format!("{:.0}", s.bottom_peak)]);
        table.push(row);
    }
    table.render()
}

/// Offered/served calls in each second, one column per configuration.
pub(crate) fn outage_series(results: &[OutageResult]) -> String {
    let mut header = vec!["second".to_owned()];
    header.extend(results.iter().map(OutageResult::label));
    let mut table = Table::new(header);
    let seconds = results
        .iter()
        .map(|r| r.summary.offered_per_second.len())
        .max()
        .unwrap_or(0);
    for second in 0..seconds {
        let mut row = vec![second.to_string()];
        row.extend(results.iter().map(|r| {
            let offered = r.summary.offered_per_second.get(second).copied().unwrap_or(0.0);
            let served = r.summary.served_per_second.get(second).copied().unwrap_or(0.0);
            format!("{offered:.0}/{served:.0}")
        }));
        table.push(row);
    }
    table.render()
}

/// A section title.
pub(crate) fn heading(title: &str) -> String {
    format!("## {title}\n")
}

/// The parameters of a pacing model, as a sentence.
pub(crate) fn admission_intro(setup: &AdmissionSetup, runs: usize, seed: u64) -> String {
    let (from, until) = setup.backend.trouble();
    let trouble = match setup.backend {
        Backend::Overloaded { normal, reduced, .. } => {
            format!("serves {normal:.0} calls/s, but {reduced:.0}/s from {from:?} to {until:?}")
        }
        Backend::Outage { normal, after, .. } => {
            format!("serves {normal:.0} calls/s, nothing from {from:?} to {until:?}, then {after:.0}/s")
        }
    };
    format!(
        "Pacing ({}): {:.0} requests/s until {:?}; the backend {trouble}; a call above capacity is rejected \
         as a throttle. Full jitter, {} retries from {:?} up to {:?}. Limits: none; the default budget and \
         gRPC's example throttle on retries; an adaptive rate limiter (waits up to 2 s) and an adaptive \
         throttle (K = 2, over two minutes and over 10 s) on every attempt. {runs} runs, seed {seed}, the same seeds for every limit.",
        setup.backend.label(),
        setup.rate,
        setup.horizon,
        setup.policy.get_max_retries(),
        setup.policy.get_initial_backoff(),
        setup.policy.get_max_backoff(),
    )
}

/// What each limit does to a troubled backend and to its clients.
pub(crate) fn admission_table(results: &[AdmissionSummary]) -> String {
    let mut table = Table::new(
        [
            "limit",
            "backend calls/s in trouble",
            "goodput/s in trouble",
            "requests served",
            "refused on the client",
            "attempts that waited (mean wait)",
            "recovery after",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for s in results {
        table.push(vec![
            s.pacing.label().to_owned(),
            format!("{:.0}", s.load_in_trouble),
            format!("{:.0}", s.goodput_in_trouble),
            format!("{:.1}%", s.served_share * 100.0),
            format!("{:.0}", s.refused_locally),
            format!("{:.0} ({:.0} ms)", s.waits, s.mean_wait.as_secs_f64() * 1000.0),
            s.recovery
                .map_or_else(|| "not in the run".to_owned(), |r| format!("{r:.0} s")),
        ]);
    }
    table.render()
}

/// The cold start: how soon the adaptive rate limiter lets a backend work
/// at 90% of its capacity after a throttle in the first milliseconds.
pub(crate) fn cold_start_table(setup: &AdmissionSetup, cold: &ColdStart, runs: usize) -> String {
    let mut table = Table::new(
        [
            "limit",
            "first throttle (mean)",
            "90% of the backend after (mean, longest)",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    table.push(vec![
        "adaptive rate".to_owned(),
        format!("{:.1} ms", cold.first_throttle.as_secs_f64() * 1000.0),
        cold.to_90_percent.map_or_else(
            || "not in the run".to_owned(),
            |(mean, longest)| format!("{:.1} s, {:.1} s", mean.as_secs_f64(), longest.as_secs_f64()),
        ),
    ]);
    format!(
        "Cold start: {:.0} requests/s from the first instant until {:?}; the backend serves {:.0}/s with room for {:.0} at once; {runs} runs. AWS's SDKs measure a rate of 0 before their first 0.5 s interval closes and reach 90% after about 10 s here (10.2 s with this crate's limiter before it measured the early rate).\n\n{}",
        setup.rate,
        setup.horizon,
        setup.backend.capacity(Duration::ZERO),
        setup.burst,
        table.render()
    )
}

/// The closed loop's burst: what the limiter admits and the backend sees
/// over the last 2 s, with the limiter and with plain backoff.
pub(crate) fn burst_table(setup: &BurstSetup, results: &[BurstSummary], seed: u64) -> String {
    let mut table = Table::new(
        [
            "limit",
            "admitted/s, last 2 s (of capacity; lowest, highest)",
            "backend load, last 2 s (x capacity; highest)",
            "served/s, last 2 s (of capacity)",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for s in results {
        table.push(vec![
            s.pacer.label().to_owned(),
            format!(
                "{:.0}/s: {:.1}% ({:.1}%, {:.1}%)",
                s.admitted.0 * setup.capacity,
                s.admitted.0 * 100.0,
                s.admitted.1 * 100.0,
                s.admitted.2 * 100.0
            ),
            format!("{:.2}x ({:.2}x)", s.load.0, s.load.2),
            format!("{:.1}%", s.served * 100.0),
        ]);
    }
    let (run, pause) = match setup.workload {
        Workload::Loop { run, after_refusal } => (run, after_refusal),
        Workload::Spike => (Duration::ZERO, Duration::ZERO),
    };
    format!(
        "Goodput under a burst: {} tasks, all starting at once, each calls in a loop for {run:?}: \
         send, wait for the answer, send again; a call the limiter refuses pauses its task {pause:?}. The \
         backend serves {:.0} calls/s (a token bucket holding {:.0}, full at the start) and answers \"slow \
         down\" above it; {:?} each way, a fixed {:?} round trip. Retries: {} from {:?}, additive jitter. \
         The adaptive rate limiter with its defaults, cutting at most once per round trip. With a cut per \
         throttled answer (AWS's, 2ffc884; not in the runtime, so not simulated) BENCHMARKS.md records 5.5 \
         calls/s admitted over the last 2 s on tokio's paused clock (1.8% of capacity) and 5/s over the \
         loopback (1.7%, before the change). {} runs, seed {seed}.\n\n{}",
        setup.tasks,
        setup.capacity,
        setup.burst,
        setup.hop,
        setup.hop * 2,
        setup.policy.get_max_retries(),
        setup.policy.get_initial_backoff(),
        results.first().map_or(0, |s| s.runs),
        table.render()
    )
}

/// palantir's spike: whether every request succeeds and the attempts the
/// backend sees, with the limiter and with plain backoff.
pub(crate) fn spike_table(setup: &BurstSetup, results: &[BurstSummary], seed: u64) -> String {
    let mut table = Table::new(
        [
            "limit",
            "requests succeeded (fewest)",
            "attempts the backend saw (lowest, highest)",
            "per request",
            "at most 2 per request",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    let bound = 2 * setup.tasks as u64;
    for s in results {
        table.push(vec![
            s.pacer.label().to_owned(),
            format!("{} of {}", s.succeeded.0, s.succeeded.1),
            format!("{:.0} ({}, {})", s.attempts.0, s.attempts.1, s.attempts.2),
            format!("{:.2}", s.attempts.0 / setup.tasks as f64),
            if s.attempts.2 <= bound { "yes" } else { "no" }.to_owned(),
        ]);
    }
    format!(
        "palantir's spike (dialogue #635): {} requests at once, one call each, {} retries from {:?} (additive \
         jitter); the same backend ({:.0} calls/s, holding {:.0}, \"slow down\" above it), {:?} round trip. \
         With a cut per throttled answer BENCHMARKS.md records 305 of 1,600 succeeded and 1,604 attempts \
         on tokio's paused clock (the rest refused: the rate at its floor). {} runs, seed {seed}.\n\n{}",
        setup.tasks,
        setup.policy.get_max_retries(),
        setup.policy.get_initial_backoff(),
        setup.capacity,
        setup.burst,
        setup.hop * 2,
        results.first().map_or(0, |s| s.runs),
        table.render()
    )
}
