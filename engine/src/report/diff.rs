//! `eval compare OLD NEW`: two runs of any kind (one fixture's run, an
//! experiment with variants and trials, a project run; or `latest`) read
//! back from their records and compared.
//!
//! - **Verdicts**: each case is keyed by (suite, variant, caseId); its
//!   verdict in a run is `passed` when every trial passed, else the worst
//!   status of its trials (`errored` > `failed`/`blocked` > `degraded` >
//!   `unchecked`), with how many trials passed. A case whose verdict
//!   differs between the runs is listed (`regressed`: it passed in OLD and
//!   does not in NEW; `fixed`: the reverse); a case in NEW only is new, in
//!   OLD only removed.
//! - **Harness parity** (seed 000's cross-runtime rules,
//!   [`crate::eval::compare`]): every observed packet at the same place in
//!   both runs (the run's own, each variant's trial, each suite's) is
//!   checked case by case; what may differ is listed with each side's
//!   harness, so a changed verdict can be told from a changed harness.
//!
//! The comparison (`cautilus.run_comparison.v1`, additive to the parity
//! check's fields) `holds` when no case regressed and no parity rule is
//! broken; `eval compare` exits 0 then, 1 otherwise, 2 when a run cannot be
//! read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ReportError;
use crate::eval::compare as parity;

/// A case's key: (suite, variant, caseId).
type Key = (String, String, String);

/// A case's trials in one run: their statuses, in trial order.
#[derive(Debug, Default, Clone)]
struct Trials(Vec<String>);

impl Trials {
    fn verdict(&self) -> String {
        let rank = |s: &str| match s {
            "passed" => 0,
            "unchecked" => 1,
            "degraded" => 2,
            "failed" | "blocked" => 3,
            "errored" => 4,
            _ => 3,
        };
        self.0
            .iter()
            .max_by_key(|s| rank(s))
            .cloned()
            .unwrap_or_default()
    }

    fn passes(&self) -> String {
        let passed = self.0.iter().filter(|s| *s == "passed").count();
        format!("{passed}/{}", self.0.len())
    }
}

/// One run as the comparison reads it.
struct Side {
    /// What was given (after `latest`).
    path: PathBuf,
    /// The run's directory.
    dir: PathBuf,
    kind: &'static str,
    cases: BTreeMap<Key, Trials>,
    /// Observed packets by their path relative to `dir`.
    packets: BTreeMap<String, PathBuf>,
}

fn read_side(path: &Path) -> Result<Side, ReportError> {
    let error = |message: String| ReportError::Read {
        path: path.to_path_buf(),
        message,
    };
    // An observed packet given alone (the parity check's input).
    if path.is_file()
        && path.file_name().is_some_and(|n| n == "eval-observed.json")
        && !path.with_file_name("eval-summary.json").is_file()
    {
        return Ok(Side {
            path: path.to_path_buf(),
            dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            kind: "packet",
            cases: BTreeMap::new(),
            packets: BTreeMap::from([("eval-observed.json".into(), path.to_path_buf())]),
        });
    }
    let mut cases: BTreeMap<Key, Trials> = BTreeMap::new();
    let mut add = |report: &super::Report, suite: &str| {
        for row in &report.cases {
            let key = (
                suite.to_string(),
                row.variant.clone().unwrap_or_default(),
                row.id.clone(),
            );
            cases.entry(key).or_default().0.push(row.status.clone());
        }
    };
    let summary = crate::project::run::read_summary(path).map_err(|e| error(e.to_string()))?;
    let (dir, kind) = if let Some((dir, summary)) = summary {
        for suite in &summary.suites {
            let Some(run_dir) = &suite.run_dir else {
                continue;
            };
            let suite_dir = super::safe_join(&dir, run_dir).ok_or_else(|| {
                error(format!(
                    "suite `{}`: its run directory `{run_dir}` is not inside the project run",
                    suite.id
                ))
            })?;
            if let Ok(report) = super::load(&suite_dir) {
                add(&report, &suite.id);
            }
        }
        (dir, "project")
    } else {
        let report = super::load(path)?;
        let dir = if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        };
        let kind = if report.header.kind == "experiment" {
            "experiment"
        } else {
            "run"
        };
        add(&report, &report.header.suite_id);
        (dir, kind)
    };
    let mut packets = BTreeMap::new();
    find_packets(&dir, &dir, 0, &mut packets);
    Ok(Side {
        path: path.to_path_buf(),
        dir,
        kind,
        cases,
        packets,
    })
}

