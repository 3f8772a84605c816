use backoff_runtime::retry;

#[derive(Debug)]
struct ApiError;

#[retry]
fn parse(text: &str) -> Result<u32, ApiError> {
    let n: u32 = text.parse()?;
    Ok(n)
}

fn main() {
    let _ = parse("1");
}
