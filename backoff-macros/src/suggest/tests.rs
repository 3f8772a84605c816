use super::*;

#[test]
fn suggests_close_keys_only() {
    let keys = ["max_backoff", "max_retries", "jitter"];
    assert_eq!(nearest("max_backof", keys), Some("max_backoff"));
    assert_eq!(nearest("max_retry", keys), Some("max_retries"));
    assert_eq!(nearest("jiter", keys), Some("jitter"));
    assert_eq!(nearest("timeout", keys), None);
}
