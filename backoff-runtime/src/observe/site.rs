//! Where a retry loop runs: its site.
//!
//! Each retried function's static site (its name, made once, and its metric
//! keys), or a name given to the builder. Not public: the attribute's expansion
//! names it through `__private`.

use std::sync::atomic::AtomicU32;

mod names;

/// One retried function's place in metrics and events: how its name is
/// made, and the name once made. The `#[retry]` expansion makes one
/// `static` per function.
///
pub struct CallSite {
    function: &'static str,
    module: &'static str,
    explicit: Option<&'static str>,
    /// Its slot in the names' table, plus one; zero until the name is
    /// first needed.
    slot: AtomicU32,
}

/// A call site's name once made, and (feature `metrics`) the keys of its
/// series, built once: recording then hashes nothing.
pub(crate) struct Resolved {
    pub(crate) name: &'static str,
    #[cfg(feature = "metrics")]
    pub(crate) keys: crate::observe::keys::Keys,
}

impl Resolved {
    /// The name and its keys, kept for the life of the program (one small
    /// allocation per call site or plain-builder name).
    pub(crate) fn leak(name: &'static str) -> &'static Resolved {
        Box::leak(Box::new(Resolved {
            name,
            #[cfg(feature = "metrics")]
            keys: crate::observe::keys::Keys::new(name),
        }))
    }
}

impl core::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallSite")
            .field("function", &self.function)
            .field("module", &self.module)
            .finish_non_exhaustive()
    }
}

impl CallSite {
    /// The site of the function `function` in the module `module`
    /// (`module_path!()`).
    #[must_use]
    pub const fn new(function: &'static str, module: &'static str) -> Self {
        CallSite {
            function,
            module,
            explicit: None,
            slot: AtomicU32::new(0),
        }
    }

    /// A site with the name written on the attribute (`name = "..."`).
    #[must_use]
    pub const fn named(name: &'static str) -> Self {
        CallSite {
            function: name,
            module: "",
            explicit: Some(name),
            slot: AtomicU32::new(0),
        }
    }

    /// The name, made on first use: the explicit one, or the path of the
    /// type of `self` (`self_type`, generics dropped) or of the module,
    /// then the function. Made once per site.
    pub(crate) fn resolve(&'static self, self_type: Option<fn() -> &'static str>) -> &'static Resolved {
        names::resolved(&self.slot, || {
            let name = if let Some(name) = self.explicit {
                name
            } else {
                let owner = match self_type {
                    Some(type_name) => without_generics(type_name()),
                    None => self.module,
                };
                if owner.is_empty() {
                    self.function
                } else {
                    Box::leak(format!("{owner}::{}", self.function).into_boxed_str())
                }
            };
            Resolved::leak(name)
        })
    }
}

/// `path::Type<Args>` without `<Args>`: every instance of a generic type is
/// one site.
fn without_generics(type_name: &str) -> &str {
    type_name.split('<').next().unwrap_or(type_name)
}

/// Where a retry loop runs: a function's static [`CallSite`] (the
/// attribute; with the type of `self` for a method), or only a name (the
/// plain builder's `.name(...)`).
///
#[derive(Clone, Copy, Debug)]
pub enum Site {
    /// A free function's (or an associated function's) static site.
    Static(&'static CallSite),
    /// A method's static site and the name of the type of its `self`.
    Method(&'static CallSite, fn() -> &'static str),
    /// A name only.
    Named(&'static str),
}

impl Site {
    /// The function's name, as metrics, tracing and events report it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Site::Static(site) => site.resolve(None).name,
            Site::Method(site, self_type) => site.resolve(Some(self_type)).name,
            Site::Named(name) => name,
        }
    }
}

#[cfg(test)]
mod tests;
