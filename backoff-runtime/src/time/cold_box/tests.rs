use super::ColdBox;
use std::rc::Rc;

#[test]
fn the_boxed_value_is_reachable_and_dropped_with_the_box() {
    let value = Rc::new(());
    let mut boxed = ColdBox::new(Rc::clone(&value));
    assert!(boxed.get().is_some());
    assert_eq!(Rc::strong_count(&value), 2);
    drop(boxed);
    assert_eq!(Rc::strong_count(&value), 1);
    assert!(ColdBox::<u8>::empty().get().is_none());
}
