use backoff_runtime::retry;

#[retry]
#[track_caller]
fn located() -> Result<u32, String> {
    Ok(std::panic::Location::caller().line())
}

fn main() {
    let _ = located();
}
