use backoff_runtime::retry;

#[retry(hedge_after = "50ms")]
fn fetch(url: &str) -> Result<usize, std::io::Error> {
    Ok(url.len())
}

fn main() {}
