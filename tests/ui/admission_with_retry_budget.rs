use backoff_runtime::{limits::RetryBudget, retry};

// A budget that counts retries, named where attempts are admitted.
static BUDGET: RetryBudget = RetryBudget::new();

#[retry(admission = BUDGET)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
