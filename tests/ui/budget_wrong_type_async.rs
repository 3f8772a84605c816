use backoff_runtime::retry;

static LIMIT: u32 = 10;

#[retry(budget = &LIMIT)]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
