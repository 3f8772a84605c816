use backoff_runtime::retry;

#[retry]
fn log_line(line: &str) {
    println!("{line}");
}

fn main() {
    log_line("hello");
}
