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
