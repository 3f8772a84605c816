//! The cancellation sweep: every front end with every
//! limiter, its call dropped after k polls for every k until it answers,
//! never polled, panicking in its body, and losing as a hedge. After each
//! case the limiter heard every admitted attempt's end exactly once and
//! every waiter that left, and a fresh call behaves exactly as it would had
//! the cancelled call only done what it finished: the same answer, the
//! same attempts, the same wait on tokio's paused clock, the same limiter
//! state (a bulkhead's free slots, a breaker's state, a budget's retries
//! left).
//!
//! How "as it would" is made: each case runs on two identical limiters,
//! A and B, brought to the same state at the same instant. The cancelled
//! call runs on A, through a recorder. B is then told what that call
//! should have left behind, replayed from A's record at the recorded
//! instants: every attempt that answered, a panic as a failure, and
//! nothing of an attempt abandoned, a waiter that left or a retry never
//! sent (`support::replay`). A call that was dropped before anything
//! answered leaves B fresh. Then a fresh call runs on A and on B side by
//! side, and both must agree.

mod fronts;
mod support;
mod sweep;
