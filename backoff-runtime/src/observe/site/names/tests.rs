use super::super::{CallSite, Site};

/// Five sites in a table of four slots (the test build's size): each name
/// is made once and read back the same, in the table and past it.
#[test]
fn each_site_keeps_its_own_name_in_the_table_and_past_it() {
    static SITES: [CallSite; 5] = [
        CallSite::new("a", "m"),
        CallSite::new("b", "m"),
        CallSite::new("c", "m"),
        CallSite::new("d", "m"),
        CallSite::new("e", "m"),
    ];
    let first: Vec<&'static str> = SITES.iter().map(|site| Site::Static(site).name()).collect();
    assert_eq!(first, ["m::a", "m::b", "m::c", "m::d", "m::e"]);
    for (site, name) in SITES.iter().zip(&first) {
        // The same allocation: made once, not again per read.
        assert!(core::ptr::eq(Site::Static(site).name(), *name));
    }
}

/// Threads racing for one site's first name all get the same one.
#[test]
fn racing_threads_share_one_name() {
    static RACED: CallSite = CallSite::new("raced", "m");
    let names: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| Site::Static(&RACED).name().as_ptr() as usize))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or_default())
            .collect()
    });
    assert!(names.iter().all(|name| *name == names[0] && *name != 0));
    assert_eq!(Site::Static(&RACED).name(), "m::raced");
}

/// Every slot of the table has a cell of its own; past the table, none.
#[test]
fn each_slot_has_its_own_cell_and_none_past_the_table() {
    use super::{CHUNK, CHUNKS, cell};
    let mut cells: Vec<usize> = (0..CHUNK * CHUNKS)
        .filter_map(|index| cell(index).map(|cell| core::ptr::from_ref(cell) as usize))
        .collect();
    assert_eq!(cells.len(), CHUNK * CHUNKS);
    cells.sort_unstable();
    cells.dedup();
    assert_eq!(cells.len(), CHUNK * CHUNKS);
    assert!(cell(CHUNK * CHUNKS).is_none());
}

/// A site whose slot another thread claimed first keeps that slot.
#[test]
fn a_slot_another_thread_claimed_is_kept() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let slot = AtomicU32::new(7);
    assert_eq!(super::claim(&slot), 6);
    assert_eq!(slot.load(Ordering::Relaxed), 7);
}
