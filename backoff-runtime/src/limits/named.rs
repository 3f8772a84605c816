//! What every limit has, written once.
//!
//! The `name` builder and `get_name` getter (the `budget` label of its
//! metrics), `Default` as `new()`, and each limit trait's impls for a
//! reference, an `Arc` and a `Box` of one; and what every limiter that waits
//! has: `max_wait` and `get_max_wait`.

/// Writes a limit's `name` builder and `get_name` getter (the `budget`
/// label of its metrics), each under the doc given, over a field
/// `name: Option<&'static str>`.
macro_rules! name_methods {
    ($(#[doc = $name_doc:literal])* fn name; $(#[doc = $value_doc:literal])* fn get_name;) => {
        $(#[doc = $name_doc])*
        #[must_use]
        pub const fn name(mut self, name: &'static str) -> Self {
            self.name = Some(name);
            self
        }

        $(#[doc = $value_doc])*
        #[must_use]
        pub const fn get_name(&self) -> Option<&'static str> {
            self.name
        }
    };
}

pub(crate) use name_methods;

/// Writes a waiting limiter's `max_wait` builder and `get_max_wait`
/// getter, each under the doc given, over a field `max_wait: Duration`.
macro_rules! max_wait_methods {
    ($(#[doc = $set_doc:literal])* fn max_wait; $(#[doc = $get_doc:literal])* fn get_max_wait;) => {
        $(#[doc = $set_doc])*
        #[must_use]
        pub const fn max_wait(mut self, max_wait: core::time::Duration) -> Self {
            self.max_wait = max_wait;
            self
        }

        $(#[doc = $get_doc])*
        #[must_use]
        pub const fn get_max_wait(&self) -> core::time::Duration {
            self.max_wait
        }
    };
}

pub(crate) use max_wait_methods;

/// `impl Default` as the type's `const fn new()`.
macro_rules! default_is_new {
    ($($limit:ty),*) => {$(
        impl Default for $limit {
            fn default() -> Self {
                Self::new()
            }
        }
    )*};
}

pub(crate) use default_is_new;

/// Implements `$limit` for `&L`, `Arc<L>` (around a `Send` value: only then
/// is the `Arc` `Sync`) and `Box<L>`, each method forwarded to the limit
/// behind the pointer.
macro_rules! forward_to_pointee {
    ($limit:ident { $(fn $method:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $out:ty)?;)* }) => {
        crate::limits::named::forward_to_pointee!(@impl $limit, &L, [$(fn $method($($arg: $ty),*) $(-> $out)?;)*]);
        crate::limits::named::forward_to_pointee!(@impl $limit, std::sync::Arc<L>, [$(fn $method($($arg: $ty),*) $(-> $out)?;)*], Send);
        crate::limits::named::forward_to_pointee!(@impl $limit, Box<L>, [$(fn $method($($arg: $ty),*) $(-> $out)?;)*]);
    };
    (@impl $limit:ident, $pointer:ty, [$(fn $method:ident($($arg:ident: $ty:ty),*) $(-> $out:ty)?;)*] $(, $send:ident)?) => {
        impl<L: $limit $(+ $send)? + ?Sized> $limit for $pointer {
            $(
                #[cfg_attr(not(debug_assertions), inline(always))]
                fn $method(&self $(, $arg: $ty)*) $(-> $out)? {
                    (**self).$method($($arg),*)
                }
            )*
        }
    };
}

pub(crate) use forward_to_pointee;
