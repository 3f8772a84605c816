use super::StopReason;

#[test]
fn every_reason_has_its_place_and_label() {
    for (index, reason) in StopReason::ALL.into_iter().enumerate() {
        assert_eq!(reason.index(), index);
        assert_eq!(reason.label(), reason.label().to_lowercase());
    }
    let labels: std::collections::HashSet<_> = StopReason::ALL.iter().map(|r| r.label()).collect();
    assert_eq!(labels.len(), StopReason::ALL.len());
}
