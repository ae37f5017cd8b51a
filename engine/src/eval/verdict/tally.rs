//! The suite's counts and recommendation, owned by the host: every case's
//! verdict counts toward `total`, its status and its tags, and the suite
//! recommendation is the most severe any case asks for
//! (`reject` > `defer` > `accept-now`).

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde_json::{Map, Value, json};

use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation, Verdict};
use crate::schema::packets::{self as record, EvaluationCounts, SummaryTrailer};

pub use crate::eval::verdict::status_names::{
    recommendation_from_name, recommendation_name, status_from_name, status_name,
};

fn severity(recommendation: Recommendation) -> u8 {
    match recommendation {
        Recommendation::AcceptNow => 0,
        Recommendation::Defer => 1,
        Recommendation::Reject => 2,
    }
}

/// Count keys only the host sets.
const RESERVED: &[&str] = &[
    "total",
    "passed",
    "failed",
    "errored",
    "blocked",
    "degraded",
    "unchecked",
    crate::eval::verdict::verdicts::ASSERTIONS_ERRORED,
];

/// One case as the terminal shows it.
#[derive(Debug, Clone)]
pub struct CaseLine {
    pub case_id: String,
    pub status: CaseStatus,
    pub summary: String,
}

/// Running counts over a suite's verdicts.
#[derive(Debug, Clone)]
pub struct Tally {
    counts: Map<String, Value>,
    recommendation: Recommendation,
    /// What the checked cases ask for (every case but the `unchecked` ones).
    checked: Recommendation,
    /// Each case's line, when kept (not for runs that print them as they go).
    cases: Vec<CaseLine>,
    keep_lines: bool,
    /// The total of the costs the cases reported (`None`: none did).
    cost_usd: Option<f64>,
}

/// The `costUsd` an evaluation reported at its top level. The body is
/// only picked apart when it names a cost at all (most fixture-backend
/// cases do not), so counting costs is free where there are none.
pub fn cost_of(body: &str) -> Option<f64> {
    static NAMED: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"costUsd\""));
    top_level(body, "costUsd", &NAMED)?.parse().ok()
}

/// The assertions of an evaluation that could not be carried out
/// (`assertionsErrored`, which the host writes when there are any).
pub fn assertions_errored_of(body: &str) -> u64 {
    use crate::eval::verdict::verdicts::ASSERTIONS_ERRORED;
    static NAMED: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(format!("\"{ASSERTIONS_ERRORED}\"").as_bytes()).into_owned());
    top_level(body, ASSERTIONS_ERRORED, &NAMED)
        .and_then(|raw| raw.parse().ok())
        .unwrap_or(0)
}

/// The JSON text of top-level member `key` of `body`, read only when the
/// body names it at all (`named` finds `"key"`, built once).
fn top_level(body: &str, key: &str, named: &Finder<'_>) -> Option<String> {
    named.find(body.as_bytes())?;
    let members = crate::json_members::Members::of(body)?;
    let (_, raw) = members.0.iter().find(|(k, _)| k == key)?;
    Some(raw.get().to_string())
}

