//! The names of the call sites, made once each.
//!
//! In one table for the program.
//!
//! A site's `static` holds only its slot number: an `AtomicU32`, zero
//! until the name is first needed. A `OnceLock` in each `static` would do
//! the same job, but rustc spends about 0.3 M instructions evaluating one
//! per annotated function (`BENCHMARKS.md`, compile cost).
//!
//! - A read is three atomic loads: the site's slot, the chunk, the entry.
//! - Chunks of slots are allocated as sites claim them.
//! - Past the table's last slot (a million sites), names are kept in a
//!   locked list instead.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use super::Resolved;

/// Slots per chunk.
const CHUNK: usize = if cfg!(test) { 2 } else { 1024 };
/// Chunks in the table.
const CHUNKS: usize = if cfg!(test) { 2 } else { 1024 };

type Chunk = Box<[OnceLock<&'static Resolved>]>;

/// The table: chunks of slots, and the next free slot.
static CHUNK_TABLE: [OnceLock<Chunk>; CHUNKS] = [const { OnceLock::new() }; CHUNKS];
static NEXT_SLOT: AtomicU32 = AtomicU32::new(0);
/// Names of the sites that claimed a slot past the table, by their
/// `slot` cell's address.
static OVERFLOW: Mutex<Vec<(usize, &'static Resolved)>> = Mutex::new(Vec::new());

/// The name kept for the site whose slot cell is `slot`, made by `make`
/// the first time.
pub(super) fn resolved(slot: &'static AtomicU32, make: impl FnOnce() -> &'static Resolved) -> &'static Resolved {
    let index = match slot.load(Ordering::Acquire) {
        0 => claim(slot),
        claimed => claimed as usize - 1,
    };
    match cell(index) {
        Some(cell) => cell.get_or_init(make),
        None => overflowed(slot, make),
    }
}

/// A slot for the site whose cell is `slot`: a new one, or the one
/// another thread claimed first.
fn claim(slot: &AtomicU32) -> usize {
    let fresh = NEXT_SLOT.fetch_add(1, Ordering::Relaxed).saturating_add(1);
    match slot.compare_exchange(0, fresh, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => fresh as usize - 1,
        Err(claimed) => claimed as usize - 1,
    }
}

/// The cell of slot `index`, its chunk allocated if it is the first; none
/// past the table.
fn cell(index: usize) -> Option<&'static OnceLock<&'static Resolved>> {
    let chunk = CHUNK_TABLE.get(index / CHUNK)?;
    let chunk = chunk.get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
    chunk.get(index % CHUNK)
}

/// The name of a site past the table, kept in the locked list.
fn overflowed(slot: &'static AtomicU32, make: impl FnOnce() -> &'static Resolved) -> &'static Resolved {
    let key = core::ptr::from_ref(slot) as usize;
    let mut names = OVERFLOW.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, name)) = names.iter().find(|(site, _)| *site == key) {
        return name;
    }
    let name = make();
    names.push((key, name));
    name
}

#[cfg(test)]
mod tests;
