use backoff_rt::retry;

#[retry(crate = "backoff_rt")]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
