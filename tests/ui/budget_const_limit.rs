use backoff_runtime::{limits::RetryBudget, retry};

// A `const` is a new budget at every use: it would limit nothing.
const BUDGET: RetryBudget = RetryBudget::new();

#[retry(budget = BUDGET)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
