use backoff_runtime::retry;

#[derive(Clone, Copy)]
struct Counter(u32);

impl Counter {
    #[retry]
    fn bump(mut self) -> Result<u32, String> {
        self.0 += 1;
        Ok(self.0)
    }
}

fn main() {
    let _ = Counter(0).bump();
}
