//! The JSON API under `/api/` (docs/serve.md): every route takes its
//! arguments as query parameters (a run id holds `/`: never a path
//! segment), each a closed set (an unknown parameter is a `400`), and
//! answers a read model or a wrapper of [`super::models`], or a
//! `cautilus.serve.error.v1` naming what was wrong and what to do.
//!
//! Values from the URL are untrusted: run ids are resolved beneath the
//! runs directory by [`crate::evidence::Records::resolve`]; case ids,
//! variants and suites are only compared with what the records hold;
//! every text value is bounded and free of control characters.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::models::{ApiError, ERROR};
use super::{App, answers, live};
use crate::evidence::{EvidenceError, cell, compare, detail, progress};

/// The longest text parameter taken.
const MAX_PARAM: usize = 512;

/// An error answer.
pub fn error_response(status: StatusCode, error: String, hint: String) -> Response {
    let body = ApiError {
        schema_version: ERROR.into(),
        error,
        hint,
    };
    (status, Json(body)).into_response()
}

fn evidence_error(e: EvidenceError) -> Response {
    let (status, hint) = match &e {
        EvidenceError::BadRunId { .. } => (
            StatusCode::BAD_REQUEST,
            "take a run id from /api/runs (or `latest`)",
        ),
        EvidenceError::UnknownRun { .. } => (
            StatusCode::NOT_FOUND,
            "take a run id from /api/runs (or `latest`)",
        ),
        EvidenceError::UnknownCase { .. } => (
            StatusCode::NOT_FOUND,
            "take a case id from /api/cases?run=…",
        ),
        EvidenceError::Ambiguous { .. } => (
            StatusCode::BAD_REQUEST,
            "add `variant` and `trial` to name one cell",
        ),
        EvidenceError::Read { .. } => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the run's records are damaged; `cautilus report <run dir>` says more",
        ),
        EvidenceError::Request(_) => (
            StatusCode::BAD_REQUEST,
            "see docs/serve.md for the route's parameters",
        ),
    };
    error_response(status, e.to_string(), hint.into())
}

/// The answer of `read`, run off the server's threads (it reads files).
async fn answer<T, F>(read: F) -> Response
where
    T: Serialize + Send + 'static,
    F: FnOnce() -> Result<T, EvidenceError> + Send + 'static,
{
    match tokio::task::spawn_blocking(read).await {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => evidence_error(e),
        Err(e) => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the read failed: {e}"),
            "retry; if it persists, report it".into(),
        ),
    }
}

/// A query's text parameters, to check.
pub trait Params {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)>;
}

/// The query, or the `400` saying what was wrong with it: not one the
/// route takes, or a text parameter empty, longer than [`MAX_PARAM`] or
/// holding control characters.
fn parse<T: Params>(q: Result<Query<T>, QueryRejection>) -> Result<T, Box<Response>> {
    let q = q
        .map_err(|e| {
            Box::new(error_response(
                StatusCode::BAD_REQUEST,
                format!("the query is not one this route takes: {}", e.body_text()),
                "see docs/serve.md for the route's parameters".into(),
            ))
        })?
        .0;
    for (name, value) in q.texts() {
        if let Some(v) = value
            && (v.is_empty() || v.len() > MAX_PARAM || v.chars().any(char::is_control))
        {
            return Err(Box::new(error_response(
                StatusCode::BAD_REQUEST,
                format!(
                    "`{name}` is empty, longer than {MAX_PARAM} bytes or holds control characters"
                ),
                format!("give `{name}` as the records name it"),
            )));
        }
    }
    Ok(q)
}

macro_rules! parsed {
    ($q:expr) => {
        match parse($q) {
            Ok(q) => q,
            Err(response) => return *response,
        }
    };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsQuery {
    suite: Option<String>,
    before: Option<String>,
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressQuery {
    suite: String,
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunQuery {
    run: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesQuery {
    run: String,
    status: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellQuery {
    run: String,
    case: String,
    variant: Option<String>,
    trial: Option<u32>,
    context: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompareQuery {
    a: String,
    b: String,
    variant_a: Option<String>,
    variant_b: Option<String>,
    case: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveQuery {
    run: Option<String>,
}

impl Params for RunsQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![
            ("suite", self.suite.as_deref()),
            ("before", self.before.as_deref()),
        ]
    }
}

impl Params for ProgressQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![("suite", Some(&self.suite))]
    }
}

impl Params for RunQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![("run", Some(&self.run))]
    }
}

impl Params for CasesQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![("run", Some(&self.run)), ("status", self.status.as_deref())]
    }
}

