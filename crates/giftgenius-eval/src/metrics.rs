//! The quality measures, as pure functions of graded lists; `docs/quality.md` defines each.

use serde::Serialize;

use crate::sets::{GOOD, Grade};

/// The cut-off: `suggest_gifts` shows six cards unless asked for another number.
pub const K: usize = 6;

/// Discounted cumulative gain of the first `k` grades: Σ (2^grade − 1) / log2(rank + 1), rank
/// counted from 1. The exponential gain makes a great gift worth more than two good ones.
pub fn dcg(grades: &[Grade], k: usize) -> f64 {
    grades.iter().take(k).enumerate().map(|(i, &g)| (f64::from(1u32 << g) - 1.0) / ((i + 2) as f64).log2()).sum()
}

/// nDCG@k: the DCG of what was shown over the DCG of the best answer possible, made of `ideal`
/// (the grades of every gift the hard rules allow, in any order). `None` when no graded gift
/// can be shown at all: there is nothing to rank, and `Summary::honest_empties` judges those.
pub fn ndcg(shown: &[Grade], ideal: &[Grade], k: usize) -> Option<f64> {
    let mut best = ideal.to_vec();
    best.sort_unstable_by(|a, b| b.cmp(a));
    let best = dcg(&best, k);
    (best > 0.0).then(|| dcg(shown, k) / best)
}

/// Precision@k: the share of the first `k` places holding a good or great gift (an empty place
/// counts as not good, so a short answer cannot score more than it shows).
pub fn precision(shown: &[Grade], k: usize) -> f64 {
    shown.iter().take(k).filter(|&&g| g >= GOOD).count() as f64 / k as f64
}

/// Whether a card's reason names one of the asked interests as the person said it (the query's
/// trimmed, lower-cased interest appears in the reason, case aside).
pub fn names_interest(reason: &str, interests: &[String]) -> bool {
    let reason = reason.to_lowercase();
    interests.iter().any(|interest| !interest.trim().is_empty() && reason.contains(&interest.trim().to_lowercase()))
}

/// One ranking's answer to one judged request, in grades.
#[derive(Debug, Clone, Default)]
pub struct Judgement {
    /// The grades of the cards shown, in order.
    pub shown: Vec<Grade>,
    /// The grades of every gift the hard rules allow (the best answer possible is made of them).
    pub ideal: Vec<Grade>,
    /// The answer said nothing fits (the `no_matches` notice).
    pub says_nothing_fits: bool,
    /// Of the cards shown, how many have a first reason naming an asked interest: `None` when the
    /// request gave no interests or the ranking gives no reasons.
    pub first_reason_names_interest: Option<usize>,
    /// Cards shown that break a hard rule (budget, age, stock): must stay 0.
    pub breaking_hard_rules: usize,
}

impl Judgement {
    /// Nothing the hard rules allow is good: the honest answer is "nothing fits".
    pub fn nothing_fits(&self) -> bool {
        self.ideal.iter().all(|&g| g < GOOD)
    }
}

/// `n` of `of`, shown with its percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Ratio {
    pub n: usize,
    pub of: usize,
}

impl Ratio {
    pub fn share(self) -> Option<f64> {
        (self.of > 0).then(|| self.n as f64 / self.of as f64)
    }
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.share() {
            Some(share) => write!(f, "{} of {} ({:.0} %)", self.n, self.of, share * 100.0),
            None => write!(f, "0 of 0"),
        }
    }
}

/// One ranking over a whole set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Mean nDCG@6 over the requests where something graded can be shown.
    pub ndcg: Option<f64>,
    /// Mean precision@6 over the requests where a good gift can be shown.
    pub precision: Option<f64>,
    /// Requests whose first card is good or great, of those where a good gift can be shown.
    pub top_card_good: Ratio,
    /// Cards graded 0, of all cards shown.
    pub unsuitable_shown: Ratio,
    /// Empty answers while a good gift passes the hard rules.
    pub false_empties: usize,
    /// Of the requests where nothing good can be shown, those answered empty or with the
    /// "nothing fits" notice.
    pub honest_empties: Ratio,
    /// Cards whose first reason names an asked interest, of the cards shown for requests with
    /// interests; `None` for a ranking that gives no reasons.
    pub first_reason_names_interest: Option<Ratio>,
    pub breaking_hard_rules: usize,
}

