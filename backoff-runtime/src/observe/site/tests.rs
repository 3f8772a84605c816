use super::{CallSite, Site};

/// A site is named by its path, or by the name written on the attribute.
#[test]
fn a_site_is_named_by_its_path_or_its_name() {
    static FREE: CallSite = CallSite::new("fetch", "my_app::users");
    assert_eq!(Site::Static(&FREE).name(), "my_app::users::fetch");
    static NAMED: CallSite = CallSite::named("users.fetch");
    assert_eq!(Site::Static(&NAMED).name(), "users.fetch");
    assert_eq!(Site::Named("fetch").name(), "fetch");
}
