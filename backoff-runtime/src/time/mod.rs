//! Time: the clocks a loop reads, the sleeps it waits with, and the per-attempt timeout.

pub(crate) mod clock;
pub(crate) mod cold_box;
pub(crate) mod default_wait;
pub(crate) mod sleep;
pub(crate) mod timeout;
