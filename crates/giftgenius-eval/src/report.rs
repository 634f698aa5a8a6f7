//! Runs every ranking over a judged set and prints one table (Markdown, so it pastes into the
//! README as it is), or the same as JSON, and with `--show` each request's top cards.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use giftgenius_catalog::meaning::Meaning;
use giftgenius_catalog::{Catalog, passes_hard_rules};
use serde::Serialize;

use crate::metrics::{Judgement, Summary, names_interest};
use crate::rankings::{Answer, Bm25Baseline, Embeddings, GiftGenius, Ranking};
use crate::sets::{Grade, JudgedSet};

/// The rankings compared, in the table's order: `catalog` carries the model's related words
/// (`Meaning::attach`), as the server's does.
pub fn rankings(catalog: &Arc<Catalog>, meaning: &Arc<Meaning>) -> Vec<Box<dyn Ranking>> {
    vec![
        Box::new(GiftGenius::new(catalog.clone())),
        Box::new(Bm25Baseline::new(catalog.clone())),
        Box::new(Embeddings::new(catalog.clone(), meaning.clone(), gift_cache().as_deref())),
    ]
}

/// Where the baseline keeps its gifts' embeddings between runs.
fn gift_cache() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(std::path::PathBuf::from(home).join(".cache/giftgenius/embeddings/eval-gifts.bin"))
}

/// One row of the table.
#[derive(Debug, Serialize)]
pub struct Row {
    pub ranking: &'static str,
    /// `None` while the ranking cannot run yet; `pending` says why.
    pub summary: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<&'static str>,
    /// Time to answer every request of the set (measured, never asserted).
    pub millis: f64,
}

/// One request's cards under one ranking, for `--show`.
#[derive(Debug, Serialize)]
pub struct Shown {
    pub request: String,
    pub note: String,
    pub ranking: &'static str,
    pub cards: Vec<ShownCard>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// This request's nDCG@6 (none where nothing graded can be shown), to find the worst ones.
    pub ndcg: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct ShownCard {
    pub id: String,
    pub title: String,
    pub grade: Grade,
    pub first_reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub set: &'static str,
    pub requests: usize,
    pub nothing_fits: usize,
    pub graded: usize,
    pub rows: Vec<Row>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<Shown>,
}

/// Judges `answer` to `request`.
fn judge(
    catalog: &Catalog,
    set_request: &crate::sets::Judged,
    ideal: &[Grade],
    answer: &Answer,
    reasons: bool,
) -> Judgement {
    let query = &set_request.query;
    let breaking = |id: &str| catalog.get(id).is_none_or(|gift| !passes_hard_rules(gift, query));
    Judgement {
        shown: answer.cards.iter().map(|c| set_request.grade(&c.id)).collect(),
        ideal: ideal.to_vec(),
        says_nothing_fits: answer.says_nothing_fits,
        first_reason_names_interest: (reasons && !query.interests.is_empty()).then(|| {
            answer
                .cards
                .iter()
                .filter(|c| c.first_reason.as_deref().is_some_and(|r| names_interest(r, &query.interests)))
                .count()
        }),
        breaking_hard_rules: answer.cards.iter().filter(|c| breaking(&c.id)).count(),
    }
}

/// Runs every ranking over `set`; with `show`, keeps the first `show` cards of today's ranking
/// for each request.
pub fn run(set: &JudgedSet, catalog: &Arc<Catalog>, meaning: &Arc<Meaning>, show: Option<usize>) -> Report {
    let ideals: Vec<Vec<Grade>> = set.requests.iter().map(|r| r.ideal(catalog)).collect();
    let mut rows = Vec::new();
    let mut shown = Vec::new();
    for (k, ranking) in rankings(catalog, meaning).iter().enumerate() {
        let started = Instant::now();
        let answers = answers(set, ranking.as_ref());
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let judgements: Vec<Judgement> = set
            .requests
            .iter()
            .zip(&ideals)
            .zip(&answers)
            .map(|((request, ideal), answer)| judge(catalog, request, ideal, answer, ranking.gives_reasons()))
            .collect();
        rows.push(Row { ranking: ranking.name(), summary: Some(Summary::of(&judgements)), pending: None, millis });
        if let (0, Some(n)) = (k, show) {
            shown = set
                .requests
                .iter()
                .zip(answers)
                .zip(&judgements)
                .map(|((request, answer), judged)| {
                    let ndcg = crate::metrics::ndcg(&judged.shown, &judged.ideal, crate::metrics::K);
                    shown_cards(catalog, request, answer, n, ranking.name(), ndcg)
                })
                .collect();
        }
    }
    Report {
        set: set.name.as_str(),
        requests: set.requests.len(),
        nothing_fits: ideals.iter().filter(|ideal| ideal.first().is_none_or(|&g| g < crate::sets::GOOD)).count(),
        graded: set.graded(),
        rows,
        shown,
    }
}

/// `ranking`'s answer to every request of `set`, asked as `suggest_gifts` asks the ranking: the
/// normalized query, and beside it what the person said about the recipient (`about`), if anything.
fn answers(set: &JudgedSet, ranking: &dyn Ranking) -> Vec<Answer> {
    set.requests.iter().map(|r| ranking.answer(&r.query, r.input.about())).collect()
}

fn shown_cards(
    catalog: &Catalog,
    request: &crate::sets::Judged,
    answer: Answer,
    n: usize,
    ranking: &'static str,
    ndcg: Option<f64>,
) -> Shown {
    Shown {
        request: request.id.clone(),
        note: request.note.clone(),
        ranking,
        cards: answer
            .cards
            .into_iter()
            .take(n)
            .map(|card| ShownCard {
                title: catalog.get(&card.id).map(|g| g.title.to_string()).unwrap_or_default(),
                grade: request.grade(&card.id),
                first_reason: card.first_reason,
                id: card.id,
            })
            .collect(),
        notice: answer.notice,
        ndcg,
    }
}

const HEADER: [&str; 9] = [
    "ranking",
    "nDCG@6",
    "precision@6",
    "top card good or great",
    "unsuitable shown",
    "false empties",
    "honest empties",
    "first reason names an asked interest",
    "hard rules broken",
];

impl Report {
    /// The table, a line about the set and the time each ranking took, and the shown cards.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        out.push_str(&line(&HEADER.map(String::from)));
        out.push_str(&line(&HEADER.map(|_| "---".to_string())));
        for row in &self.rows {
            let cells: Vec<String> = match (&row.summary, row.pending) {
                (Some(s), _) => vec![
                    row.ranking.to_string(),
                    s.ndcg.map_or("—".into(), |v| format!("{v:.3}")),
                    s.precision.map_or("—".into(), |v| format!("{v:.3}")),
                    s.top_card_good.to_string(),
                    s.unsuitable_shown.to_string(),
                    s.false_empties.to_string(),
                    format!("{} of {}", s.honest_empties.n, s.honest_empties.of),
                    s.first_reason_names_interest.map_or("— (no reasons)".into(), |r| r.to_string()),
                    s.breaking_hard_rules.to_string(),
                ],
                (None, pending) => {
                    let mut cells = vec![row.ranking.to_string(), pending.unwrap_or("n/a").to_string()];
                    cells.resize(HEADER.len(), String::new());
                    cells
                }
            };
            out.push_str(&line(&cells));
        }
        let times: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.summary.is_some())
            .map(|r| format!("{} {:.1} ms", short(r.ranking), r.millis))
            .collect();
        let _ = writeln!(
            out,
            "\n{} set: {} requests ({} where nothing fits), {} grades above 0. Answered all in: {}.",
            self.set,
            self.requests,
            self.nothing_fits,
            self.graded,
            times.join(", ")
        );
        for shown in &self.shown {
            let ndcg = shown.ndcg.map(|v| format!("  nDCG@6 {v:.2}")).unwrap_or_default();
            let _ = writeln!(out, "\n{}: {}  [{}]{ndcg}", shown.request, shown.note, short(shown.ranking));
            if shown.cards.is_empty() {
                let _ = writeln!(out, "  (no cards) {}", shown.notice.as_deref().unwrap_or(""));
            }
            for (i, card) in shown.cards.iter().enumerate() {
                let reason = card.first_reason.as_deref().unwrap_or("");
                let _ = writeln!(out, "  {}. [{}] {} {}: {reason}", i + 1, card.grade, card.id, card.title);
            }
        }
        out
    }
}

