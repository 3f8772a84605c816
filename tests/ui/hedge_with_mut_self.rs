use backoff_runtime::retry;

struct Cache {
    hits: u32,
}

impl Cache {
    #[retry(hedge_after = "50ms")]
    async fn refresh(&mut self) -> Result<u32, std::io::Error> {
        self.hits += 1;
        Ok(self.hits)
    }
}

fn main() {}
