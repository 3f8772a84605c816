use backoff_runtime::retry;

fn is_transient(status: &u16) -> bool {
    *status >= 500
}

#[retry(retry_if = is_transient)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
