use super::*;

fn parsed(text: &str) -> Result<Duration, String> {
    match duration(&Value::String(text.to_owned()), "d") {
        Ok(Signed::Positive(duration)) => Ok(duration),
        Ok(Signed::Negative(text)) => Err(format!("negative {text}")),
        Err(error) => Err(error.message().to_owned()),
    }
}

#[test]
fn durations_are_protobuf_s_json() {
    assert_eq!(parsed("0.1s"), Ok(Duration::from_millis(100)));
    assert_eq!(parsed("5s"), Ok(Duration::from_secs(5)));
    assert_eq!(parsed("1.000000001s"), Ok(Duration::new(1, 1)));
    assert_eq!(parsed("0s"), Ok(Duration::ZERO));
    assert_eq!(parsed("-0s"), Ok(Duration::ZERO), "minus zero is zero");
    assert_eq!(parsed("-1.5s"), Err("negative -1.5s".to_owned()));
    assert_eq!(parsed("315576000000s"), Ok(Duration::from_secs(315_576_000_000)));
    for malformed in [
        "100ms",
        "1",
        "s",
        ".5s",
        "1.s",
        "1.0000000001s",
        "1e3s",
        " 1s",
        "+1s",
        "1,5s",
        "--1s",
    ] {
        assert!(
            parsed(malformed).is_err_and(|error| error.starts_with("must be a duration")),
            "{malformed}"
        );
    }
    assert_eq!(
        parsed("315576000001s"),
        Err("must be at most 315576000000s (protobuf's largest duration), got 315576000001s".to_owned())
    );
    let error = duration(&Value::from(0.1), "timeout").err().unwrap();
    assert_eq!(
        error.message(),
        "must be a duration in seconds such as \"0.1s\", got 0.1"
    );
}

#[test]
fn codes_by_name_or_number() {
    let code = |value: Value| status_code(&value, "c").map_err(|error| error.message().to_owned());
    assert_eq!(code(Value::from("UNAVAILABLE")), Ok(Code::Unavailable));
    assert_eq!(code(Value::from(14)), Ok(Code::Unavailable));
    assert_eq!(code(Value::from(14.0)), Ok(Code::Unavailable));
    assert_eq!(
        code(Value::from("unavailable")),
        Err("unknown status code \"unavailable\" (did you mean \"UNAVAILABLE\"?)".to_owned())
    );
    assert_eq!(
        code(Value::from("GONE")),
        Err("unknown status code \"GONE\" (a name such as \"UNAVAILABLE\", or a number from 0 to 16)".to_owned())
    );
    for bad in [Value::from(17), Value::from(-1), Value::from(14.5)] {
        assert!(
            code(bad.clone()).is_err_and(|error| error.ends_with("(codes are 0 to 16)")),
            "{bad}"
        );
    }
    assert_eq!(
        code(Value::Bool(true)),
        Err("must be a status code's name or number, got true".to_owned())
    );
}
