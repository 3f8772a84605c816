//! The unit error of an attempt that timed out.
//!
//! The unit error the loop makes for an attempt that returned none: a
//! timed-out attempt ([`Elapsed`](crate::Elapsed)). A refused attempt's
//! error, [`Refused`](crate::limits::Refused), carries the limiter's name and is
//! written out in `limits/admission.rs`.

/// A unit error type: its docs and attributes, its `Display` message, and
/// the `std::io::ErrorKind` it becomes.
macro_rules! stand_in_error {
    ($(#[$attr:meta])* $name:ident, $message:literal, $io_kind:ident) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub struct $name;

        impl $name {
            #[doc = concat!("A `", stringify!($name), "` error (for tests and for converting by hand).")]
            ///
            /// ```
            #[doc = concat!("assert_eq!(backoff_runtime::", stringify!($name), "::new(), backoff_runtime::", stringify!($name), "::default());")]
            /// ```
            #[must_use]
            pub const fn new() -> Self {
                $name
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str($message)
            }
        }

        impl std::error::Error for $name {}

        impl From<$name> for std::io::Error {
            fn from(error: $name) -> Self {
                std::io::Error::new(std::io::ErrorKind::$io_kind, error)
            }
        }
    };
}

pub(crate) use stand_in_error;
