// async-tempfile's `TempFile::drop_async(self)`: the body takes `self`
// apart, so the next attempt has neither field.
use backoff_runtime::retry;

pub struct TempFile {
    file: Vec<u8>,
    core: String,
}

async fn close(file: Vec<u8>, core: String) -> Result<(), String> {
    let _ = (file, core);
    Ok(())
}

impl TempFile {
    #[retry(max_retries = 1)]
    pub async fn drop_async(self) -> Result<(), String> {
        let TempFile { file, core } = self;
        close(file, core).await
    }
}

fn main() {
    let _ = TempFile { file: Vec::new(), core: String::new() }.drop_async();
}
