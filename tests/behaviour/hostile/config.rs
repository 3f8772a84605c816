//! The service config's JSON as a resolver may hand it over (a DNS TXT
//! record): generated documents, some with their bytes mutated. Never a
//! panic; a refusal names its field and quotes at most a short prefix;
//! an accepted config makes a layer.

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use tower::Layer;

use super::corpus;
use super::generate::{Bound, OnPanic, Rng};

/// The longest error a document may get, in characters: the path, the
/// rule and a quoted prefix.
const LONGEST_ERROR: usize = 300;

/// A value long enough that quoting it whole would show.
fn long_text() -> String {
    "x".repeat(600)
}

fn string(rng: &mut Rng) -> String {
    match rng.below(16) {
        0 => long_text(),
        1 => rng.text(b"ab./_ -\\\"\xc3", 12),
        _ => (*rng.pick(&[
            "",
            "a",
            "a.B",
            "/a/b",
            "a/b",
            "b",
            "pkg.Service",
            "\u{e9}",
            "\\u0000",
            "Method",
        ]))
        .to_owned(),
    }
}

fn quoted(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

fn duration(rng: &mut Rng) -> String {
    const EDGES: &[&str] = &[
        "0s",
        "-0s",
        "0.000000000s",
        "0.1s",
        "1s",
        "-1s",
        "1.5s",
        "99999999999999999999s",
        "-99999999999999999999s",
        "315576000000s",
        "315576000001s",
        "1.0000000001s",
        "100ms",
        "s",
        "-s",
        ".5s",
        "1e3s",
    ];
    match rng.below(12) {
        0 => rng.number(),
        1 => quoted(&format!("{}s", rng.number())),
        2 | 3 => quoted(&rng.text(b"0123456789.-s", 14)),
        4 => quoted(&format!("{}s", long_text())),
        _ => {
            let edge: &&str = rng.pick(EDGES);
            quoted(edge)
        }
    }
}

/// Any JSON value, for a field of the wrong type.
fn junk(rng: &mut Rng) -> String {
    match rng.below(14) {
        0 => "null".to_owned(),
        1 => "true".to_owned(),
        2 => "[]".to_owned(),
        3 => "{}".to_owned(),
        4 => format!("[{}]", quoted(&long_text())),
        5..=8 => quoted(&string(rng)),
        _ => rng.number(),
    }
}

/// `"key": value` when the field is there (most often), or junk.
fn field(rng: &mut Rng, key: &str, value: impl FnOnce(&mut Rng) -> String) -> Option<String> {
    match rng.below(10) {
        0 => None,
        1 => Some(format!("{}: {}", quoted(key), junk(rng))),
        _ => Some(format!("{}: {}", quoted(key), value(rng))),
    }
}

fn object(fields: impl IntoIterator<Item = Option<String>>) -> String {
    let fields: Vec<String> = fields.into_iter().flatten().collect();
    format!("{{{}}}", fields.join(", "))
}

fn list(rng: &mut Rng, most: u64, item: impl Fn(&mut Rng) -> String) -> String {
    let items: Vec<String> = (0..rng.below(most + 1)).map(|_| item(rng)).collect();
    format!("[{}]", items.join(", "))
}

fn code(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => rng.number(),
        1 => quoted(&string(rng)),
        _ => (*rng.pick(&["\"UNAVAILABLE\"", "14", "\"unavailable\"", "0", "\"OK\"", "16", "17"])).to_owned(),
    }
}

fn name(rng: &mut Rng) -> String {
    object([
        field(rng, "service", |rng| quoted(&string(rng))).filter(|_| rng.below(4) != 0),
        field(rng, "method", |rng| quoted(&string(rng))).filter(|_| rng.below(2) != 0),
    ])
}

