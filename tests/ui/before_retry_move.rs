use backoff_runtime::retry;

struct Client {
    token: String,
}

impl Client {
    async fn refresh(&mut self) {
        self.token = "fresh".to_string();
    }

    #[retry(before_retry = async move |_e: &String, _ev| self.refresh().await)]
    async fn get(&mut self) -> Result<usize, String> {
        Ok(self.token.len())
    }

    #[retry(before_retry = move |_e: &String, _ev| self.token.clear())]
    fn get_sync(&mut self) -> Result<usize, String> {
        Ok(self.token.len())
    }
}

fn main() {}
