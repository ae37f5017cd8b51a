//! The wrapper answers of [`super::models`] made from the records: a page
//! of a suite's runs, one run's cases, one case's outputs on two sides,
//! one cell's source lines. Each reads only what it names: the run page
//! takes runs newest first from `before` until its page is full, each
//! run's summary from the run index ([`crate::evidence::index`], the runs
//! not yet indexed read a few at once); the
//! others read one or two runs (kept while unchanged: the last few read).

use std::sync::Arc;

use super::lines;
use super::models::{
    AssertionLines, CASE_OUTPUTS, CaseEntry, CaseOutputs, OutputCell, OutputSide, RUN_CASES,
    RUN_PAGE, RunCases, RunPage, SOURCE_LINES, SourceLines,
};
use crate::evidence::cell::{cell_evidence, observed};
use crate::evidence::{EvidenceError, Records, list};
use crate::report::Report;

/// Cases a page of [`run_cases`] holds unless asked otherwise, and at most.
pub const CASES_PAGE: usize = 100;
pub const CASES_MAX: usize = 1000;

fn load(records: &Records, id: &str) -> Result<(String, Arc<Report>), EvidenceError> {
    let run = records.resolve(id)?;
    let report = records.report(&run)?;
    Ok((run.id, report))
}

/// Up to `limit` finished runs (of `suite`, when given) older than
/// `before` (a run id; the newest when absent), newest first.
pub fn run_page(
    records: &Records,
    suite: Option<&str>,
    before: Option<&str>,
    limit: Option<usize>,
) -> Result<RunPage, EvidenceError> {
    let limit = limit
        .unwrap_or(list::DEFAULT_LIMIT)
        .clamp(1, list::MAX_LIMIT);
    if let Some(before) = before {
        // Checked as any run id (it need not exist any more).
        if let Err(e @ EvidenceError::BadRunId { .. }) = records.resolve(before) {
            return Err(e);
        }
    }
    let all = records.runs();
    let start = match before {
        None => 0,
        Some(b) => match all.iter().position(|r| r.id == b) {
            Some(i) => i + 1,
            None => all
                .iter()
                .position(|r| r.id.as_str() < b)
                .unwrap_or(all.len()),
        },
    };
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    let mut next = None;
    let from = all.get(start..).unwrap_or_default();
    for (i, (_, summary)) in records.summarized(from).enumerate() {
        if runs.len() == limit {
            next = all.get(start + i - 1).map(|r| r.id.clone());
            break;
        }
        match summary {
            Ok(summary) if suite.is_none_or(|s| s == summary.suite_id) => runs.push(summary),
            Ok(_) => {}
            Err(why) => unreadable.push(why),
        }
    }
    records.settle_index(&all);
    Ok(RunPage {
        schema_version: RUN_PAGE.into(),
        suite: suite.map(str::to_string),
        before: before.map(str::to_string),
        limit,
        runs,
        next,
        unreadable,
    })
}

/// Run `id`'s cases (of `status`, when given), `limit` from `offset`.
pub fn run_cases(
    records: &Records,
    id: &str,
    status: Option<&str>,
    offset: usize,
    limit: Option<usize>,
) -> Result<RunCases, EvidenceError> {
    let (run, report) = load(records, id)?;
    let limit = limit.unwrap_or(CASES_PAGE).clamp(1, CASES_MAX);
    let matching: Vec<_> = report
        .cases
        .iter()
        .filter(|c| status.is_none_or(|s| s == "all" || c.status == s))
        .collect();
    let total = matching.len();
    let cases: Vec<CaseEntry> = matching
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|c| CaseEntry {
            case_id: c.id.clone(),
            display_name: c.name.clone(),
            variant: c.variant.clone(),
            trial: c.trial,
            status: c.status.clone(),
            summary: c.summary.clone(),
            score: c.score,
            duration_ms: c.duration_ms,
            cost_usd: c.cost_usd,
            failed_assertions: c
                .assertions
                .iter()
                .filter(|a| a.status != "passed")
                .map(|a| a.name.clone())
                .collect(),
        })
        .collect();
    let next = offset.saturating_add(cases.len());
    Ok(RunCases {
        schema_version: RUN_CASES.into(),
        run,
        status: status.map(str::to_string),
        counts: report.header.counts.clone(),
        total,
        offset,
        limit,
        next_offset: (next < total).then_some(next),
        cases,
    })
}

/// Case `case` as run `a` (its variant `variant_a`) and run `b` answered.
pub fn case_outputs(
    records: &Records,
    case: &str,
    (a, variant_a): (&str, Option<&str>),
    (b, variant_b): (&str, Option<&str>),
) -> Result<CaseOutputs, EvidenceError> {
    let side = |id: &str, variant: Option<&str>| -> Result<OutputSide, EvidenceError> {
        let (run, report) = load(records, id)?;
        let cells = report
            .cases
            .iter()
            .filter(|c| c.id == case)
            .filter(|c| variant.is_none_or(|v| c.variant.as_deref() == Some(v)))
            .map(|c| {
                let seen = observed(c);
                OutputCell {
                    variant: c.variant.clone(),
                    trial: c.trial,
                    status: c.status.clone(),
                    summary: c.summary.clone(),
                    final_text: seen.final_text,
                    final_text_chars: seen.final_text_chars,
                }
            })
            .collect();
        Ok(OutputSide {
            run,
            variant: variant.map(str::to_string),
            cells,
        })
    };
    Ok(CaseOutputs {
        schema_version: CASE_OUTPUTS.into(),
        case_id: case.into(),
        a: side(a, variant_a)?,
        b: side(b, variant_b)?,
    })
}

/// The lines around each assertion of a cell where it was written.
pub fn source_lines(
    records: &Records,
    run: &str,
    case: &str,
    variant: Option<&str>,
    trial: Option<u32>,
    context: usize,
) -> Result<SourceLines, EvidenceError> {
    let evidence = cell_evidence(records, run, case, variant, trial)?;
    let assertions = evidence
        .assertions
        .into_iter()
        .map(|a| {
            let read = match &a.source {
                None => Err("the fixture no longer says where it was written (it changed since the run, or lies outside the project)".to_string()),
                Some(s) => match s.line {
                    None => Err(format!("its place in `{}` was not found", s.file)),
                    Some(line) => lines::around(records.project_root(), &s.file, line, context),
                },
            };
            let (lines, unavailable) = match read {
                Ok(lines) => (lines, None),
                Err(why) => (Vec::new(), Some(why)),
            };
            AssertionLines {
                index: a.index,
                name: a.name,
                status: a.status,
                source: a.source,
                lines,
                unavailable,
            }
        })
        .collect();
    Ok(SourceLines {
        schema_version: SOURCE_LINES.into(),
        run: evidence.run,
        case_id: evidence.case_id,
        variant: evidence.variant,
        trial: evidence.trial,
        assertions,
    })
}