fn retry_policy(rng: &mut Rng) -> String {
    object([
        field(rng, "maxAttempts", Rng::number),
        field(rng, "initialBackoff", duration),
        field(rng, "maxBackoff", duration),
        field(rng, "backoffMultiplier", Rng::number),
        field(rng, "retryableStatusCodes", |rng| list(rng, 3, code)),
    ])
}

fn hedging_policy(rng: &mut Rng) -> String {
    object([
        field(rng, "maxAttempts", Rng::number),
        field(rng, "hedgingDelay", duration),
        field(rng, "nonFatalStatusCodes", |rng| list(rng, 3, code)),
    ])
}

fn method_config(rng: &mut Rng) -> String {
    object([
        field(rng, "name", |rng| list(rng, 3, name)),
        field(rng, "timeout", duration),
        field(rng, "retryPolicy", retry_policy).filter(|_| rng.below(3) != 0),
        field(rng, "hedgingPolicy", hedging_policy).filter(|_| rng.below(3) == 0),
        field(rng, "waitForReady", |_| "true".to_owned()).filter(|_| rng.one_in(8)),
    ])
}

/// A whole document, sometimes with its bytes mutated.
pub fn document(rng: &mut Rng) -> String {
    let document = object([
        field(rng, "methodConfig", |rng| list(rng, 3, method_config)),
        field(rng, "retryThrottling", |rng| {
            object([
                field(rng, "maxTokens", Rng::number),
                field(rng, "tokenRatio", Rng::number),
            ])
        })
        .filter(|_| rng.below(2) == 0),
        field(rng, "loadBalancingConfig", |_| "[{\"round_robin\": {}}]".to_owned()).filter(|_| rng.one_in(8)),
    ]);
    if !rng.one_in(4) {
        return document;
    }
    let mut bytes = document.into_bytes();
    for _ in 0..=rng.below(3) {
        let at = rng.below(bytes.len() as u64 + 1) as usize;
        match rng.below(3) {
            0 => bytes.truncate(at),
            1 => bytes.insert(at, *rng.pick(b"{}[]\",:0-9.s\\ ")),
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One document: never a panic; a refusal is short and names its field
/// (unless the whole document is wrong); an accepted config makes a
/// layer, its attempts capped at 5.
pub fn check(json: &str) {
    let _told = OnPanic(json.chars().take(2000).collect());
    match ServiceConfig::from_json(json) {
        Err(error) => {
            let shown = error.to_string();
            assert!(
                shown.chars().count() <= LONGEST_ERROR,
                "an error of {} characters: {}",
                shown.chars().count(),
                shown.chars().take(400).collect::<String>()
            );
            let whole_document = shown.starts_with("not JSON") || shown.starts_with("a service config");
            assert!(whole_document || !error.path().is_empty(), "{shown}");
        }
        Ok(config) => {
            for path in ["/a/b", "/a.B/Method", "/pkg.Service/Method", "/x/y"] {
                if let Some(policy) = config.retry_policy(path) {
                    assert!((2..=5).contains(&policy.max_attempts()), "{path}: {policy:?}");
                }
                if let Some(hedging) = config.method_config(path).and_then(|entry| entry.hedging_policy()) {
                    assert!((2..=5).contains(&hedging.max_attempts()), "{path}: {hedging:?}");
                }
            }
            let channel = tower::service_fn(|_: http::Request<tonic::body::Body>| async {
                Ok::<_, std::io::Error>(http::Response::new(tonic::body::Body::empty()))
            });
            drop(GrpcRetryLayer::new(config).layer(channel));
        }
    }
}

#[test]
fn the_corpus_is_read_without_a_panic() {
    for (name, json) in corpus::of("service_config") {
        let _told = OnPanic(name);
        check(&json);
    }
}

#[test]
fn generated_service_configs_are_read_without_a_panic() {
    let mut bound = Bound::new(20_000);
    while let Some(mut rng) = bound.input() {
        let json = document(&mut rng);
        let _told = OnPanic(bound.input_seed());
        check(&json);
    }
    bound.report("service config");
}
