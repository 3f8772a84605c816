//! Whether a key was given, as a type.
//!
//! A future keeps what a key needs (a budget's charge, an admission's
//! guard) only when the key was given. Without it the place is [`Nothing`]:
//! no field, no drop glue, no branch on the happy path.

/// A key given ([`On`]) or not ([`Off`]).
pub trait Flag {
    /// Whether the key was given.
    const ON: bool;
    /// Where a `T` the key needs is kept: an `Option<T>`, or [`Nothing`].
    type Keep<T>: Slot<T>;
    /// [`On`] when this key or `B` was given.
    type Or<B: Flag>: Flag;
}

/// The key was given.
#[derive(Clone, Copy, Debug)]
pub struct On;

/// The key was not given.
#[derive(Clone, Copy, Debug)]
pub struct Off;

impl Flag for On {
    const ON: bool = true;
    type Keep<T> = Option<T>;
    type Or<B: Flag> = On;
}

impl Flag for Off {
    const ON: bool = false;
    type Keep<T> = Nothing;
    type Or<B: Flag> = B;
}

/// A place that may hold a `T`.
pub trait Slot<T> {
    /// A place holding `value`.
    fn of(value: Option<T>) -> Self;
    /// What it holds, taken out.
    fn take(&mut self) -> Option<T>;
    /// What it holds, lent.
    fn get(&mut self) -> Option<&mut T>;
}

impl<T> Slot<T> for Option<T> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn of(value: Option<T>) -> Self {
        value
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take(&mut self) -> Option<T> {
        Option::take(self)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(&mut self) -> Option<&mut T> {
        self.as_mut()
    }
}

/// The place of a key not given: it never holds anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Nothing;

impl<T> Slot<T> for Nothing {
    /// Drops `value`: a key not given never makes one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn of(value: Option<T>) -> Self {
        drop(value);
        Nothing
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take(&mut self) -> Option<T> {
        None
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(&mut self) -> Option<&mut T> {
        None
    }
}

/// Where a `T` the key `F` needs is kept.
pub(crate) type Kept<F, T> = <F as Flag>::Keep<T>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_keeps_what_it_is_given_and_a_key_not_given_keeps_nothing() {
        let mut given: Kept<On, u8> = Slot::of(Some(3));
        assert_eq!(given.get().copied(), Some(3));
        assert_eq!(given.take(), Some(3));
        assert_eq!(given.take(), None);
        let mut not_given: Kept<Off, u8> = Slot::of(Some(3));
        assert_eq!(Slot::<u8>::get(&mut not_given), None);
        assert_eq!(Slot::<u8>::take(&mut not_given), None);
        const { assert!(<<Off as Flag>::Or<On> as Flag>::ON && <<On as Flag>::Or<Off> as Flag>::ON) };
        const { assert!(!<<Off as Flag>::Or<Off> as Flag>::ON) };
    }
}
