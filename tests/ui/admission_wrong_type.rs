use backoff_runtime::retry;

static LIMITER: u32 = 10;

#[retry(admission = LIMITER)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
