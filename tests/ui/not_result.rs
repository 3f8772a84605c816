use backoff_runtime::retry;

#[retry]
fn answer() -> u32 {
    42
}

fn main() {
    let _ = answer();
}
