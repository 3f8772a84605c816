//! The run loop.
//!
//! The hooks, the decision after each attempt, the driver
//! that every front end runs, and what an attempt sees (its context, the
//! call chain of nested retries).

pub(crate) mod attempt;
pub(crate) mod blocking;
pub(crate) mod decide;
pub(crate) mod driver;
pub(crate) mod hedge;
pub(crate) mod hooks;
pub(crate) mod invocation;
pub(crate) mod nested;
pub(crate) mod outcome;
pub(crate) mod probe;
pub(crate) mod pushback;
pub(crate) mod result;
