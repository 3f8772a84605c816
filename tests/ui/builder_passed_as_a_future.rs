// A builder passed where a `Future` is required: the error says
// `.into_future()`.
use backoff_runtime::Policy;

const POLICY: Policy = Policy::new();

fn main() {
    let _ = smol::block_on(POLICY.retry(|| async { Ok::<_, ()>(1) }));
}
