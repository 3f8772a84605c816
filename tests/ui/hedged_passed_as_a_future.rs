// A hedged builder passed where a `Future` is required: the error says
// `.into_future()`.
use backoff_runtime::Policy;
use std::time::Duration;

const POLICY: Policy = Policy::new();

fn main() {
    let hedged = POLICY.retry(|| async { Ok::<_, ()>(1) }).hedge_after(Duration::from_millis(5));
    let _ = smol::block_on(hedged);
}
