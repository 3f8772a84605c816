//! The event queue: events ordered by virtual time, ties broken by the order
//! they were scheduled in, so a run is a pure function of its seed.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Duration;

/// One scheduled event: when it happens, its tie-breaking sequence number,
/// and what it is.
struct Entry<E> {
    at: Duration,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// A min-heap of events keyed by virtual time (a [`Duration`] since the start
/// of the run). Popping an event moves the clock to its time; the clock never
/// goes backwards, because events can only be scheduled at or after it.
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
    now: Duration,
}

impl<E> EventQueue<E> {
    /// An empty queue with the clock at zero.
    pub(crate) fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: Duration::ZERO,
        }
    }

    /// The current virtual time: the time of the last event popped.
    pub(crate) fn now(&self) -> Duration {
        self.now
    }

    /// Schedules `event` to happen `delay` after the current time.
    pub(crate) fn schedule_in(&mut self, delay: Duration, event: E) {
        let entry = Entry {
            at: self.now.saturating_add(delay),
            seq: self.next_seq,
            event,
        };
        self.next_seq += 1;
        self.heap.push(Reverse(entry));
    }

    /// Takes the earliest event and moves the clock to its time; `None` when
    /// nothing is left to happen.
    pub(crate) fn pop(&mut self) -> Option<E> {
        let Reverse(entry) = self.heap.pop()?;
        debug_assert!(entry.at >= self.now, "virtual time went backwards");
        self.now = entry.at;
        Some(entry.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut queue = EventQueue::new();
        queue.schedule_in(Duration::from_millis(5), 'b');
        queue.schedule_in(Duration::from_millis(1), 'a');
        queue.schedule_in(Duration::from_millis(5), 'c');
        let order: Vec<char> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(order, ['a', 'b', 'c']);
        assert_eq!(queue.now(), Duration::from_millis(5));
    }
}
