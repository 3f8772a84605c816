use backoff_runtime::retry;

#[retry(context = "attempt")]
fn quoted() -> Result<u32, String> {
    Ok(1)
}

#[retry(context = state.attempt)]
fn field() -> Result<u32, String> {
    Ok(1)
}

#[retry(context = self)]
fn self_name() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