/// Every `eval-observed.json` under `dir` (a run's own, its variants'
/// trials', a project's suites'), by relative path; links not followed.
fn find_packets(root: &Path, dir: &Path, depth: usize, found: &mut BTreeMap<String, PathBuf>) {
    const DEPTH: usize = 6;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth < DEPTH {
            find_packets(root, &path, depth + 1, found);
        } else if kind.is_file() && entry.file_name() == "eval-observed.json" {
            let relative = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            found.insert(relative, path);
        }
    }
}

/// Compares the runs `old` and `new` (see the module docs).
pub fn compare_runs(old: &Path, new: &Path) -> Result<Value, ReportError> {
    let (a, b) = (read_side(old)?, read_side(new)?);
    let key_json = |(suite, variant, case): &Key| {
        let mut entry = json!({"suite": suite, "caseId": case});
        if !variant.is_empty() {
            entry["variant"] = json!(variant);
        }
        entry
    };
    let (mut changed, mut added, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut regressed, mut fixed, mut unchanged) = (0usize, 0usize, 0usize);
    for (key, before) in &a.cases {
        let Some(after) = b.cases.get(key) else {
            let mut entry = key_json(key);
            entry["before"] = json!(before.verdict());
            removed.push(entry);
            continue;
        };
        let (was, is) = (before.verdict(), after.verdict());
        if was == is && before.passes() == after.passes() {
            unchanged += 1;
            continue;
        }
        let change = match (was == "passed", is == "passed") {
            (true, false) => {
                regressed += 1;
                "regressed"
            }
            (false, true) => {
                fixed += 1;
                "fixed"
            }
            _ => "changed",
        };
        let mut entry = key_json(key);
        entry["change"] = json!(change);
        entry["before"] = json!(was);
        entry["after"] = json!(is);
        entry["beforePassed"] = json!(before.passes());
        entry["afterPassed"] = json!(after.passes());
        changed.push(entry);
    }
    for (key, after) in &b.cases {
        if !a.cases.contains_key(key) {
            let mut entry = key_json(key);
            entry["after"] = json!(after.verdict());
            added.push(entry);
        }
    }

    // Harness parity, packet by packet at the same place in both runs.
    let mut groups = Vec::new();
    let mut violations = Vec::new();
    let mut cases = Vec::new();
    let pairs: Vec<(&String, &PathBuf, &PathBuf)> = a
        .packets
        .iter()
        .filter_map(|(rel, pa)| b.packets.get(rel).map(|pb| (rel, pa, pb)))
        .collect();
    let (mut harness_a, mut harness_b) = (Value::Null, Value::Null);
    for (rel, pa, pb) in &pairs {
        let checked = parity::compare(pa, pb).map_err(|e| ReportError::Read {
            path: pa.to_path_buf(),
            message: e.to_string(),
        })?;
        let at = rel
            .strip_suffix("eval-observed.json")
            .unwrap_or(rel)
            .trim_end_matches('/');
        for v in checked["violations"].as_array().into_iter().flatten() {
            let v = v.as_str().unwrap_or_default();
            violations.push(json!(if at.is_empty() {
                v.to_string()
            } else {
                format!("{at}: {v}")
            }));
        }
        if pairs.len() == 1 {
            cases = checked["cases"].as_array().cloned().unwrap_or_default();
        }
        if harness_a.is_null() {
            harness_a = checked["a"]["harness"].clone();
            harness_b = checked["b"]["harness"].clone();
        }
        groups.push(json!({"at": at, "report": checked}));
    }
    let holds = violations.is_empty() && regressed == 0;
    let side = |s: &Side, harness: Value| {
        json!({"run": s.path.display().to_string(), "dir": s.dir.display().to_string(),
               "kind": s.kind, "harness": harness,
               "packet": s.packets.values().next().map(|p| p.display().to_string())})
    };
    Ok(json!({
        "schemaVersion": parity::SCHEMA,
        "a": side(&a, harness_a),
        "b": side(&b, harness_b),
        "holds": holds,
        "regressions": regressed,
        "verdicts": {
            "changed": changed,
            "new": added,
            "removed": removed,
            "regressed": regressed,
            "fixed": fixed,
            "unchanged": unchanged,
        },
        "parity": {
            "holds": violations.is_empty(),
            "checked": groups.len(),
            "groups": groups,
        },
        "violations": violations,
        "cases": cases,
    }))
}

