//! Where invocation ids come from.
//!
//! A cryptographically secure generator, independent of the jitter generator in
//! `rng`.
//!
//! A call records only a [`CallNonce`], unique in the process and cheap to
//! take (no system call, no lock, no draw): the number of its thread (taken
//! once per thread from a global counter) and the number of the call on that
//! thread. The id's bits are computed when the body reads them, as the first
//! 16 bytes of the ChaCha12 block at stream = thread number, block = call
//! number, under a 256-bit key drawn once per process from the operating
//! system (`getrandom`). ChaCha12 is the generator behind rand's `StdRng` and
//! thread generator: since no nonce repeats under the key, the ids are
//! indistinguishable from independent uniform random bits to anyone who does
//! not know the key, however many of them they see. The same nonce gives the
//! same bits on every thread, so every attempt of a call, wherever it runs,
//! reports the same id.
//!
//! A process that forks shares its key and counters with the child, whose
//! ids may then repeat the parent's (as with rand's thread generator): fork
//! before the first retried call that reads an id, or exec.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use rand::rngs::{ChaCha12Rng, SysRng};
use rand::{Rng, SeedableRng, TryRng};

/// One call, unique in the process: its thread's number (never 0) and its
/// number on that thread. Both are 64-bit counters, which never wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallNonce {
    thread: u64,
    call: u64,
}

/// The number the next thread to take one gets (0 marks "not taken yet").
static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's next nonce; `thread == 0` until the first call.
    static NEXT_NONCE: Cell<CallNonce> = const { Cell::new(CallNonce { thread: 0, call: 0 }) };
}

#[cfg(test)]
thread_local! {
    /// How many ids this thread has computed: tests check that building
    /// attempts computes none.
    pub(crate) static COMPUTED: Cell<u64> = const { Cell::new(0) };
}

/// The process-wide key of the ids, drawn from the OS on first use.
static KEY: OnceLock<[u8; 32]> = OnceLock::new();

impl CallNonce {
    /// A nonce no other call of this process has: two loads, a compare and
    /// a store of a thread-local (a global atomic once per thread).
    #[inline]
    pub fn next() -> Self {
        NEXT_NONCE.with(|next| {
            let mut nonce = next.get();
            if nonce.thread == 0 {
                nonce.thread = thread_number();
            }
            next.set(CallNonce {
                thread: nonce.thread,
                call: nonce.call.wrapping_add(1),
            });
            nonce
        })
    }

    /// The id's 128 bits: unpredictable without the process's key, the same
    /// on every thread for the same nonce.
    pub(crate) fn bits(self) -> u128 {
        #[cfg(test)]
        COMPUTED.with(|computed| computed.set(computed.get() + 1));
        let mut stream = ChaCha12Rng::from_seed(*KEY.get_or_init(os_key));
        // `set_stream` resets the position: stream first, then block.
        stream.set_stream(self.thread);
        stream.set_block_pos(self.call);
        let high = stream.next_u64();
        let low = stream.next_u64();
        (u128::from(high) << 64) | u128::from(low)
    }
}

/// This thread's number: distinct for each thread that takes one.
#[cold]
fn thread_number() -> u64 {
    NEXT_THREAD.fetch_add(1, Ordering::Relaxed)
}

/// 256 bits from the operating system's generator. Should the OS refuse
/// (it does not on any supported system once booted), the key comes from
/// std's randomly keyed hashers instead, which std seeds from the OS too:
/// never a panic.
#[cold]
fn os_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if SysRng.try_fill_bytes(&mut key).is_err() {
        let hasher = RandomState::new();
        for (i, chunk) in key.chunks_exact_mut(8).enumerate() {
            let word = hasher.hash_one((i, std::thread::current().id(), crate::time::clock::wall_clock_now()));
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
    key
}

#[cfg(test)]
mod tests;
