//! A scored evaluation ([`super::Preset::evaluate`]'s answer) and what its
//! status asks of the suite recommendation.

use serde_json::{Map, Value};

#[cfg(doc)]
use super::Preset;
use super::verdict_text::{body_text, keeps_insertion_order};
use super::{CaseStatus, Recommendation};

/// A scored evaluation.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub case_id: String,
    pub status: CaseStatus,
    /// What this case asks of the suite recommendation (the host takes the
    /// most severe over all cases).
    pub recommendation: Recommendation,
    /// Extra `evaluationCounts` keys this case counts toward.
    pub tags: Vec<String>,
    /// One line: why this status.
    pub summary: String,
    /// The scored evaluation written to the summary packet.
    pub body: Value,
    /// How many of `body`'s first members the evaluation's own, unchanged
    /// ([`Verdict::carrying`]).
    pub(super) carried: usize,
    /// The body as JSON text without `status` and `summary`, when the
    /// preset wrote it ([`Verdict::written`]).
    pub(super) written: Option<String>,
}

impl Verdict {
    /// A verdict whose recommendation follows its status: `passed` →
    /// accept-now, `blocked`/`degraded`/`unchecked` → defer,
    /// `failed`/`errored` → reject. The status and summary are also written
    /// into `body`.
    ///
    /// Use [`CaseStatus::Unchecked`] for a case that was observed but
    /// declares nothing to check: it is not a pass, and a suite with one is
    /// not `accept-now`.
    pub fn new(
        case_id: impl Into<String>,
        status: CaseStatus,
        summary: impl Into<String>,
        mut body: Value,
    ) -> Self {
        let summary = summary.into();
        let case_id = case_id.into();
        if !body.is_object() {
            // Whatever the evaluation was, its summary entry is an object.
            let mut map = Map::new();
            if !case_id.is_empty() {
                map.insert("caseId".into(), Value::String(case_id.clone()));
            }
            body = Value::Object(map);
        }
        if let Value::Object(map) = &mut body {
            map.insert("status".into(), Value::String(status_name(status).into()));
            map.insert("summary".into(), Value::String(summary.clone()));
        }
        Self {
            case_id,
            status,
            recommendation: recommendation_of(status),
            tags: Vec::new(),
            summary,
            body,
            carried: 0,
            written: None,
        }
    }

    /// A verdict whose summary entry the preset wrote itself as JSON text
    /// (see [`Preset::collect_written`]): `body` is the text of an object
    /// without `status` and `summary`, which the SDK appends as
    /// [`Verdict::new`] sets them. The recommendation follows the status as
    /// in `new`; `body` (the value) is `Null`.
    pub fn written(
        case_id: impl Into<String>,
        status: CaseStatus,
        summary: impl Into<String>,
        body: String,
    ) -> Self {
        debug_assert!(body.starts_with('{') && body.ends_with('}'), "{body}");
        Self {
            case_id: case_id.into(),
            status,
            recommendation: recommendation_of(status),
            tags: Vec::new(),
            summary: summary.into(),
            body: Value::Null,
            carried: 0,
            written: Some(body),
        }
    }

    /// The summary entry's JSON text, as the host receives it.
    pub fn entry_text(&self) -> String {
        body_text(self, None, keeps_insertion_order())
    }

    /// Declares that the body's first `count` members are members of the
    /// scored evaluation, moved into it unchanged (same key, same value;
    /// `status` and `summary` excepted, which [`Verdict::new`] sets). When
    /// the SDK has just written the evaluation (a run's `collect`), it then
    /// copies those members' JSON text instead of writing them again. Keep
    /// the promise: a member edited after the move would be written as the
    /// evaluation had it (debug builds check and panic). Without serde_json's
    /// `preserve_order` (members sorted by key) the declaration is ignored.
    /// A body that is not an object (which `new` replaces with one holding
    /// `caseId`) carries nothing: call this only on an object body.
    pub fn carrying(mut self, count: usize) -> Self {
        self.carried = count;
        self
    }

    /// Counts this case toward `evaluationCounts.<tag>` too.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Asks at least `recommendation` of the suite (never lowers it).
    pub fn at_least(mut self, recommendation: Recommendation) -> Self {
        if severity(recommendation) > severity(self.recommendation) {
            self.recommendation = recommendation;
        }
        self
    }
}

/// What a case with `status` asks of the suite: `passed` → accept-now,
/// `blocked`/`degraded`/`unchecked` → defer, `failed`/`errored` → reject.
fn recommendation_of(status: CaseStatus) -> Recommendation {
    match status {
        CaseStatus::Passed => Recommendation::AcceptNow,
        CaseStatus::Blocked | CaseStatus::Degraded | CaseStatus::Unchecked => Recommendation::Defer,
        CaseStatus::Failed | CaseStatus::Errored => Recommendation::Reject,
    }
}

fn severity(recommendation: Recommendation) -> u8 {
    match recommendation {
        Recommendation::AcceptNow => 0,
        Recommendation::Defer => 1,
        Recommendation::Reject => 2,
    }
}

/// The name a status has in packets (`passed`, `failed`, …).
pub fn status_name(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Passed => "passed",
        CaseStatus::Failed => "failed",
        CaseStatus::Errored => "errored",
        CaseStatus::Blocked => "blocked",
        CaseStatus::Degraded => "degraded",
        CaseStatus::Unchecked => "unchecked",
    }
}
