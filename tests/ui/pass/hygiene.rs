//! Generated code uses absolute paths: local modules named `core` and `std`
//! do not capture them, and `unused_qualifications` finds nothing to report.
#![deny(unused_qualifications, unused_mut, unused_variables, unreachable_code)]

mod core {}
mod std {}

use backoff_runtime::retry;

#[retry(initial_backoff = "1ms", max_backoff = "2ms")]
fn sync_fn(n: u32) -> ::core::result::Result<u32, ::std::string::String> {
    if n > 1 { Ok(n) } else { Err(::std::string::String::from("small")) }
}

#[retry(initial_backoff = "1ms", max_backoff = "2ms", max_elapsed = "1s", jitter = full)]
async fn async_fn(n: u32) -> ::core::result::Result<u32, ::std::string::String> {
    if n > 1 { Ok(n) } else { Err(::std::string::String::from("small")) }
}

fn main() {
    ::core::assert_eq!(sync_fn(2), Ok(2));
    let runtime = ::tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    ::core::assert_eq!(runtime.block_on(async_fn(3)), Ok(3));
}
