use backoff_runtime::retry;

struct Pool {
    connections: Vec<u32>,
}

impl Pool {
    #[retry]
    fn checkout(&mut self) -> Result<&mut u32, String> {
        self.connections.first_mut().ok_or_else(|| "empty".to_owned())
    }

    #[retry]
    async fn checkout_async(&mut self) -> Result<&u32, String> {
        self.connections.first().ok_or_else(|| "empty".to_owned())
    }
}

fn main() {
    let mut pool = Pool { connections: vec![1] };
    let _ = pool.checkout();
}
