//! Time: the clocks a loop reads, the sleeps it waits with, and the per-attempt timeout.

pub(crate) mod clock;
pub(crate) mod sleep;
pub(crate) mod timeout;
