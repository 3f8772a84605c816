use backoff_runtime::retry;

#[retry]
fn first(items: &mut Vec<u32>) -> Result<&mut u32, String> {
    items.first_mut().ok_or_else(|| "empty".to_owned())
}

#[retry]
fn named<'a>(items: &'a mut Vec<u32>, label: &str) -> Result<&'a u32, String> {
    let _ = label;
    items.first().ok_or_else(|| "empty".to_owned())
}

fn main() {
    let _ = first(&mut vec![1]);
    let _ = named(&mut vec![1], "x");
}
