use backoff_runtime::retry;

trait Fetch {
    #[retry]
    fn fetch(&self) -> Result<u32, String>;
}

fn main() {}
