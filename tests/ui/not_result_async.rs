use backoff_runtime::retry;

#[retry]
async fn answer() -> Option<u32> {
    Some(42)
}

fn main() {
    let _ = answer();
}
