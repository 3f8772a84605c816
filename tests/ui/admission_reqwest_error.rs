// `admission = ...` on a function returning `reqwest::Error`: another
// crate's type, which cannot be given `From<Refused>` here.
use backoff_runtime::{limits::AdaptiveRateLimiter, retry};

static PACE: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(admission = PACE)]
async fn get(client: &reqwest::Client, url: &str) -> Result<String, reqwest::Error> {
    client.get(url).send().await?.text().await
}

fn main() {
    let _ = get;
}
