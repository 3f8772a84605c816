use super::BlockingParts;
use crate::time::sleep::DefaultSleep;

#[test]
fn blocking_parts_debug_as_whether_they_act() {
    let mut body = || Ok::<u8, ()>(1);
    let parts: BlockingParts<'_, u8, (), ()> = BlockingParts {
        body: &mut body,
        sleeper: &DefaultSleep,
        action: None,
        admission: None,
    };
    assert_eq!(format!("{parts:?}"), "BlockingParts { acts: false, .. }");
}