/// A row's name up to its first space ("GiftGenius", "BM25").
fn short(name: &str) -> &str {
    name.split(' ').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sets::{SetName, load};

    #[test]
    fn the_report_has_a_row_per_ranking_with_the_embeddings_baseline() {
        let meaning = crate::model_for_tests();
        let catalog = Arc::new(meaning.attach(Catalog::builtin()));
        let set = load(SetName::Dev).unwrap();
        let report = run(&set, &catalog, &meaning, Some(2));
        let names: Vec<&str> = report.rows.iter().map(|r| r.ranking).collect();
        assert_eq!(
            names,
            [
                "GiftGenius (today's ranking)",
                "BM25 over title + description + tags, same hard rules",
                "embeddings alone (all-MiniLM-L6-v2, cosine, same hard rules)"
            ]
        );
        assert!(report.rows.iter().all(|r| r.summary.is_some()), "every ranking runs");
        assert_eq!(report.shown.len(), set.requests.len());
        assert!(report.shown.iter().all(|s| s.cards.len() <= 2));
        let text = report.text();
        assert!(text.contains("— (no reasons)"), "BM25 gives no reasons: {text}");
        let json = serde_json::to_value(&report).unwrap();
        for row in 0..3 {
            assert_eq!(json["rows"][row]["summary"]["breaking_hard_rules"], 0, "the hard rules hold: {row}");
        }
    }

    /// A ranking that notes the `about` it was asked with.
    struct Recording(std::sync::Mutex<Vec<Option<String>>>);

    impl Ranking for Recording {
        fn name(&self) -> &'static str {
            "recording"
        }
        fn gives_reasons(&self) -> bool {
            false
        }
        fn answer(&self, _query: &giftgenius_types::SuggestGiftsQuery, about: Option<&str>) -> Answer {
            self.0.lock().unwrap().push(about.map(str::to_string));
            Answer::default()
        }
    }

    #[test]
    fn each_ranking_is_asked_with_the_requests_about() {
        let json = r#"{"set": "dev", "about": "", "requests": [
            {"id": "a", "note": "", "input": {"relationship_type": "friend", "about": " always on her balcony "}, "grades": {}},
            {"id": "b", "note": "", "input": {"relationship_type": "friend"}, "grades": {}}]}"#;
        let set = crate::sets::parse(SetName::Dev, json).unwrap();
        let recording = Recording(Default::default());
        assert_eq!(answers(&set, &recording).len(), 2);
        assert_eq!(*recording.0.lock().unwrap(), [Some("always on her balcony".to_string()), None]);
    }
}
