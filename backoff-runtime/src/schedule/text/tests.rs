use super::*;
use core::time::Duration;

#[test]
fn every_jitter_word_reads_and_writes_back() {
    for word in grammar::JITTER_MODES {
        let mode: Jitter = word.parse().unwrap();
        assert_eq!(mode.to_string(), *word);
    }
    let amount = Jitter::AdditiveUpTo(Duration::from_millis(1500));
    assert_eq!(amount.to_string().parse::<Jitter>(), Ok(amount));
    assert_eq!(Jitter::AdditiveUpTo(Duration::ZERO).to_string(), "none");
}

#[test]
fn a_bad_jitter_says_the_fix() {
    assert_eq!(
        "0s".parse::<Jitter>().unwrap_err().to_string(),
        "`jitter = \"0s\"` adds no jitter: write `jitter = \"none\"` instead"
    );
    assert_eq!(
        "32".parse::<Jitter>().unwrap_err().to_string(),
        "jitter = \"32\": duration `32` has no unit: write \"32s\", \"32ms\" or another unit (ns, us (or µs), ms, s, m, h)"
    );
    let unknown = "decorelated".parse::<Jitter>().unwrap_err().to_string();
    assert!(
        unknown.starts_with("unknown jitter mode `decorelated`: did you mean `decorrelated`?"),
        "{unknown}"
    );
}

#[test]
fn hint_words_read_and_write_back() {
    for rule in [HintAboveCap::Stop, HintAboveCap::WaitCap] {
        assert_eq!(rule.to_string().parse::<HintAboveCap>(), Ok(rule));
    }
    let error = "stp".parse::<HintAboveCap>().unwrap_err().to_string();
    assert!(error.contains("did you mean `stop`?"), "{error}");
}
