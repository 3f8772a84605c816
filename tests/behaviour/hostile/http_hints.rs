//! An HTTP server's hints: `Retry-After` (seconds and HTTP-date),
//! `retry-after-ms`, `x-ms-retry-after-ms`, the IETF `RateLimit` field and
//! the older drafts' `RateLimit-Remaining` and `RateLimit-Reset`. Never a
//! panic, whatever the value and whatever the clock says; a readable
//! millisecond header is read exactly.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backoff_runtime::http_errors::{parse_retry_after_at, retry_after_header};
use http::{HeaderMap, HeaderName, HeaderValue};

use super::corpus;
use super::generate::{Bound, OnPanic, Rng};

const NAMES: &[&str] = &[
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "ratelimit",
    "ratelimit-remaining",
    "ratelimit-reset",
];

fn http_date(rng: &mut Rng) -> String {
    let day = *rng.pick(&["Mon", "Tue", "Wed", "Sun", "Xyz", ""]);
    let month = *rng.pick(&["Jan", "Feb", "Oct", "Dec", "Foo"]);
    let year = *rng.pick(&["1970", "2015", "9999", "0000", "1969", "10000", "99999999999"]);
    let date = format!(
        "{day}, {:02} {month} {year} {:02}:{:02}:{:02} GMT",
        rng.below(40),
        rng.below(30),
        rng.below(70),
        rng.below(70)
    );
    match rng.below(4) {
        0 => "Sunday, 06-Nov-94 08:49:37 GMT".to_owned(),
        1 => "Sun Nov  6 08:49:37 1994".to_owned(),
        _ => date,
    }
}

fn rate_limit(rng: &mut Rng) -> String {
    let policies: Vec<String> = (0..=rng.below(3))
        .map(|_| {
            let mut policy = (*rng.pick(&["\"default\"", "\"burst\"", "x", "", ";"])).to_owned();
            for _ in 0..rng.below(4) {
                let key = *rng.pick(&["r", "t", "q", "w", " r", "r ", ""]);
                let value = rng.number();
                policy.push_str(&format!(";{key}={value}"));
            }
            policy
        })
        .collect();
    policies.join(*rng.pick(&[",", ", ", ";", ""]))
}

fn value(rng: &mut Rng, name: &str) -> String {
    match (rng.below(5), name) {
        (0, _) => rng.text(b"0123456789 ,;=-:\"abcGMT\t", 40),
        (1 | 2, "retry-after") => http_date(rng),
        (1 | 2, "ratelimit") => rate_limit(rng),
        _ => rng.number(),
    }
}

/// A map of some hint headers, each with one or two values.
fn headers(rng: &mut Rng) -> Vec<(String, String)> {
    (0..=rng.below(4))
        .map(|_| {
            let name = *rng.pick(NAMES);
            (name.to_owned(), value(rng, name))
        })
        .collect()
}

fn now(rng: &mut Rng) -> SystemTime {
    match rng.below(4) {
        0 => UNIX_EPOCH,
        1 => UNIX_EPOCH + Duration::from_secs(rng.below(1 << 40)),
        2 => UNIX_EPOCH
            .checked_sub(Duration::from_secs(rng.below(1 << 40)))
            .unwrap_or(UNIX_EPOCH),
        _ => SystemTime::now(),
    }
}

/// One set of headers: never a panic; a millisecond header of digits is
/// the hint, exactly (it is read first).
pub fn check(pairs: &[(String, String)], now: SystemTime) {
    let _told = OnPanic(format!("{pairs:?}"));
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) else {
            continue;
        };
        let _ = parse_retry_after_at(value.to_str().unwrap_or_default(), now);
        map.append(name, value);
    }
    let hint = retry_after_header(&map);
    let millis = map
        .get("retry-after-ms")
        .and_then(|value| value.to_str().ok())
        .map(str::trim);
    if let Some(millis) = millis.filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())) {
        let expected = millis
            .parse::<u64>()
            .map_or(Duration::from_millis(u64::MAX), Duration::from_millis);
        assert_eq!(hint, Some(expected), "{pairs:?}");
    }
}

#[test]
fn the_corpus_is_read_without_a_panic() {
    for (name, text) in corpus::of("http_hints") {
        let _told = OnPanic(name);
        check(&corpus::header_lines(&text), SystemTime::now());
    }
}

#[test]
fn generated_hints_are_read_without_a_panic() {
    let mut bound = Bound::new(100_000);
    while let Some(mut rng) = bound.input() {
        let pairs = headers(&mut rng);
        let now = now(&mut rng);
        let _told = OnPanic(bound.input_seed());
        check(&pairs, now);
    }
    bound.report("HTTP hints");
}
