//! The shared grammar's tests.
//!
//! Durations, "did you mean", the quote of a
//! long value. The macro crate compiles the same file and is tested here.

use super::grammar::*;
use core::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn accepts_every_documented_form() {
    assert_eq!(parse_duration("32s"), Ok(Duration::from_secs(32)));
    assert_eq!(parse_duration("250ms"), Ok(ms(250)));
    assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("1.5s"), Ok(ms(1500)));
    assert_eq!(parse_duration(".5s"), Ok(ms(500)));
    assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
    assert_eq!(parse_duration("10us"), Ok(Duration::from_micros(10)));
    assert_eq!(parse_duration("10µs"), Ok(Duration::from_micros(10)));
    assert_eq!(parse_duration("7ns"), Ok(Duration::from_nanos(7)));
    assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    assert_eq!(parse_duration(" 1s "), Ok(Duration::from_secs(1)));
}

#[test]
fn rejects_what_it_cannot_read() {
    assert_eq!(parse_duration("5"), Err(DurationError::MissingUnit("5".into())));
    assert_eq!(
        parse_duration("5sec"),
        Err(DurationError::UnknownUnit("5".into(), "sec".into()))
    );
    assert_eq!(
        parse_duration("10 sec"),
        Err(DurationError::SpacedUnit("10".into(), "sec".into()))
    );
    assert_eq!(
        parse_duration("2 min"),
        Err(DurationError::SpacedUnit("2".into(), "min".into()))
    );
    assert_eq!(
        parse_duration("1m 30s"),
        Ok(Duration::from_secs(90)),
        "spaces between components stay fine"
    );
    assert_eq!(
        parse_duration("10 sec").unwrap_err().to_string(),
        "write the number and its unit together: \"10s\", not \"10 sec\" (units: ns, us (or µs), ms, s, m, h)"
    );
    assert_eq!(
        parse_duration("2min").unwrap_err().to_string(),
        "unknown unit `min` in duration: write \"2m\" (units: ns, us (or µs), ms, s, m, h)"
    );
    assert_eq!(
        parse_duration("3 fortnights").unwrap_err().to_string(),
        "write the number and its unit together, such as \"3s\", and use one of the units ns, us (or µs), ms, s, m, h (not `fortnights`)"
    );
    assert_eq!(parse_duration(""), Err(DurationError::Empty));
    assert_eq!(parse_duration("s"), Err(DurationError::Malformed("s".into())));
    assert_eq!(parse_duration("1..5s"), Err(DurationError::Malformed("1..5".into())));
    assert_eq!(
        parse_duration("1.5ns"),
        Err(DurationError::SubNanosecond("1.5ns".into()))
    );
    assert_eq!(parse_duration("99999999999999999999h"), Err(DurationError::TooLarge));
    assert_eq!(parse_duration("-1s"), Err(DurationError::Malformed("-1s".into())));
}

#[test]
fn display_round_trips() {
    for d in [
        ms(1),
        ms(1500),
        Duration::from_secs(90),
        Duration::from_nanos(3_600_000_000_007),
    ] {
        assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_strings_never_panic(text in any::<String>()) {
            let _ = parse_duration(&text);
        }

        #[test]
        fn unit_like_strings_never_panic(text in "[0-9.µnumsh ]{0,24}") {
            let _ = parse_duration(&text);
        }

        #[test]
        fn formatted_durations_parse_back(secs in 0u64..=u64::MAX, nanos in 0u32..1_000_000_000) {
            let d = Duration::new(secs, nanos);
            prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }

        #[test]
        fn decimals_are_exact(whole in 0u64..1_000_000, millis in 0u32..1000) {
            let text = format!("{whole}.{millis:03}s");
            prop_assert_eq!(parse_duration(&text), Ok(Duration::new(whole, millis * 1_000_000)));
        }

        #[test]
        fn junk_is_rejected_not_misread(text in "[a-zA-Z!?,;:/_-]{1,12}") {
            prop_assert!(parse_duration(&text).is_err(), "{text:?} parsed");
        }

        #[test]
        fn numbers_without_units_are_rejected(n in any::<u64>()) {
            prop_assert_eq!(parse_duration(&n.to_string()), Err(DurationError::MissingUnit(n.to_string())));
        }
    }
}

#[test]
fn suggests_close_keys_only() {
    let keys = ["max_backoff", "max_retries", "jitter"];
    assert_eq!(nearest("max_backof", keys), Some("max_backoff"));
    assert_eq!(nearest("max_retry", keys), Some("max_retries"));
    assert_eq!(nearest("jiter", keys), Some("jitter"));
    assert_eq!(nearest("timeout", keys), None);
}
