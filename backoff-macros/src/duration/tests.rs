use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn accepts_every_documented_form() {
    assert_eq!(parse("32s"), Ok(Duration::from_secs(32)));
    assert_eq!(parse("250ms"), Ok(ms(250)));
    assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse("1m 30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse("1.5s"), Ok(ms(1500)));
    assert_eq!(parse(".5s"), Ok(ms(500)));
    assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
    assert_eq!(parse("10us"), Ok(Duration::from_micros(10)));
    assert_eq!(parse("10µs"), Ok(Duration::from_micros(10)));
    assert_eq!(parse("7ns"), Ok(Duration::from_nanos(7)));
    assert_eq!(parse("0s"), Ok(Duration::ZERO));
    assert_eq!(parse(" 1s "), Ok(Duration::from_secs(1)));
}

#[test]
fn rejects_what_it_cannot_read() {
    assert_eq!(parse("5"), Err(DurationError::MissingUnit("5".into())));
    assert_eq!(parse("5sec"), Err(DurationError::UnknownUnit("5".into(), "sec".into())));
    assert_eq!(
        parse("10 sec"),
        Err(DurationError::SpacedUnit("10".into(), "sec".into()))
    );
    assert_eq!(parse("2 min"), Err(DurationError::SpacedUnit("2".into(), "min".into())));
    assert_eq!(
        parse("1m 30s"),
        Ok(Duration::from_secs(90)),
        "spaces between components stay fine"
    );
    assert_eq!(
        parse("10 sec").unwrap_err().to_string(),
        "write the number and its unit together: \"10s\", not \"10 sec\" (units: ns, us (or µs), ms, s, m, h)"
    );
    assert_eq!(
        parse("2min").unwrap_err().to_string(),
        "unknown unit `min` in duration: write \"2m\" (units: ns, us (or µs), ms, s, m, h)"
    );
    assert_eq!(
        parse("3 fortnights").unwrap_err().to_string(),
        "write the number and its unit together, such as \"3s\", and use one of the units ns, us (or µs), ms, s, m, h (not `fortnights`)"
    );
    assert_eq!(parse(""), Err(DurationError::Empty));
    assert_eq!(parse("s"), Err(DurationError::Malformed("s".into())));
    assert_eq!(parse("1..5s"), Err(DurationError::Malformed("1..5".into())));
    assert_eq!(parse("1.5ns"), Err(DurationError::SubNanosecond("1.5ns".into())));
    assert_eq!(parse("99999999999999999999h"), Err(DurationError::TooLarge));
    assert_eq!(parse("-1s"), Err(DurationError::Malformed("-1s".into())));
}

#[test]
fn display_round_trips() {
    for d in [
        ms(1),
        ms(1500),
        Duration::from_secs(90),
        Duration::from_nanos(3_600_000_000_007),
    ] {
        assert_eq!(parse(&display(d)), Ok(d));
    }
}

mod props {
    use super::super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_strings_never_panic(text in any::<String>()) {
            let _ = parse(&text);
        }

        #[test]
        fn unit_like_strings_never_panic(text in "[0-9.µnumsh ]{0,24}") {
            let _ = parse(&text);
        }

        #[test]
        fn formatted_durations_parse_back(secs in 0u64..=u64::MAX, nanos in 0u32..1_000_000_000) {
            let d = Duration::new(secs, nanos);
            prop_assert_eq!(parse(&display(d)), Ok(d));
        }

        #[test]
        fn decimals_are_exact(whole in 0u64..1_000_000, millis in 0u32..1000) {
            let text = format!("{whole}.{millis:03}s");
            prop_assert_eq!(parse(&text), Ok(Duration::new(whole, millis * 1_000_000)));
        }

        #[test]
        fn junk_is_rejected_not_misread(text in "[a-zA-Z!?,;:/_-]{1,12}") {
            prop_assert!(parse(&text).is_err(), "{text:?} parsed");
        }

        #[test]
        fn numbers_without_units_are_rejected(n in any::<u64>()) {
            prop_assert_eq!(parse(&n.to_string()), Err(DurationError::MissingUnit(n.to_string())));
        }
    }
}
