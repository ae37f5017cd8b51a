//! `cautilus eval merge <run-dir>...`: the shards of one experiment
//! (`--shard k/n` runs) joined into one record whose aggregates,
//! comparison and gates equal an unsharded run's.
//!
//! The shards must be of one suite (same id and fingerprints), of one
//! shard count, each index exactly once, and completed. Their cells are
//! put back in the canonical order (variant, trial, case position) and
//! concluded as a run concludes its own ([`super::record::conclude`]),
//! with the gates the fixture declared (kept in every record).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::aggregate::CellFacts;
use super::baseline::{self, Baseline};
use super::gates;
use super::outcome::{ExperimentOutcome, FILE, SCHEMA};
use super::record::{Judging, conclude};
use crate::eval::EvalError;
use crate::eval::files::PacketWriter;
use crate::schema::experiment as record;

fn error(path: &Path, message: impl Into<String>) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// One shard's record.
struct Shard {
    path: PathBuf,
    record: Value,
}

fn read(dir: &Path) -> Result<Shard, EvalError> {
    let path = if dir.is_dir() {
        dir.join(FILE)
    } else {
        dir.to_path_buf()
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| error(&path, format!("cannot read the experiment record: {e}")))?;
    let record: Value = serde_json::from_str(&text)
        .map_err(|e| error(&path, format!("not an experiment record: {e}")))?;
    if record["schemaVersion"] != SCHEMA {
        return Err(error(&path, format!("not a {SCHEMA} record")));
    }
    Ok(Shard { path, record })
}

/// Checks that `shards` are the complete, finished parts of one run.
fn check(shards: &[Shard]) -> Result<u64, EvalError> {
    let first = &shards[0];
    let count = first.record["shard"]["count"].as_u64().ok_or_else(|| {
        error(
            &first.path,
            "not a shard (run with --shard K/N); there is nothing to merge",
        )
    })?;
    let mut seen = vec![None::<&Path>; count as usize];
    for shard in shards {
        let r = &shard.record;
        for key in [
            "suiteId",
            "fingerprints",
            "variants",
            "baseline",
            "declaredGates",
        ] {
            if r[key] != first.record[key] {
                return Err(error(
                    &shard.path,
                    format!(
                        "its `{key}` differs from {}'s: the shards are not of one run of one suite",
                        first.path.display()
                    ),
                ));
            }
        }
        if r["status"] != "completed" {
            return Err(error(
                &shard.path,
                "this shard did not complete; rerun it before merging",
            ));
        }
        let (Some(index), Some(n)) = (r["shard"]["index"].as_u64(), r["shard"]["count"].as_u64())
        else {
            return Err(error(&shard.path, "not a shard (run with --shard K/N)"));
        };
        if n != count {
            return Err(error(
                &shard.path,
                format!(
                    "a shard of {n}, not of {count} like {}",
                    first.path.display()
                ),
            ));
        }
        let slot = &mut seen[(index - 1) as usize];
        if let Some(other) = slot {
            return Err(error(
                &shard.path,
                format!("shard {index}/{count} again (also {})", other.display()),
            ));
        }
        *slot = Some(&shard.path);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| format!("{}/{count}", i + 1))
        .collect();
    if !missing.is_empty() {
        return Err(error(
            &first.path,
            format!("missing shards: {}", missing.join(", ")),
        ));
    }
    Ok(count)
}

