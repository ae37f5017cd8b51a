//! `cautilus.run_detail.v1`: one run as the Markdown report shows it, as
//! data: the verdict and totals, the gates, the variants with their
//! aggregates and overrides, the comparison with the baseline (as the
//! experiment recorded it), the cases that did not pass with their reasons
//! and failed assertions, and the cases the fixture skipped.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::summary::RunSummary;
use super::{EvidenceError, RUN_DETAIL, Records};
use crate::schema::experiment::Gate;

/// Cases that did not pass listed; the rest are counted.
pub const NOT_PASSED_SHOWN: usize = 200;

/// One run in detail.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    pub schema_version: String,
    pub run: RunSummary,
    pub surface: String,
    pub preset: String,
    /// The fixture as the run named it.
    pub fixture_ref: String,
    pub gates: Vec<Gate>,
    pub variants: Vec<VariantDetail>,
    /// Each candidate against the baseline, as the experiment recorded it.
    pub comparison: Vec<Value>,
    /// Cases (cells) that did not pass, in the run's order.
    pub not_passed: Vec<CaseLine>,
    /// Cases that did not pass beyond those listed.
    pub not_passed_omitted: usize,
    /// Cases the fixture skipped: `{caseId, reason}`.
    pub skipped: Vec<Value>,
}

/// A variant of an experiment.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantDetail {
    pub name: String,
    pub baseline: bool,
    /// The suite fields it sets (model, system, settings …).
    pub overrides: Map<String, Value>,
    /// Its aggregates as the experiment recorded them
    /// (`cautilus.experiment.v1`'s `aggregates`).
    pub aggregate: Value,
}

/// A case (cell) in a line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseLine {
    pub case_id: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    pub status: String,
    pub summary: String,
    /// Names of its assertions that did not pass, in ledger order.
    pub failed_assertions: Vec<String>,
}

/// The detail of run `id`.
pub fn run_detail(records: &Records, id: &str) -> Result<RunDetail, EvidenceError> {
    let run = records.resolve(id)?;
    let report = records.report(&run)?;
    let summary = RunSummary::of(&run, &report);
    let mut lines: Vec<CaseLine> = report
        .cases
        .iter()
        .filter(|c| !c.passed())
        .map(|c| CaseLine {
            case_id: c.id.clone(),
            variant: c.variant.clone(),
            trial: c.trial,
            status: c.status.clone(),
            summary: c.summary.clone(),
            failed_assertions: c
                .assertions
                .iter()
                .filter(|a| a.status != "passed")
                .map(|a| a.name.clone())
                .collect(),
        })
        .collect();
    let omitted = lines.len().saturating_sub(NOT_PASSED_SHOWN);
    lines.truncate(NOT_PASSED_SHOWN);
    let h = &report.header;
    Ok(RunDetail {
        schema_version: RUN_DETAIL.into(),
        run: summary,
        surface: h.surface.clone(),
        preset: h.preset.clone(),
        fixture_ref: h.fixture_ref.clone(),
        gates: report.gates.clone(),
        variants: report
            .variants
            .iter()
            .map(|v| VariantDetail {
                name: v.name.clone(),
                baseline: v.baseline,
                overrides: v.overrides.clone(),
                aggregate: v.aggregate.clone(),
            })
            .collect(),
        comparison: report.comparison.clone(),
        not_passed: lines,
        not_passed_omitted: omitted,
        skipped: report.skipped.clone(),
    })
}
