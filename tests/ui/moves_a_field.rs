// The sync form of object_store's `put_opts`: a field of an owned argument
// moved by the body.
use backoff_runtime::retry;

pub struct PutOptions {
    pub mode: String,
    pub tags: Vec<String>,
}

fn write(mode: String) -> Result<usize, String> {
    Ok(mode.len())
}

#[retry(max_retries = 1)]
fn put_opts(opts: PutOptions) -> Result<usize, String> {
    let _ = &opts.tags;
    write(opts.mode)
}

fn main() {
    let _ = put_opts(PutOptions { mode: String::new(), tags: Vec::new() });
}