impl Params for CellQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![
            ("run", Some(&self.run)),
            ("case", Some(&self.case)),
            ("variant", self.variant.as_deref()),
        ]
    }
}

impl Params for CompareQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![
            ("a", Some(&self.a)),
            ("b", Some(&self.b)),
            ("variantA", self.variant_a.as_deref()),
            ("variantB", self.variant_b.as_deref()),
            ("case", self.case.as_deref()),
        ]
    }
}

impl Params for LiveQuery {
    fn texts(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![("run", self.run.as_deref())]
    }
}

/// `/api/suites`: the manifest, as `cautilus eval list --json` (of a
/// project with no fixture yet: empty, with a `notice`).
pub async fn suites(State(app): State<Arc<App>>) -> Response {
    match app.manifest.get(&app.binary).await {
        Ok(manifest) => Json(manifest).into_response(),
        Err(e) => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            e,
            "fix cautilus.toml or the fixtures it names (`cautilus eval list`)".into(),
        ),
    }
}

pub async fn runs(
    State(app): State<Arc<App>>,
    q: Result<Query<RunsQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    answer(move || answers::run_page(&records, q.suite.as_deref(), q.before.as_deref(), q.limit))
        .await
}

pub async fn progress(
    State(app): State<Arc<App>>,
    q: Result<Query<ProgressQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    let limit = q.limit.unwrap_or(progress::MAX_POINTS);
    answer(move || Ok(progress::newest(&records, &q.suite, limit))).await
}

pub async fn run(
    State(app): State<Arc<App>>,
    q: Result<Query<RunQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    answer(move || detail::run_detail(&records, &q.run)).await
}

pub async fn cases(
    State(app): State<Arc<App>>,
    q: Result<Query<CasesQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    answer(move || {
        answers::run_cases(
            &records,
            &q.run,
            q.status.as_deref(),
            q.offset.unwrap_or(0),
            q.limit,
        )
    })
    .await
}

pub async fn cell(
    State(app): State<Arc<App>>,
    q: Result<Query<CellQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    answer(move || cell::cell_evidence(&records, &q.run, &q.case, q.variant.as_deref(), q.trial))
        .await
}

pub async fn source(
    State(app): State<Arc<App>>,
    q: Result<Query<CellQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    let context = q.context.unwrap_or(3);
    answer(move || {
        answers::source_lines(
            &records,
            &q.run,
            &q.case,
            q.variant.as_deref(),
            q.trial,
            context,
        )
    })
    .await
}

pub async fn compare(
    State(app): State<Arc<App>>,
    q: Result<Query<CompareQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    if q.case.is_some() {
        return error_response(
            StatusCode::BAD_REQUEST,
            "`case` is a parameter of /api/outputs, not /api/compare".into(),
            "drop `case`".into(),
        );
    }
    let records = app.records.clone();
    answer(move || {
        compare::compare_runs(
            &records,
            &q.a,
            q.variant_a.as_deref(),
            &q.b,
            q.variant_b.as_deref(),
        )
    })
    .await
}

pub async fn outputs(
    State(app): State<Arc<App>>,
    q: Result<Query<CompareQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let Some(case) = q.case.clone() else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "/api/outputs needs `case`".into(),
            "add `case=<case id>`".into(),
        );
    };
    let records = app.records.clone();
    answer(move || {
        answers::case_outputs(
            &records,
            &case,
            (&q.a, q.variant_a.as_deref()),
            (&q.b, q.variant_b.as_deref()),
        )
    })
    .await
}

pub async fn live_runs(
    State(app): State<Arc<App>>,
    q: Result<Query<LiveQuery>, QueryRejection>,
) -> Response {
    let q = parsed!(q);
    let records = app.records.clone();
    answer(move || live::live(&records, q.run.as_deref())).await
}

/// Any other `/api/` path.
pub async fn unknown() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        "no such API route".into(),
        "the routes are /api/suites, /api/runs, /api/progress, /api/run, /api/cases, /api/cell, /api/source, /api/compare, /api/outputs, /api/live (docs/serve.md)".into(),
    )
}
