// object_store's `collect_bytes`: a `mut` argument of a generic type, which
// each attempt cannot be given afresh.
use backoff_runtime::retry;
use bytes::Bytes;
use futures_util::stream::{Stream, StreamExt};

#[retry(max_retries = 1)]
pub async fn collect_bytes<S, E>(mut stream: S, size_hint: Option<u64>) -> Result<Bytes, E>
where
    E: Send,
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
{
    let _ = size_hint;
    match stream.next().await {
        Some(first) => first,
        None => Ok(Bytes::new()),
    }
}

#[retry(max_retries = 1)]
pub fn read_all(mut reader: impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.read_to_end(&mut out)?;
    Ok(out)
}

fn main() {}
