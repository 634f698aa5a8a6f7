//! The judged request sets: each request as a model would send `suggest_gifts`, with the gifts
//! of the built-in catalog a human adviser graded for it by `docs/quality.md`'s rubric.

use std::collections::{BTreeMap, HashSet};

use anyhow::{Context, Result, bail};
use giftgenius_arguments::parse_args;
use giftgenius_catalog::{Catalog, passes_hard_rules};
use giftgenius_types::{SuggestGiftsInput, SuggestGiftsQuery};
use serde::Deserialize;
use serde_json::{Map, Value};

/// 0 unsuitable, 1 plausible but weak, 2 good, 3 great (`docs/quality.md`).
pub type Grade = u8;
pub const MAX_GRADE: Grade = 3;
/// The lowest grade of a good suggestion: what precision, the top card and false empties count.
pub const GOOD: Grade = 2;

/// Which set to run. The held-out one is for the final check of a change only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SetName {
    Dev,
    Heldout,
}

impl SetName {
    pub const ALL: [SetName; 2] = [SetName::Dev, SetName::Heldout];

    pub const fn as_str(self) -> &'static str {
        match self {
            SetName::Dev => "dev",
            SetName::Heldout => "heldout",
        }
    }

    /// The file, compiled in so the harness runs from anywhere (an edit rebuilds this crate only).
    const fn json(self) -> &'static str {
        match self {
            SetName::Dev => include_str!("../sets/dev.json"),
            SetName::Heldout => include_str!("../sets/heldout.json"),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    set: String,
    about: String,
    requests: Vec<RawRequest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    id: String,
    note: String,
    /// The arguments exactly as a model would pass them.
    input: Map<String, Value>,
    #[serde(default)]
    nothing_fits: bool,
    grades: BTreeMap<String, Grade>,
}

/// A loaded set: every request already parsed the way `suggest_gifts` parses its arguments.
#[derive(Debug)]
pub struct JudgedSet {
    pub name: SetName,
    pub about: String,
    pub requests: Vec<Judged>,
}

/// One judged request.
#[derive(Debug)]
pub struct Judged {
    pub id: String,
    /// Who the gift is for, in the words of the person asking (for people reading the output).
    pub note: String,
    pub input: SuggestGiftsInput,
    /// The query `suggest_gifts` runs for `input`.
    pub query: SuggestGiftsQuery,
    /// The writer's intent: nothing in the catalog suits this person. `JudgedSet::problems`
    /// checks it against the grades and the hard rules.
    pub nothing_fits: bool,
    /// Gift id → grade; a gift not listed is graded 0.
    pub grades: BTreeMap<String, Grade>,
}

impl Judged {
    pub fn grade(&self, gift_id: &str) -> Grade {
        self.grades.get(gift_id).copied().unwrap_or(0)
    }

    /// The grades of the gifts the hard rules let `suggest_gifts` show, best first: what an
    /// ideal answer is made of.
    pub fn ideal(&self, catalog: &Catalog) -> Vec<Grade> {
        let mut ideal: Vec<Grade> = catalog
            .gifts()
            .iter()
            .filter(|gift| passes_hard_rules(gift, &self.query))
            .map(|gift| self.grade(&gift.id))
            .filter(|&grade| grade > 0)
            .collect();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        ideal
    }
}

/// Loads a set; a request `suggest_gifts` would refuse, a grade above 3 or a repeated id is an
/// error naming the request.
pub fn load(name: SetName) -> Result<JudgedSet> {
    parse(name, name.json())
}

/// Parses a set from its JSON (`load` with the file compiled in; tests with their own).
pub(crate) fn parse(name: SetName, json: &str) -> Result<JudgedSet> {
    let file: File =
        serde_json::from_str(json).with_context(|| format!("the {} set is not valid JSON", name.as_str()))?;
    if file.set != name.as_str() {
        bail!("the {} set's file says it is the {:?} set", name.as_str(), file.set);
    }
    let mut ids = HashSet::new();
    let mut requests = Vec::with_capacity(file.requests.len());
    for raw in file.requests {
        if !ids.insert(raw.id.clone()) {
            bail!("{}: the id is used twice", raw.id);
        }
        let input: SuggestGiftsInput = parse_args(&raw.input).map_err(|errors| {
            let said: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect();
            anyhow::anyhow!("{}: suggest_gifts would refuse the input ({})", raw.id, said.join("; "))
        })?;
        if let Some((gift, grade)) = raw.grades.iter().find(|(_, g)| **g > MAX_GRADE) {
            bail!("{}: {gift} is graded {grade}; grades go from 0 to {MAX_GRADE}", raw.id);
        }
        let query = input.normalize();
        requests.push(Judged {
            id: raw.id,
            note: raw.note,
            input,
            query,
            nothing_fits: raw.nothing_fits,
            grades: raw.grades,
        });
    }
    Ok(JudgedSet { name, about: file.about, requests })
}

