use backoff_runtime::{RetryEvent, retry};

// `on_give_up` is a `fn(&E, &GiveUp)`.
#[retry(on_give_up = |_e, g: &u32| println!("{g}"))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn log_give_up(error: &String, event: &RetryEvent) {
    println!("{error} {event:?}");
}

#[retry(on_give_up = log_give_up)]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
