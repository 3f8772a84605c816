//! gRPC's status codes as the service config writes them.
//!
//! gRPC's status codes as the service config writes them (`"UNAVAILABLE"`
//! or `14`), and [`CodeSet`], the retryable codes of a policy.

use tonic::Code;

/// Every code, in the order of its number (`NAMES[n]` is code `n`'s name).
const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The code named `name` (upper case, as grpc-go and grpc-java read it).
pub(crate) fn code_named(name: &str) -> Option<Code> {
    let number = NAMES.iter().position(|known| *known == name)?;
    code_numbered(i64::try_from(number).ok()?)
}

/// The code numbered `number`, if there is one.
pub(crate) fn code_numbered(number: i64) -> Option<Code> {
    let number = i32::try_from(number).ok()?;
    let code = Code::from_i32(number);
    (code as i32 == number).then_some(code)
}

/// The name the service config gives `code`.
pub(crate) fn name_of(code: Code) -> &'static str {
    usize::try_from(code as i32)
        .ok()
        .and_then(|number| NAMES.get(number))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// A set of status codes: one bit per code number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct CodeSet(u32);

impl CodeSet {
    pub(crate) fn insert(&mut self, code: Code) {
        self.0 |= bit(code);
    }

    pub(crate) fn contains(self, code: Code) -> bool {
        self.0 & bit(code) != 0
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The codes in the set, by number.
    pub(crate) fn iter(self) -> impl Iterator<Item = Code> {
        (0..NAMES.len())
            .filter(move |number| self.0 & (1 << number) != 0)
            .filter_map(|number| code_numbered(number as i64))
    }
}

fn bit(code: Code) -> u32 {
    1u32.checked_shl(code as u32).unwrap_or(0)
}

#[cfg(test)]
mod tests;
