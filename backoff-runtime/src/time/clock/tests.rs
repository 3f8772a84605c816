use super::*;

#[test]
fn timeline_round_trips() {
    let start = Instant::now();
    for clock in [Clock::StdOrVirtual, Clock::Std] {
        let timeline = Timeline::new(clock, Some(start));
        assert_eq!(timeline.clock(), clock);
        assert!(!timeline.started_at_first_failure());
        assert_eq!(
            timeline.elapsed_at(start + Duration::from_millis(1500)),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            timeline.elapsed_at(start - Duration::from_secs(1)),
            Some(Duration::ZERO)
        );
    }
    let mut unstarted = Timeline::new(Clock::Std, None);
    assert_eq!(unstarted.elapsed_at(start), None);
    let _ = unstarted.elapsed();
    assert!(unstarted.started_at_first_failure());
    assert_eq!(unstarted.clock(), Clock::Std);
}
