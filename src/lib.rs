//! The documentation's doctests.
//!
//! Every Rust block of README.md and docs/*.md
//! is compiled, and run unless marked `no_run`, by `cargo test --workspace`.
//! Nothing here is public API; the package is never published.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[doc = include_str!("../docs/http.md")]
#[cfg(doctest)]
pub struct HttpDoctests;

#[doc = include_str!("../docs/observability.md")]
#[cfg(doctest)]
pub struct ObservabilityDoctests;

#[doc = include_str!("../docs/integration.md")]
#[cfg(doctest)]
pub struct IntegrationDoctests;

#[doc = include_str!("../docs/testing.md")]
#[cfg(doctest)]
pub struct TestingDoctests;

#[doc = include_str!("../docs/jitter-and-budgets.md")]
#[cfg(doctest)]
pub struct JitterAndBudgetsDoctests;

#[doc = include_str!("../docs/breakers-and-cooldowns.md")]
#[cfg(doctest)]
pub struct BreakersAndCooldownsDoctests;

#[doc = include_str!("../docs/annotate-crate.md")]
#[cfg(doctest)]
pub struct AnnotateCrateDoctests;

#[doc = include_str!("../docs/services.md")]
#[cfg(doctest)]
pub struct ServicesDoctests;

#[doc = include_str!("../docs/settings.md")]
#[cfg(all(doctest, feature = "serde"))]
pub struct SettingsDoctests;

#[doc = include_str!("../docs/chaos.md")]
#[cfg(all(doctest, feature = "chaos"))]
pub struct ChaosDoctests;
