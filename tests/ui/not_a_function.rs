use backoff_runtime::retry;

#[retry]
struct Client {
    url: String,
}

fn main() {}