impl Summary {
    pub fn of(judgements: &[Judgement]) -> Summary {
        let mean = |values: Vec<f64>| (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        let fitting: Vec<&Judgement> = judgements.iter().filter(|j| !j.nothing_fits()).collect();
        let not_fitting: Vec<&Judgement> = judgements.iter().filter(|j| j.nothing_fits()).collect();
        let with_reasons: Vec<(&Judgement, usize)> =
            judgements.iter().filter_map(|j| Some((j, j.first_reason_names_interest?))).collect();
        Summary {
            ndcg: mean(judgements.iter().filter_map(|j| ndcg(&j.shown, &j.ideal, K)).collect()),
            precision: mean(fitting.iter().map(|j| precision(&j.shown, K)).collect()),
            top_card_good: Ratio {
                n: fitting.iter().filter(|j| j.shown.first().is_some_and(|&g| g >= GOOD)).count(),
                of: fitting.len(),
            },
            unsuitable_shown: Ratio {
                n: judgements.iter().flat_map(|j| &j.shown).filter(|&&g| g == 0).count(),
                of: judgements.iter().map(|j| j.shown.len()).sum(),
            },
            false_empties: fitting.iter().filter(|j| j.shown.is_empty()).count(),
            honest_empties: Ratio {
                n: not_fitting.iter().filter(|j| j.shown.is_empty() || j.says_nothing_fits).count(),
                of: not_fitting.len(),
            },
            first_reason_names_interest: (!with_reasons.is_empty()).then(|| Ratio {
                n: with_reasons.iter().map(|(_, n)| n).sum(),
                of: with_reasons.iter().map(|(j, _)| j.shown.len()).sum(),
            }),
            breaking_hard_rules: judgements.iter().map(|j| j.breaking_hard_rules).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn dcg_discounts_by_the_log_of_the_rank() {
        // 7/log2(2) + 3/log2(3) + 0/log2(4) + 1/log2(5), by hand: 7 + 1.892789 + 0 + 0.430677.
        assert!(close(dcg(&[3, 2, 0, 1], K), 9.323466));
        assert_eq!(dcg(&[], K), 0.0);
        // Only the first k count.
        assert_eq!(dcg(&[0, 0, 0, 0, 0, 0, 3], K), 0.0);
    }

    #[test]
    fn ndcg_compares_with_the_best_order_of_what_could_be_shown() {
        // Shown 2,3,0,1 against the ideal 3,2,1:
        // (3 + 7/1.584963 + 0 + 1/2.321928) / (7 + 3/1.584963 + 1/2) = 7.847185 / 9.392789.
        assert!(close(ndcg(&[2, 3, 0, 1], &[1, 3, 2], K).unwrap(), 0.835448));
        assert!(close(ndcg(&[3, 2, 1], &[2, 1, 3], K).unwrap(), 1.0));
        // The one great gift third: 7/log2(4) over 7.
        assert!(close(ndcg(&[0, 0, 3], &[3], K).unwrap(), 0.5));
        assert_eq!(ndcg(&[], &[3, 2], K), Some(0.0), "an empty answer when gifts fit scores 0");
        assert_eq!(ndcg(&[0, 0], &[0, 0], K), None, "nothing graded can be shown: no nDCG");
        assert_eq!(ndcg(&[], &[], K), None);
    }

    #[test]
    fn precision_counts_good_and_great_in_the_first_six_places() {
        assert!(close(precision(&[3, 2, 1, 0, 2, 3], K), 4.0 / 6.0));
        assert!(close(precision(&[3], K), 1.0 / 6.0), "empty places are not good");
        assert!(close(precision(&[2, 2, 2, 2, 2, 2, 3, 3], K), 1.0), "the seventh is past the cut");
        assert_eq!(precision(&[], K), 0.0);
    }

    #[test]
    fn a_reason_names_an_interest_as_said() {
        let asked = ["hip hop".to_string(), "craft beer".to_string()];
        assert!(names_interest("For their Hip Hop: a turntable", &asked));
        assert!(!names_interest("Matches their interest in hip (its description mentions 'hip')", &asked));
        assert!(!names_interest("Well inside the budget", &asked));
        assert!(!names_interest("anything", &[]));
    }

    fn judged(shown: &[Grade], ideal: &[Grade]) -> Judgement {
        Judgement { shown: shown.to_vec(), ideal: ideal.to_vec(), ..Judgement::default() }
    }

    #[test]
    fn empties_are_false_when_a_good_gift_passes_and_honest_when_none_does() {
        let judgements = [
            judged(&[], &[3, 1]),                                        // false empty
            judged(&[], &[1, 1]),                                        // honest: empty
            Judgement { says_nothing_fits: true, ..judged(&[1], &[1]) }, // honest: the notice
            judged(&[0, 1], &[1]),                                       // dishonest: two weak cards, no notice
            judged(&[2], &[2, 2]),                                       // fits, shown
        ];
        let summary = Summary::of(&judgements);
        assert_eq!(summary.false_empties, 1);
        assert_eq!(summary.honest_empties, Ratio { n: 2, of: 3 });
        assert_eq!(summary.top_card_good, Ratio { n: 1, of: 2 });
        assert_eq!(summary.unsuitable_shown, Ratio { n: 1, of: 4 });
    }

    #[test]
    fn the_summary_averages_over_the_requests_each_measure_is_about() {
        let judgements = [
            Judgement { first_reason_names_interest: Some(1), ..judged(&[3, 0], &[3, 2]) },
            Judgement { first_reason_names_interest: Some(2), ..judged(&[2, 2], &[2, 2]) },
            judged(&[0], &[]), // nothing graded: no nDCG, no precision, but its card is unsuitable
        ];
        let summary = Summary::of(&judgements);
        // nDCG: (7/(7 + 3/1.584963) = 0.787155 + 1.0) / 2.
        assert!(close(summary.ndcg.unwrap(), (7.0 / (7.0 + 3.0 / 3f64.log2()) + 1.0) / 2.0));
        assert!(close(summary.precision.unwrap(), (1.0 / 6.0 + 2.0 / 6.0) / 2.0));
        assert_eq!(summary.unsuitable_shown, Ratio { n: 2, of: 5 });
        assert_eq!(summary.first_reason_names_interest, Some(Ratio { n: 3, of: 4 }));
        assert_eq!(Summary::of(&[judged(&[2], &[2])]).first_reason_names_interest, None);
    }

    #[test]
    fn a_ratio_shows_its_share() {
        assert_eq!(Ratio { n: 35, of: 148 }.to_string(), "35 of 148 (24 %)");
        assert_eq!(Ratio { n: 0, of: 0 }.to_string(), "0 of 0");
    }
}
