use backoff_runtime::retry;

#[retry]
fn append(mut buffer: Vec<u8>, byte: u8) -> Result<usize, String> {
    buffer.push(byte);
    Ok(buffer.len())
}

fn main() {
    let _ = append(Vec::new(), 1);
}