impl JudgedSet {
    /// What disagrees with `catalog`: a graded id it does not hold, or a request marked
    /// `nothing_fits` while a gift graded good passes the hard rules (or the other way round).
    pub fn problems(&self, catalog: &Catalog) -> Vec<String> {
        let mut problems = Vec::new();
        for request in &self.requests {
            for id in request.grades.keys().filter(|id| catalog.get(id).is_none()) {
                problems.push(format!("{}: {id} is not in the catalog", request.id));
            }
            let fits = request.ideal(catalog).first().is_some_and(|&best| best >= GOOD);
            if fits == request.nothing_fits {
                let said = if request.nothing_fits { "says nothing fits" } else { "expects a good gift" };
                problems.push(format!(
                    "{}: {said}, but {} gift graded {GOOD} or more passes the hard rules",
                    request.id,
                    if fits { "a" } else { "no" }
                ));
            }
        }
        problems
    }

    /// How many grades above 0 the set holds.
    pub fn graded(&self) -> usize {
        self.requests.iter().map(|r| r.grades.values().filter(|&&g| g > 0).count()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(request: &str) -> Result<JudgedSet> {
        parse(SetName::Dev, &format!(r#"{{"set": "dev", "about": "", "requests": [{request}]}}"#))
    }

    #[test]
    fn a_request_is_parsed_as_suggest_gifts_parses_it() {
        let set = one(r#"{"id": "a", "note": "", "input": {"relationship_type": "friend", "interests": [" Tea "], "budget_max": 20}, "grades": {"hh-008": 3}}"#)
            .unwrap();
        let request = &set.requests[0];
        assert_eq!(request.query.interests, ["tea"]);
        assert_eq!(request.grade("hh-008"), 3);
        assert_eq!(request.grade("hh-001"), 0, "ungraded is 0");
    }

    #[test]
    fn input_suggest_gifts_would_refuse_is_an_error_naming_the_request() {
        for input in [
            r#"{"relationship_type": "cousin"}"#,
            r#"{"relationship_type": "friend", "age": 130}"#,
            r#"{"relationship_type": "friend", "budget_min": 50, "budget_max": 20}"#,
            r#"{"relationship_type": "friend", "mood": "happy"}"#,
        ] {
            let error =
                one(&format!(r#"{{"id": "bad-1", "note": "", "input": {input}, "grades": {{}}}}"#)).unwrap_err();
            assert!(error.to_string().starts_with("bad-1: suggest_gifts would refuse"), "{input}: {error}");
        }
    }

    #[test]
    fn a_request_may_say_about_the_recipient_as_a_model_would() {
        let set = one(r#"{"id": "a", "note": "", "input": {"relationship_type": "friend", "about": "  just moved into a flat with a balcony "}, "grades": {}},
                        {"id": "b", "note": "", "input": {"relationship_type": "friend", "about": "   "}, "grades": {}}"#)
            .unwrap();
        assert_eq!(set.requests[0].input.about(), Some("just moved into a flat with a balcony"));
        assert_eq!(set.requests[1].input.about(), None, "blank is absent");
        // The query the grades are judged against never carries it (it is what the model reads back).
        assert!(!serde_json::to_string(&set.requests[0].query).unwrap().contains("balcony"));
        for about in [format!("{:?}", "x".repeat(301)), r#""two\nlines""#.to_string()] {
            let input = format!(r#"{{"relationship_type": "friend", "about": {about}}}"#);
            let error = one(&format!(r#"{{"id": "bad-about", "note": "", "input": {input}, "grades": {{}}}}"#))
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("bad-about: suggest_gifts would refuse the input (about: "), "{error}");
        }
    }

    #[test]
    fn a_grade_above_three_or_a_repeated_id_is_an_error() {
        let high = one(r#"{"id": "a", "note": "", "input": {"relationship_type": "friend"}, "grades": {"hh-001": 4}}"#);
        assert!(high.unwrap_err().to_string().contains("graded 4"));
        let request = r#"{"id": "a", "note": "", "input": {"relationship_type": "friend"}, "grades": {}}"#;
        let twice = one(&format!("{request}, {request}"));
        assert!(twice.unwrap_err().to_string().contains("used twice"));
    }

    #[test]
    fn problems_name_unknown_gifts_and_a_wrong_nothing_fits() {
        let catalog = Catalog::builtin();
        let set = one(
            r#"{"id": "a", "note": "", "input": {"relationship_type": "friend", "budget_max": 5}, "grades": {"hh-001": 3, "no-such": 1}},
               {"id": "b", "note": "", "input": {"relationship_type": "friend"}, "nothing_fits": true, "grades": {"hh-001": 3}}"#,
        )
        .unwrap();
        let problems = set.problems(&catalog);
        assert!(problems.contains(&"a: no-such is not in the catalog".to_string()), "{problems:?}");
        // hh-001 costs $68: over a's budget, so a expects a good gift it cannot have.
        assert!(problems.iter().any(|p| p.starts_with("a: expects a good gift, but no gift")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("b: says nothing fits, but a gift")), "{problems:?}");
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}
