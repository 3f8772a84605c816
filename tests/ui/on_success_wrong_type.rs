use backoff_runtime::retry;

// `on_success` is a `fn(&Success)`.
#[retry(on_success = |s: &u32| println!("{s}"))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn log_success(attempts: u32) {
    println!("{attempts}");
}

#[retry(on_success = log_success)]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
