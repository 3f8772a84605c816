use backoff_runtime::retry;

#[retry(budget = backoff_runtime::RetryBudget::new())]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
