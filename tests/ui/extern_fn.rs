use backoff_runtime::retry;

#[retry]
extern "C" fn answer() -> u32 {
    42
}

fn main() {
    let _ = answer();
}
