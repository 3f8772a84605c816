use backoff_runtime::retry;

#[retry(hedge_after = "50ms")]
async fn fetch(mut attempts: u32, url: &str) -> Result<usize, std::io::Error> {
    attempts += 1;
    Ok(url.len() + attempts as usize)
}

#[retry(hedge_after = "50ms")]
async fn read_into(buffer: &mut Vec<u8>) -> Result<usize, std::io::Error> {
    buffer.push(1);
    Ok(buffer.len())
}

fn main() {}
