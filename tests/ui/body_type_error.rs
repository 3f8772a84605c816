use backoff_runtime::retry;

#[retry]
fn fetch() -> Result<u32, String> {
    Ok("not a number")
}

#[retry]
async fn fetch_async() -> Result<u32, String> {
    Ok("not a number")
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
