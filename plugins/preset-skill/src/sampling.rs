//! `collect` (samples → sampling aggregate) and `evaluate` for repo/skill.

use cautilus_sdk::PluginError;
use cautilus_sdk::preset::packet::{copy_fields, evaluations, header, pair_results};
use serde_json::{Map, Value, json};

use crate::shape::{CASE_FIELDS, THRESHOLDS};
use crate::{OBSERVED, SUMMARY};

const OUTCOMES: &[&str] = &["passed", "failed", "blocked", "degraded"];
/// Case fields copied into the observed packet so it scores on its own.
const COPIED: &[&str] = CASE_FIELDS;

/// One sample's observation: the provider's structured output, or a blocked
/// sample when the provider produced none.
fn sample_observation(sample: &Value) -> Value {
    match sample.get("structured").filter(|v| v.is_object()) {
        Some(observation) => observation.clone(),
        // No observation: the sample neither invoked nor skipped the skill.
        // It counts toward no consensus, and blocks the case if consensus fails.
        None => json!({
            "errored": true,
            "outcome": "blocked",
            "summary": sample.get("error").and_then(Value::as_str).unwrap_or("the runner returned no observation"),
        }),
    }
}

fn number(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64)
}

/// Sum of a metric over samples, present only when every sample reports it.
fn total(samples: &[Value], key: &str) -> Option<f64> {
    samples.iter().map(|s| number(s, key)).sum()
}

/// A sample's outcome; a sample that did not invoke the skill failed, one
/// that produced no observation is blocked.
fn outcome_of(sample: &Value) -> &str {
    if sample.get("invoked").and_then(Value::as_bool) == Some(false) {
        "failed"
    } else {
        sample
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("blocked")
    }
}

pub fn collect(cases: Value, results: Value) -> Result<Value, PluginError> {
    let (list, results) = pair_results(&cases, results)?;
    let fixture_ref = cases.get("fixtureRef").cloned().unwrap_or(Value::Null);
    let evaluations: Vec<Value> = list
        .iter()
        .zip(&results)
        .map(|(case, result)| aggregate(case, result, &fixture_ref))
        .collect();
    let mut packet = header(OBSERVED, "repo", "skill", &cases);
    copy_fields(&cases, &mut packet, &["skillId", "skillDisplayName"]);
    packet.insert("evaluations".into(), Value::Array(evaluations));
    Ok(Value::Object(packet))
}