/// Merges the shard runs in `dirs` into `output_dir`'s record.
pub fn merge(dirs: &[PathBuf], output_dir: &Path) -> Result<ExperimentOutcome, EvalError> {
    let shards = dirs
        .iter()
        .map(|d| read(d))
        .collect::<Result<Vec<_>, _>>()?;
    if shards.is_empty() {
        return Err(error(output_dir, "name the shard runs to merge"));
    }
    check(&shards)?;
    // The shards' records are what a merge reads: its directory may hold
    // none of them.
    let claim = crate::eval::records::run_dir::RunDir::claim(output_dir, || {
        shards.iter().fold(Default::default(), |inputs, shard| {
            crate::eval::records::run_dir::Inputs::with(inputs, Some(&shard.path))
        })
    })?;
    let first = &shards[0].record;
    let names: Vec<String> = first["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str().map(str::to_string))
        .collect();
    let baseline = first["baseline"]
        .as_str()
        .and_then(|b| names.iter().position(|n| n == b));
    let declared = match &first["declaredGates"] {
        Value::Null => None,
        value => Some(
            gates::parse(value).map_err(|(p, m)| error(&shards[0].path, format!("{p}: {m}")))?,
        ),
    };
    let committed: Option<(Baseline, bool)> = match first["committedBaseline"].as_object() {
        Some(c) => {
            let path = PathBuf::from(c["path"].as_str().unwrap_or_default());
            let suite_id = first["suiteId"].as_str().unwrap_or_default();
            baseline::read_file(&path, suite_id)?.map(|b| (b, c["changedSince"] == true))
        }
        None => None,
    };

    // The cells in the order an unsharded run writes them.
    let mut cells: Vec<(usize, u64, u64, &Value)> = Vec::new();
    for shard in &shards {
        for cell in shard.record["cells"].as_array().into_iter().flatten() {
            let variant = names
                .iter()
                .position(|n| cell["variant"] == n.as_str())
                .ok_or_else(|| {
                    error(
                        &shard.path,
                        format!("a cell of unknown variant {}", cell["variant"]),
                    )
                })?;
            cells.push((
                variant,
                cell["trial"].as_u64().unwrap_or(0),
                cell["caseIndex"].as_u64().unwrap_or(0),
                cell,
            ));
        }
    }
    cells.sort_by_key(|(v, t, i, _)| (*v, *t, *i));
    let mut skipped: Vec<&Value> = shards
        .iter()
        .flat_map(|s| s.record["skipped"].as_array().into_iter().flatten())
        .collect();
    skipped.sort_by_key(|s| s["caseIndex"].as_u64().unwrap_or(0));
    let not_a_record =
        |e: serde_json::Error| error(&shards[0].path, format!("not an experiment record: {e}"));

    // The first shard's header, with what the shards say together.
    let mut header: record::ExperimentHeader =
        record::ExperimentHeader::deserialize(first).map_err(not_a_record)?;
    header.started_at = times(&shards, "startedAt").min().unwrap_or_default().into();
    header.trials = shards
        .iter()
        .filter_map(|s| s.record["trials"].as_u64())
        .max()
        .map_or(header.trials, |t| u32::try_from(t).unwrap_or(u32::MAX));
    let filtered = shards.iter().any(|s| s.record["filtered"] == true);
    header.filtered = filtered;
    header.shard = None;
    header.skipped = skipped
        .into_iter()
        .map(record::Skipped::deserialize)
        .collect::<Result<_, _>>()
        .map_err(not_a_record)?;
    header.merged_from = Some(
        shards
            .iter()
            .map(|s| s.path.to_string_lossy().into_owned())
            .collect(),
    );
    let fingerprints = (
        first["fingerprints"]["config"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        first["fingerprints"]["task"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    );
    let header = crate::schema::object_of(&header);
    let record = output_dir.join(FILE);
    let mut out = PacketWriter::create(&record, &header, "cells")?;
    let mut facts: Vec<Vec<CellFacts>> = vec![Vec::new(); names.len()];
    for (variant, _, _, cell) in &cells {
        out.push(&cell.to_string())?;
        let fact = CellFacts::from_record_cell(cell).ok_or_else(|| {
            error(
                &shards[0].path,
                format!("a cell without caseId, trial or status: {cell}"),
            )
        })?;
        facts[*variant].push(fact);
    }
    let conclusion = conclude(
        &Judging {
            variants: &names,
            baseline,
            committed: committed.as_ref().map(|(b, drift)| (b, *drift)),
            gates: declared.as_ref(),
            informational: filtered,
            interrupted: false,
        },
        &facts,
    );
    let mut trailer = conclusion.trailer(None, fingerprints);
    trailer.finished_at = times(&shards, "finishedAt")
        .max()
        .unwrap_or_default()
        .into();
    let trailer = crate::schema::object_of(&trailer);
    out.finish(&trailer)?;
    Ok(ExperimentOutcome {
        output_dir: output_dir.to_path_buf(),
        record,
        passed: conclusion.passed,
        interrupted: None,
        cells: cells.len(),
        variants: conclusion.aggregates,
        baseline: baseline.map(|b| names[b].clone()),
        comparisons: conclusion.comparisons,
        gates: conclusion.gates,
        filtered,
        _claim: Some(claim),
    })
}

/// The shards' RFC 3339 times of `key` (they sort as text).
fn times<'a>(shards: &'a [Shard], key: &'a str) -> impl Iterator<Item = &'a str> {
    shards.iter().filter_map(move |s| s.record[key].as_str())
}
