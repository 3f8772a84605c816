//! What every limit has, written once: the `name` builder and `name_value`
//! getter (the `budget` label of its metrics), and `Default` as `new()`.

/// Writes a limit's `name` builder and `name_value` getter (the `budget`
/// label of its metrics), each under the doc given, over a field
/// `name: Option<&'static str>`.
macro_rules! name_methods {
    ($(#[doc = $name_doc:literal])* fn name; $(#[doc = $value_doc:literal])* fn name_value;) => {
        $(#[doc = $name_doc])*
        #[must_use]
        pub const fn name(mut self, name: &'static str) -> Self {
            self.name = Some(name);
            self
        }

        $(#[doc = $value_doc])*
        #[must_use]
        pub const fn name_value(&self) -> Option<&'static str> {
            self.name
        }
    };
}

pub(crate) use name_methods;

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
