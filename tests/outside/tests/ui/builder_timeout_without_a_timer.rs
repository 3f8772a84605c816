use backoff_rt::Policy;
use std::time::Duration;

fn main() {
    let _ = Policy::new()
        .retry(|| async { Ok::<u32, std::io::Error>(1) })
        .timeout(Duration::from_secs(1));
}
