use super::*;

#[test]
fn names_and_numbers_are_grpc_s() {
    assert_eq!(code_named("UNAVAILABLE"), Some(Code::Unavailable));
    assert_eq!(code_named("OK"), Some(Code::Ok));
    assert_eq!(code_named("UNAUTHENTICATED"), Some(Code::Unauthenticated));
    assert_eq!(code_named("unavailable"), None, "upper case only, as gRPC's clients");
    assert_eq!(code_numbered(14), Some(Code::Unavailable));
    assert_eq!(code_numbered(16), Some(Code::Unauthenticated));
    assert_eq!(code_numbered(17), None);
    assert_eq!(code_numbered(-1), None);
    for number in 0..17 {
        let code = code_numbered(number).unwrap();
        assert_eq!(code_named(name_of(code)), Some(code));
    }
}

#[test]
fn a_set_holds_what_was_inserted() {
    let mut set = CodeSet::default();
    assert!(set.is_empty());
    set.insert(Code::Unavailable);
    set.insert(Code::Aborted);
    assert!(set.contains(Code::Unavailable) && set.contains(Code::Aborted));
    assert!(!set.contains(Code::Ok) && !set.contains(Code::Internal));
    assert_eq!(set.iter().collect::<Vec<_>>(), [Code::Aborted, Code::Unavailable]);
}
