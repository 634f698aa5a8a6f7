//! The judged sets as they are in the repository: they parse, every request is input
//! `suggest_gifts` accepts, every graded gift exists, and they cover what docs/quality.md says.

use std::collections::HashSet;

use giftgenius_catalog::Catalog;
use giftgenius_eval::sets::{SetName, load};
use giftgenius_types::{Occasion, RelationshipType};

#[test]
fn every_set_parses_and_agrees_with_the_catalog() {
    let catalog = Catalog::builtin();
    for name in SetName::ALL {
        let set = load(name).unwrap_or_else(|e| panic!("{e:#}"));
        let problems = set.problems(&catalog);
        assert!(problems.is_empty(), "{}: {problems:#?}", name.as_str());
    }
}

#[test]
fn the_sets_cover_what_the_rubric_promises() {
    for (name, at_least) in [(SetName::Dev, 80), (SetName::Heldout, 40)] {
        let set = load(name).unwrap();
        let requests = &set.requests;
        assert!(requests.len() >= at_least, "{}: {} requests", name.as_str(), requests.len());
        let relationships: HashSet<RelationshipType> = requests.iter().map(|r| r.input.relationship_type).collect();
        assert_eq!(relationships.len(), RelationshipType::ALL.len(), "{}: every relationship", name.as_str());
        let occasions: HashSet<Occasion> = requests.iter().filter_map(|r| r.input.occasion).collect();
        assert_eq!(occasions.len(), Occasion::ALL.len(), "{}: every occasion", name.as_str());
        let nothing = requests.iter().filter(|r| r.nothing_fits).count();
        assert!(nothing >= 5, "{}: {nothing} requests where nothing fits", name.as_str());
        // Spanish and Portuguese requests are marked "(es)" / "(pt)" in their note.
        let foreign = requests.iter().filter(|r| r.note.starts_with("(es)") || r.note.starts_with("(pt)")).count();
        assert!(foreign * 10 >= requests.len(), "{}: {foreign} in Spanish or Portuguese", name.as_str());
    }
}

#[test]
fn the_held_out_set_asks_for_other_people() {
    let dev = load(SetName::Dev).unwrap();
    let held = load(SetName::Heldout).unwrap();
    let dev_inputs: Vec<_> = dev.requests.iter().map(|r| &r.input).collect();
    for request in &held.requests {
        assert!(!dev_inputs.contains(&&request.input), "{} repeats a dev request", request.id);
    }
    let dev_ids: HashSet<&str> = dev.requests.iter().map(|r| r.id.as_str()).collect();
    assert!(held.requests.iter().all(|r| !dev_ids.contains(r.id.as_str())));
}