impl Tally {
    /// The total cost the cases reported, when any did.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_usd
    }

    /// Counts start at zero for `total` and each declared key, in order.
    pub fn new(declared: &[String]) -> Self {
        let mut counts = Map::new();
        counts.insert("total".into(), json!(0));
        for key in declared {
            counts.insert(key.clone(), json!(0));
        }
        Self {
            counts,
            recommendation: Recommendation::AcceptNow,
            checked: Recommendation::AcceptNow,
            cases: Vec::new(),
            keep_lines: true,
            cost_usd: None,
        }
    }

    /// Counts only: no per-case line is kept, so memory does not grow with
    /// the suite.
    pub fn without_lines(declared: &[String]) -> Self {
        Self {
            keep_lines: false,
            ..Self::new(declared)
        }
    }

    /// Raises the recommendation to at least `floor` (an interrupted run is
    /// never `accept-now`).
    pub fn at_least(&mut self, floor: Recommendation) {
        if severity(floor) > severity(self.recommendation) {
            self.recommendation = floor;
        }
        if severity(floor) > severity(self.checked) {
            self.checked = floor;
        }
    }

    /// Counts `verdict`; returns the cost its case reported, if any.
    pub fn add(&mut self, verdict: &Verdict) -> Option<f64> {
        self.bump("total");
        let cost = cost_of(&verdict.body);
        if let Some(cost) = cost {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost);
        }
        self.bump(status_name(verdict.status));
        let errored = assertions_errored_of(&verdict.body);
        if errored > 0 {
            let entry = self
                .counts
                .entry(crate::eval::verdict::verdicts::ASSERTIONS_ERRORED)
                .or_insert(json!(0));
            *entry = json!(entry.as_u64().unwrap_or(0) + errored);
        }
        // A tag may not pose as `total` or a status: those counts are the host's.
        for tag in verdict
            .tags
            .iter()
            .filter(|t| !RESERVED.contains(&t.as_str()))
        {
            self.bump(tag);
        }
        if severity(verdict.recommendation) > severity(self.recommendation) {
            self.recommendation = verdict.recommendation;
        }
        if verdict.status != CaseStatus::Unchecked
            && severity(verdict.recommendation) > severity(self.checked)
        {
            self.checked = verdict.recommendation;
        }
        if self.keep_lines {
            self.cases.push(CaseLine {
                case_id: verdict.case_id.clone(),
                status: verdict.status,
                summary: verdict.summary.clone(),
            });
        }
        cost
    }

    /// A key that was not declared is still counted (nothing is hidden).
    fn bump(&mut self, key: &str) {
        let entry = self.counts.entry(key).or_insert(json!(0));
        *entry = json!(entry.as_u64().unwrap_or(0) + 1);
    }

    pub fn recommendation(&self) -> &'static str {
        recommendation_name(self.recommendation)
    }

    /// The recommendation of the checked cases alone (`unchecked` ones left
    /// out): `accept-now` here while [`Tally::recommendation`] is `defer`
    /// means only cases with nothing to check held the suite back (e.g. a
    /// step that just produces output for later steps).
    pub fn checked_recommendation(&self) -> &'static str {
        recommendation_name(self.checked)
    }

    /// Cases counted.
    pub fn total(&self) -> u64 {
        self.counts
            .get("total")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    pub fn counts(&self) -> &Map<String, Value> {
        &self.counts
    }

    pub fn cases(&self) -> &[CaseLine] {
        &self.cases
    }

    /// The summary packet's trailing fields (a run that was interrupted
    /// adds how far it got).
    pub fn trailer(&self, evaluated_at: String) -> SummaryTrailer {
        let count = |value: &Value| value.as_u64().unwrap_or(0);
        SummaryTrailer {
            evaluation_counts: EvaluationCounts {
                total: self.total(),
                by_key: self
                    .counts
                    .iter()
                    .filter(|(key, _)| *key != "total")
                    .map(|(key, value)| (key.clone(), count(value)))
                    .collect(),
            },
            recommendation: match self.recommendation {
                Recommendation::AcceptNow => record::Recommendation::AcceptNow,
                Recommendation::Defer => record::Recommendation::Defer,
                Recommendation::Reject => record::Recommendation::Reject,
            },
            evaluated_at,
            interrupted: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(status: CaseStatus, recommendation: Recommendation, tags: &[&str]) -> Verdict {
        Verdict {
            case_id: "c".into(),
            status,
            recommendation,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            summary: String::new(),
            body: "{}".into(),
        }
    }

    #[test]
    fn the_most_severe_recommendation_wins() {
        let mut tally = Tally::new(&["passed".into(), "failed".into()]);
        assert_eq!(tally.recommendation(), "accept-now");
        tally.add(&verdict(CaseStatus::Passed, Recommendation::AcceptNow, &[]));
        tally.add(&verdict(CaseStatus::Blocked, Recommendation::Defer, &[]));
        assert_eq!(tally.recommendation(), "defer");
        tally.add(&verdict(CaseStatus::Failed, Recommendation::Reject, &[]));
        tally.add(&verdict(
            CaseStatus::Passed,
            Recommendation::Defer,
            &["unstable"],
        ));
        assert_eq!(tally.recommendation(), "reject");
    }

    #[test]
    fn an_unchecked_case_is_counted_and_keeps_the_suite_from_accept_now() {
        let mut tally = Tally::new(&["passed".into(), "failed".into()]);
        tally.add(&verdict(CaseStatus::Passed, Recommendation::AcceptNow, &[]));
        tally.add(&verdict(
            CaseStatus::Unchecked,
            Recommendation::Defer,
            &["unchecked", "passed"],
        ));
        assert_eq!(tally.recommendation(), "defer");
        assert_eq!(tally.checked_recommendation(), "accept-now");
        let counts = tally.counts();
        assert_eq!(counts["unchecked"], 1, "{counts:?}");
        // A tag cannot pose as a status: `passed` counts the passed case only.
        assert_eq!(counts["passed"], 1, "{counts:?}");
        assert_eq!(status_name(CaseStatus::Unchecked), "unchecked");
        tally.add(&verdict(CaseStatus::Blocked, Recommendation::Defer, &[]));
        assert_eq!(tally.checked_recommendation(), "defer");
    }

    #[test]
    fn counts_keep_declared_order_and_add_the_rest() {
        let mut tally = Tally::new(&["passed".into(), "failed".into(), "trigger".into()]);
        tally.add(&verdict(
            CaseStatus::Passed,
            Recommendation::AcceptNow,
            &["trigger"],
        ));
        tally.add(&verdict(CaseStatus::Errored, Recommendation::Reject, &[]));
        let counts = tally.counts();
        let keys: Vec<&str> = counts.keys().map(String::as_str).collect();
        assert_eq!(keys, ["total", "passed", "failed", "trigger", "errored"]);
        assert_eq!(counts["total"], 2);
        assert_eq!(counts["failed"], 0);
        assert_eq!(counts["trigger"], 1);
        assert_eq!(counts["errored"], 1);
        assert_eq!(tally.cases().len(), 2);
    }

    #[test]
    fn the_cost_is_the_top_level_costusd_only() {
        assert_eq!(cost_of(r#"{"caseId":"a","costUsd":0.25}"#), Some(0.25));
        assert_eq!(cost_of(r#"{"caseId":"a"}"#), None);
        assert_eq!(cost_of(r#"{"costUsd":null}"#), None);
        assert_eq!(
            cost_of(r#"{"assertions":[{"costUsd":9.0}]}"#),
            None,
            "a judge's cost inside an assertion is not the case's"
        );
    }
}
