use super::*;
use std::collections::HashSet;

/// The key is drawn from the OS, not made up: two draws differ (a
/// constant key would make every process send the same ids).
#[test]
fn the_key_is_drawn_fresh_from_the_os() {
    let (first, second) = (os_key(), os_key());
    assert_ne!(first, second);
    assert_ne!(first, [0; 32]);
}

#[test]
fn nonces_are_unique_across_calls_and_threads() {
    let mine: Vec<CallNonce> = (0..1000).map(|_| CallNonce::next()).collect();
    let theirs = std::thread::spawn(|| (0..1000).map(|_| CallNonce::next()).collect::<Vec<_>>())
        .join()
        .expect("the thread ran");
    let all: HashSet<(u64, u64)> = mine.iter().chain(&theirs).map(|n| (n.thread, n.call)).collect();
    assert_eq!(all.len(), 2000);
    assert_ne!(mine[0].thread, theirs[0].thread);
    assert!(mine.iter().chain(&theirs).all(|n| n.thread != 0));
}

#[test]
fn the_same_nonce_gives_the_same_bits_on_every_thread() {
    let nonce = CallNonce::next();
    let here = nonce.bits();
    let there = std::thread::spawn(move || nonce.bits()).join().expect("the thread ran");
    assert_eq!(here, there);
    assert_ne!(here, CallNonce::next().bits());
}

/// The bits are ChaCha12's keystream under the process key at the
/// nonce's stream and block, not the counters themselves.
#[test]
fn the_bits_are_the_keyed_chacha12_block_of_the_nonce() {
    let nonce = CallNonce { thread: 7, call: 9 };
    let key = *KEY.get_or_init(os_key);
    let mut reference = ChaCha12Rng::from_seed(key);
    reference.set_stream(7);
    reference.set_word_pos(9 * 16);
    let mut block = [0u8; 16];
    reference.fill_bytes(&mut block);
    let expected = (u128::from(u64::from_le_bytes(block[..8].try_into().expect("8 bytes"))) << 64)
        | u128::from(u64::from_le_bytes(block[8..].try_into().expect("8 bytes")));
    assert_eq!(nonce.bits(), expected);
    assert_ne!(key, [0; 32]);
    assert_ne!(nonce.bits(), CallNonce { thread: 7, call: 10 }.bits());
    assert_ne!(nonce.bits(), CallNonce { thread: 8, call: 9 }.bits());
}
