use backoff_runtime::retry;

#[derive(Debug)]
struct ApiError;

#[retry(timeout = "5s")]
async fn fetch() -> Result<u32, ApiError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
