use backoff_runtime::retry;

#[retry(slow_down_if = |e: &String| e == "slow down")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
