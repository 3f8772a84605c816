// object_store's `LocalFileSystem::put_opts`: the body moves one field of
// an owned argument (`opts.mode`), so the next attempt has none.
use backoff_runtime::retry;

pub enum PutMode {
    Overwrite,
    Create,
}

pub struct PutOptions {
    pub mode: PutMode,
    pub tags: Vec<String>,
}

fn write(mode: PutMode) -> Result<u64, String> {
    Ok(matches!(mode, PutMode::Create) as u64)
}

#[retry(max_retries = 1)]
async fn put_opts(location: &str, opts: PutOptions) -> Result<u64, String> {
    let _ = (location, &opts.tags);
    write(opts.mode)
}

fn main() {
    let opts = PutOptions { mode: PutMode::Overwrite, tags: Vec::new() };
    let _ = put_opts("a", opts);
}
