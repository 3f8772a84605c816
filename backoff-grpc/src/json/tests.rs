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

/// The error of `json`, as `from_json` reports it.
fn refused(json: &str) -> String {
    ServiceConfig::from_json(json).map_or_else(|error| error.to_string(), |_| "accepted".to_owned())
}

#[test]
fn a_duration_too_large_for_u64_is_too_large_not_malformed() {
    assert_eq!(
        parsed("99999999999999999999s"),
        Err("must be at most 315576000000s (protobuf's largest duration), got 99999999999999999999s".to_owned())
    );
    assert_eq!(
        parsed("-99999999999999999999s"),
        Err("must be at most 315576000000s (protobuf's largest duration), got -99999999999999999999s".to_owned())
    );
}

#[test]
fn a_long_value_is_quoted_by_a_short_prefix() {
    let long = "x".repeat(10 << 20);
    let error = refused(&format!(
        r#"{{"methodConfig": [{{"name": [{{}}], "timeout": "{long}"}}]}}"#
    ));
    let prefix = "x".repeat(39);
    assert_eq!(
        error,
        format!(
            "methodConfig[0].timeout: must be a duration in seconds such as \"0.1s\", got \"{prefix}... ({} bytes)",
            long.len() + 2
        )
    );
    let error = refused(&format!(
        r#"{{"methodConfig": [{{"name": [{{"method": "{long}"}}]}}]}}"#
    ));
    assert!(error.len() < 200, "{} bytes", error.len());
    let error = refused(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "-{long}"}}], "timeout": "-{long}s"}}]}}"#
    ));
    assert!(error.len() < 200, "{} bytes", error.len());
    // A value that is not a string is quoted as JSON writes it, shortened.
    let error = refused(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": ["{long}"]}}]}}]}}"#
    ));
    assert!(
        error.ends_with(&format!("[\"{}... ({} bytes)", "x".repeat(38), long.len() + 4)),
        "{}",
        &error[..100]
    );
}

#[test]
fn a_whole_number_past_its_type_is_refused_with_the_value_written() {
    let throttling = |tokens: &str| {
        refused(&format!(
            r#"{{"retryThrottling": {{"maxTokens": {tokens}, "tokenRatio": 0.1}}}}"#
        ))
    };
    assert_eq!(
        throttling("9223372036854775808"),
        "retryThrottling.maxTokens: must be from 1 to 1000, got 9223372036854775808"
    );
    // serde_json writes the number back in its own form.
    assert_eq!(
        throttling("1e300"),
        "retryThrottling.maxTokens: must be from 1 to 1000, got 1e+300"
    );
    let attempts = |attempts: &str, policy: &str| {
        let json = match policy {
            "retryPolicy" => format!(
                r#"{{"methodConfig": [{{"name": [{{}}], "retryPolicy": {{"maxAttempts": {attempts},
                "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"]}}}}]}}"#
            ),
            _ => format!(r#"{{"methodConfig": [{{"name": [{{}}], "hedgingPolicy": {{"maxAttempts": {attempts}}}}}]}}"#),
        };
        refused(&json)
    };
    for policy in ["retryPolicy", "hedgingPolicy"] {
        for (written, shown) in [
            ("9223372036854775808", "9223372036854775808"),
            ("1e300", "1e+300"),
            ("2147483648", "2147483648"),
        ] {
            assert_eq!(
                attempts(written, policy),
                format!(
                    "methodConfig[0].{policy}.maxAttempts: must be at most 2147483647 (a 32-bit integer, as gRPC's clients read it), got {shown}"
                ),
            );
        }
        assert_eq!(attempts("2147483647", policy), "accepted", "capped at 5, as before");
    }
}

#[test]
fn a_name_with_a_slash_is_refused_as_such_not_as_a_duplicate() {
    assert_eq!(
        refused(r#"{"methodConfig": [{"name": [{"service": "a", "method": "b"}, {"service": "/a/b"}]}]}"#),
        r#"methodConfig[0].name[1].service: must not contain '/' (a call's path is /service/method), got "/a/b""#
    );
    assert_eq!(
        refused(r#"{"methodConfig": [{"name": [{"service": "a/b", "method": "c"}]}]}"#),
        r#"methodConfig[0].name[0].service: must not contain '/' (a call's path is /service/method), got "a/b""#
    );
    assert_eq!(
        refused(r#"{"methodConfig": [{"name": [{"service": "a", "method": "b/c"}]}]}"#),
        r#"methodConfig[0].name[0].method: must not contain '/' (a call's path is /service/method), got "b/c""#
    );
}

#[test]
fn a_zero_timeout_is_a_deadline_already_passed_and_accepted() {
    for timeout in ["0s", "-0s", "0.000000000s"] {
        let json = format!(
            r#"{{"methodConfig":[{{"name":[{{}}],"timeout":"{timeout}","hedgingPolicy":{{"maxAttempts":3}}}}]}}"#
        );
        let config = ServiceConfig::from_json(&json).expect("gRPC's clients accept it");
        let entry = config.method_config("/a.B/C").expect("the default entry");
        assert_eq!(entry.timeout(), Some(Duration::ZERO), "{timeout}");
    }
}
