use super::*;

#[test]
fn the_service_of_a_path() {
    assert_eq!(service_of("/helloworld.Greeter/SayHello"), Some("helloworld.Greeter"));
    assert_eq!(service_of("/Greeter/"), Some("Greeter"));
    assert_eq!(service_of("helloworld.Greeter/SayHello"), None, "no leading slash");
    assert_eq!(service_of("/helloworld.Greeter"), None, "no method");
    assert_eq!(service_of("//SayHello"), None, "no service");
    assert_eq!(service_of("/a/b/c"), None, "a path of three parts");
}

/// The entries mapped by path find what `method_config` finds, for every
/// name of a config with several, and nothing for a name it lacks.
#[test]
fn entries_by_path_find_what_method_config_finds() {
    let config = ServiceConfig::from_json(
        r#"{"methodConfig": [
            {"name": [{"service": "e.E"}, {"service": "a.A"}], "timeout": "1s"},
            {"name": [{"service": "c.C"}], "timeout": "2s"},
            {"name": [{"service": "a.A", "method": "Z"}, {"service": "d.D", "method": "B"}], "timeout": "3s"},
            {"name": [{"service": "b.B"}, {"service": "a.A", "method": "M"}], "timeout": "4s"}
        ]}"#,
    )
    .unwrap();
    let by_path = config.map_entries(MethodConfig::timeout);
    let paths = [
        "/a.A/Z",
        "/a.A/M",
        "/a.A/Other",
        "/b.B/X",
        "/c.C/Y",
        "/d.D/B",
        "/d.D/A",
        "/e.E/Q",
        "/f.F/G",
        "/a.A",
        "",
    ];
    for path in paths {
        let expected = config.method_config(path).map(MethodConfig::timeout);
        assert_eq!(by_path.get(path).copied(), expected, "{path}");
    }
    assert_eq!(by_path.get("/a.A/Z"), Some(&Some(Duration::from_secs(3))));
    assert_eq!(by_path.get("/d.D/A"), None);
}
