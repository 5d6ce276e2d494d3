//! Specs parse strictly and compile to one canonical body.

use super::grammars::*;
use super::*;

fn names(o: &Object) -> alloc::vec::Vec<&'static str> {
    o.fields.iter().map(|f| f.name).collect()
}

#[test]
fn each_create_grammar_has_the_contract_required_fields() {
    let required =
        |o: &Object| -> alloc::vec::Vec<&str> { o.fields.iter().filter(|f| f.required).map(|f| f.name).collect() };
    assert_eq!(required(&CONNECTION), ["type", "name", "bandwidth", "aSide", "zSide", "notifications"]);
    assert_eq!(required(&NETWORK), ["type", "name", "scope", "notifications"]);
    assert!(names(&ACCESS_POINT).contains(&"virtualDevice") && names(&ACCESS_POINT).contains(&"interface"));
    assert!(names(&SELECTOR).contains(&"virtualDevice") && names(&SELECTOR_NETWORK).contains(&"type"));
}
