//! A sync `#[retry]`. Natively it compiles and retries with
//! `std::thread::sleep`. For wasm32-unknown-unknown it is a compile error
//! naming the attribute: there is no thread to sleep on.

use backoff_runtime::retry;

/// Parses `text`, retrying twice.
///
/// ```
/// # #[cfg(feature = "sync-fixture")]
/// assert_eq!(backoff_wasm_tests::sync_fixture::parse("7"), Ok(7));
/// ```
///
/// # Errors
///
/// The parse error, after the retries.
#[retry(max_retries = 2, initial_backoff = "1ms", max_backoff = "2ms")]
pub fn parse(text: &str) -> Result<u32, core::num::ParseIntError> {
    text.parse()
}