/// The comparison as a person reads it (every run text escaped).
pub fn print(out: &mut impl std::io::Write, report: &Value) -> std::io::Result<()> {
    use crate::term::inline;
    let text = |value: &Value| inline(value.as_str().unwrap_or("?")).into_owned();
    let side = |s: &str| {
        let harness = match report[s]["harness"].as_str() {
            Some(h) => format!(", {}", inline(h)),
            None => String::new(),
        };
        format!(
            "{} ({}{harness})",
            text(&report[s]["run"]),
            text(&report[s]["kind"])
        )
    };
    writeln!(out, "comparing {} with {}", side("a"), side("b"))?;
    let verdicts = &report["verdicts"];
    let count = |k: &str| verdicts[k].as_array().map_or(0, Vec::len);
    writeln!(
        out,
        "verdicts: {} changed ({} regressed, {} fixed), {} new, {} removed, {} unchanged",
        count("changed"),
        verdicts["regressed"],
        verdicts["fixed"],
        count("new"),
        count("removed"),
        verdicts["unchanged"]
    )?;
    let name = |e: &Value| {
        let variant = e["variant"]
            .as_str()
            .map(|v| format!(" [{}]", inline(v)))
            .unwrap_or_default();
        format!("{} {}{variant}", text(&e["suite"]), text(&e["caseId"]))
    };
    for entry in verdicts["changed"].as_array().into_iter().flatten() {
        let mark = match entry["change"].as_str() {
            Some("regressed") => "REGRESSED",
            Some("fixed") => "FIXED    ",
            _ => "CHANGED  ",
        };
        writeln!(
            out,
            "  {mark}  {}: {} ({}) → {} ({})",
            name(entry),
            text(&entry["before"]),
            text(&entry["beforePassed"]),
            text(&entry["after"]),
            text(&entry["afterPassed"])
        )?;
    }
    for entry in verdicts["new"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "  NEW        {}: {}",
            name(entry),
            text(&entry["after"])
        )?;
    }
    for entry in verdicts["removed"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "  REMOVED    {}: was {}",
            name(entry),
            text(&entry["before"])
        )?;
    }
    let parity = &report["parity"];
    for group in parity["groups"].as_array().into_iter().flatten() {
        let at = group["at"].as_str().unwrap_or("");
        if parity["checked"].as_u64() != Some(1) || !at.is_empty() {
            writeln!(
                out,
                "harness parity of {}:",
                inline(if at.is_empty() { "the run" } else { at })
            )?;
        } else {
            writeln!(out, "harness parity:")?;
        }
        parity::print_rules(out, &group["report"])?;
    }
    if parity["checked"] == 0 {
        writeln!(
            out,
            "harness parity: no observed packets at the same place in both runs to check"
        )?;
    }
    let regressed = report["regressions"].as_u64().unwrap_or(0);
    if report["holds"] == true {
        writeln!(out, "no case regressed, and the cross-runtime rules hold")
    } else if regressed > 0 {
        writeln!(out, "{regressed} case(s) regressed")
    } else {
        writeln!(out, "a cross-runtime rule is broken")
    }
}