fn aggregate(case: &Value, result: &Value, fixture_ref: &Value) -> Value {
    let raw: Vec<Value> = match result.get("samples").and_then(Value::as_array) {
        Some(samples) => samples.clone(),
        None => vec![result.clone()],
    };
    let samples: Vec<Value> = raw.iter().map(sample_observation).collect();
    let consensus = case
        .get("minConsensusCount")
        .and_then(Value::as_u64)
        .unwrap_or(1) as usize;
    let invoked_count = samples
        .iter()
        .filter(|s| s.get("invoked").and_then(Value::as_bool) == Some(true))
        .count();
    let mut e = Map::new();
    e.insert("evaluationId".into(), case["caseId"].clone());
    copy_fields(case, &mut e, COPIED);
    e.insert("surface".into(), json!("repo"));
    e.insert("preset".into(), json!("skill"));
    e.insert("fixtureRef".into(), fixture_ref.clone());
    copy_fields(
        result,
        &mut e,
        &[
            "provider",
            "model",
            "harness",
            "mode",
            "durationMs",
            "costUsd",
        ],
    );
    let mut sampling = json!({"sampleCount": samples.len(), "consensusCount": consensus, "invokedCount": invoked_count});
    if case["evaluationKind"] == "trigger" {
        let expect_invoked = case["expectedTrigger"] == "must_invoke";
        let matching = samples
            .iter()
            .filter(|s| s.get("invoked").and_then(Value::as_bool) == Some(expect_invoked))
            .count();
        let errored = samples.iter().filter(|s| s["errored"] == true).count();
        let stable = matching >= consensus;
        sampling["matchingCount"] = json!(matching);
        sampling["erroredCount"] = json!(errored);
        sampling["stable"] = json!(stable);
        if !stable && errored > 0 {
            // Missing observations, not disagreement: the case cannot be judged.
            e.insert("blocked".into(), json!(true));
        }
        e.insert(
            "invoked".into(),
            json!(if stable {
                expect_invoked
            } else {
                !expect_invoked
            }),
        );
    } else {
        let counts: Map<String, Value> = OUTCOMES
            .iter()
            .map(|o| {
                (
                    o.to_string(),
                    json!(samples.iter().filter(|s| outcome_of(s) == *o).count()),
                )
            })
            .collect();
        let outcome = OUTCOMES
            .iter()
            .find(|o| counts[**o].as_u64().unwrap_or(0) as usize >= consensus)
            .copied()
            .unwrap_or(if invoked_count >= consensus {
                "degraded"
            } else {
                "blocked"
            });
        sampling["statusCounts"] = Value::Object(counts);
        sampling["stable"] = json!(true);
        e.insert("invoked".into(), json!(invoked_count >= consensus));
        e.insert("outcome".into(), json!(outcome));
    }
    e.insert("sampling".into(), sampling);
    let summaries: Vec<&str> = samples
        .iter()
        .filter_map(|s| s.get("summary").and_then(Value::as_str))
        .collect();
    e.insert(
        "summary".into(),
        json!(summaries.first().copied().unwrap_or("")),
    );
    let commands: Vec<Value> = samples
        .iter()
        .flat_map(|s| {
            s.get("commands")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    e.insert("commands".into(), Value::Array(commands));
    let mut metrics = Map::new();
    for key in ["total_tokens", "duration_ms", "cost_usd"] {
        if let Some(v) = total(&samples, key) {
            metrics.insert(key.into(), json!(v));
        }
    }
    let uncached: Option<Vec<f64>> = samples
        .iter()
        .map(|s| {
            number(s, "uncached_tokens").or_else(|| {
                Some(number(s, "total_tokens")? - number(s, "cache_read_tokens").unwrap_or(0.0))
            })
        })
        .collect();
    if let Some(mut runs) = uncached.filter(|r| !r.is_empty()) {
        runs.sort_by(f64::total_cmp);
        metrics.insert("uncached_tokens".into(), json!(runs.iter().sum::<f64>()));
        metrics.insert(
            "median_run_uncached_tokens".into(),
            json!(runs[runs.len() / 2]),
        );
        metrics.insert(
            "peak_run_uncached_tokens".into(),
            json!(runs[runs.len() - 1]),
        );
    }
    e.insert("metrics".into(), Value::Object(metrics));
    Value::Object(e)
}

/// Case-insensitive fragment guard findings over the summary and command log.
fn fragment_findings(e: &Value) -> Vec<String> {
    let summary = e
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let commands: String = e
        .get("commands")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
        .to_lowercase();
    let mut findings = Vec::new();
    for (key, haystack, required, what) in [
        ("requiredSummaryFragments", &summary, true, "summary"),
        ("forbiddenSummaryFragments", &summary, false, "summary"),
        ("requiredCommandFragments", &commands, true, "command log"),
        ("forbiddenCommandFragments", &commands, false, "command log"),
    ] {
        for fragment in e
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let present = haystack.contains(&fragment.to_lowercase());
            if present != required {
                findings.push(format!(
                    "{what} {} {fragment:?}",
                    if required {
                        "lacks required"
                    } else {
                        "contains forbidden"
                    }
                ));
            }
        }
    }
    findings
}

fn threshold_findings(e: &Value) -> Vec<Value> {
    let mut findings = Vec::new();
    for limit_key in THRESHOLDS {
        let Some(limit) = e
            .pointer(&format!("/thresholds/{limit_key}"))
            .and_then(Value::as_f64)
        else {
            continue;
        };
        let metric = limit_key.trim_start_matches("max_");
        if let Some(actual) = e
            .pointer(&format!("/metrics/{metric}"))
            .and_then(Value::as_f64)
            && actual > limit
        {
            findings.push(json!({"metric": metric, "actual": actual, "limit": limit}));
        }
    }
    findings
}

pub fn evaluate(observed: Value) -> Result<Value, PluginError> {
    let list = evaluations(&observed, OBSERVED)?;
    let mut counts: Map<String, Value> = [
        "total",
        "passed",
        "failed",
        "degraded",
        "blocked",
        "trigger",
        "execution",
        "unstable",
    ]
    .iter()
    .map(|k| (k.to_string(), json!(0)))
    .collect();
    let mut bump = |key: &str| {
        let n = counts[key].as_u64().unwrap_or(0);
        counts[key] = json!(n + 1);
    };
    let mut evaluations = Vec::new();
    for e in &list {
        bump("total");
        let mut out = e.as_object().cloned().unwrap_or_default();
        let findings = fragment_findings(e);
        let (status, summary) = if e["evaluationKind"] == "trigger" {
            bump("trigger");
            let expect_invoked = e["expectedTrigger"] == "must_invoke";
            let invoked = e["invoked"].as_bool().unwrap_or(false) && findings.is_empty();
            let stable = e
                .pointer("/sampling/stable")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            if !stable {
                bump("unstable");
                out.insert("unstable".into(), json!(true));
            }
            if e["blocked"] == true {
                let errored = e
                    .pointer("/sampling/erroredCount")
                    .cloned()
                    .unwrap_or(Value::Null);
                let sampled = e
                    .pointer("/sampling/sampleCount")
                    .cloned()
                    .unwrap_or(Value::Null);
                bump("blocked");
                out.insert("status".into(), json!("blocked"));
                out.insert(
                    "summary".into(),
                    json!(format!(
                        "blocked: {errored} of {sampled} samples produced no observation ({})",
                        e["summary"].as_str().unwrap_or("")
                    )),
                );
                evaluations.push(Value::Object(out));
                continue;
            }
            let matched = e
                .pointer("/sampling/matchingCount")
                .cloned()
                .unwrap_or(Value::Null);
            let sampled = e
                .pointer("/sampling/sampleCount")
                .cloned()
                .unwrap_or(Value::Null);
            if invoked == expect_invoked {
                (
                    "passed",
                    format!(
                        "{} as expected ({matched}/{sampled} samples agree)",
                        if invoked { "invoked" } else { "not invoked" }
                    ),
                )
            } else {
                let why = if !stable {
                    format!("no consensus: {matched}/{sampled} samples matched")
                } else {
                    findings.join("; ")
                };
                (
                    "failed",
                    format!(
                        "expected {}, {}",
                        e["expectedTrigger"].as_str().unwrap_or("?"),
                        if why.is_empty() {
                            "got the opposite".into()
                        } else {
                            why
                        }
                    ),
                )
            }
        } else {
            bump("execution");
            let thresholds = threshold_findings(e);
            let outcome = e["outcome"].as_str().unwrap_or("blocked");
            let result = if e["invoked"] == false {
                ("failed", "the skill was not invoked".to_string())
            } else if !findings.is_empty() {
                ("failed", findings.join("; "))
            } else if outcome == "passed" && !thresholds.is_empty() {
                (
                    "degraded",
                    format!(
                        "passed but over thresholds: {}",
                        thresholds
                            .iter()
                            .map(|t| format!(
                                "{} {} > {}",
                                t["metric"].as_str().unwrap_or("?"),
                                t["actual"],
                                t["limit"]
                            ))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            } else {
                let status = if OUTCOMES.contains(&outcome) {
                    outcome
                } else {
                    "blocked"
                };
                (
                    status,
                    format!("outcome {outcome}: {}", e["summary"].as_str().unwrap_or("")),
                )
            };
            if !thresholds.is_empty() {
                out.insert("thresholdFindings".into(), Value::Array(thresholds));
            }
            result
        };
        bump(status);
        out.insert("status".into(), json!(status));
        out.insert("summary".into(), json!(summary));
        evaluations.push(Value::Object(out));
    }
    let n = |k: &str| counts[k].as_u64().unwrap_or(0);
    let recommendation = if n("failed") > 0 {
        "reject"
    } else if n("degraded") + n("blocked") + n("unstable") > 0 {
        "defer"
    } else {
        "accept-now"
    };
    let mut summary = header(SUMMARY, "repo", "skill", &observed);
    copy_fields(&observed, &mut summary, &["skillId"]);
    summary.insert("recommendation".into(), json!(recommendation));
    summary.insert("evaluationCounts".into(), Value::Object(counts));
    summary.insert("evaluations".into(), Value::Array(evaluations));
    Ok(Value::Object(summary))
}
