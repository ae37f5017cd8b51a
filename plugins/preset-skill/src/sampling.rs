//! `collect` (samples → sampling aggregate) and `evaluate` for repo/skill.

use cautilus_sdk::Observation;
use cautilus_sdk::preset::packet::{copy_fields, evaluation_id, run_fields};
use cautilus_sdk::preset::{CaseRun, CaseStatus, Recommendation, Sample, Verdict};
use serde_json::{Map, Value, json};

use crate::shape::{CASE_FIELDS, THRESHOLDS};

const OUTCOMES: &[&str] = &["passed", "failed", "blocked", "degraded"];
/// Case fields copied into the observed packet so it scores on its own.
const COPIED: &[&str] = CASE_FIELDS;

/// One sample's observation: from a real agent's trace, else the
/// provider's structured output, or a blocked sample when the provider
/// produced none.
fn sample_observation(case: &Value, sample: &Sample) -> Value {
    let structured = sample
        .outcome
        .as_ref()
        .ok()
        .and_then(|o| o.structured.as_deref())
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_object);
    if let Ok(observation) = &sample.outcome
        && observation.trace.is_some()
    {
        return from_trace(case, observation, structured.as_ref(), sample);
    }
    match structured {
        Some(observation) => observation,
        // No observation: the sample neither invoked nor skipped the skill.
        // It counts toward no consensus, and blocks the case if consensus fails.
        None => json!({
            "errored": true,
            "outcome": "blocked",
            "summary": sample.outcome.as_ref().err().map_or("the runner returned no observation", String::as_str),
        }),
    }
}

/// Whether the skill `target` is among the skills the agent invoked
/// (`plugin:release-notes` matches `release-notes`).
fn invoked(target: &str, skills: &[String]) -> bool {
    let tail = |s: &str| s.rsplit(':').next().unwrap_or(s).trim().to_string();
    !target.is_empty()
        && skills
            .iter()
            .any(|s| s == target || tail(s) == tail(target))
}

/// A sample of a real agent run. Whether the skill was invoked is
/// observed (the agent's skill tool, or a read of the skill's `SKILL.md`);
/// an execution's outcome is what the agent reported in its final JSON
/// object (`{"outcome": …}`, asked for by the prompt), else `passed` when
/// the skill ran and the agent finished; the command log, tokens, cost
/// and duration are the trace's. Fragment guards and thresholds then
/// overrule as for any runner.
fn from_trace(case: &Value, o: &Observation, report: Option<&Value>, sample: &Sample) -> Value {
    let trace = o.trace.as_ref().expect("checked by the caller");
    let target = case.get("targetId").and_then(Value::as_str).unwrap_or("");
    let was_invoked = invoked(target, &trace.skills);
    let mut observation = json!({
        "invoked": was_invoked,
        "summary": o.final_text.as_deref().map(|t| cautilus_sdk::excerpt(t, 400)).unwrap_or_default(),
        "commands": trace.commands,
        "skills": trace.skills,
        "duration_ms": o.duration_ms.unwrap_or(sample.duration_ms),
    });
    if case.get("evaluationKind").and_then(Value::as_str) == Some("execution") {
        let reported = report
            .and_then(|r| r.get("outcome"))
            .and_then(Value::as_str)
            .filter(|r| OUTCOMES.contains(r));
        observation["outcome"] = json!(reported.unwrap_or("passed"));
    }
    if let Some(usage) = o.usage {
        if let (Some(input), Some(output)) = (usage.input_tokens, usage.output_tokens) {
            observation["total_tokens"] = json!(input.saturating_add(output));
        }
        if let Some(cached) = usage.cached_input_tokens {
            observation["cache_read_tokens"] = json!(cached);
        }
    }
    if let Some(cost) = o.cost_usd {
        observation["cost_usd"] = json!(cost);
    }
    if let Some(transcript) = &sample.transcript {
        observation["transcript"] = json!(transcript);
    }
    observation
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

pub fn collect(case: Value, run: CaseRun) -> Value {
    aggregate(&case, &run)
}

fn aggregate(case: &Value, run: &CaseRun) -> Value {
    let samples: Vec<Value> = run
        .samples
        .iter()
        .map(|s| sample_observation(case, s))
        .collect();
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
    e.insert("fixtureRef".into(), json!(run.fixture_ref));
    let mut runtime = run_fields(run);
    runtime.remove("usage");
    runtime.remove("error");
    e.extend(runtime);
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
    let transcripts: Vec<Value> = samples
        .iter()
        .filter_map(|s| s.get("transcript"))
        .map(|path| json!({"kind": "transcript", "path": path}))
        .collect();
    if !transcripts.is_empty() {
        e.insert("artifactRefs".into(), Value::Array(transcripts));
    }
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

pub fn evaluate(e: Value) -> Verdict {
    let case_id = evaluation_id(&e);
    let findings = fragment_findings(&e);
    let body = e.clone();
    if e["evaluationKind"] == "trigger" {
        trigger_verdict(case_id, &e, body, &findings).tag("trigger")
    } else {
        execution_verdict(case_id, &e, body, &findings).tag("execution")
    }
}

fn trigger_verdict(case_id: String, e: &Value, mut body: Value, findings: &[String]) -> Verdict {
    let expect_invoked = e["expectedTrigger"] == "must_invoke";
    let invoked = e["invoked"].as_bool().unwrap_or(false) && findings.is_empty();
    let stable = e
        .pointer("/sampling/stable")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if !stable {
        body["unstable"] = json!(true);
    }
    let sampled = e
        .pointer("/sampling/sampleCount")
        .cloned()
        .unwrap_or(Value::Null);
    let verdict = if e["blocked"] == true {
        let errored = e
            .pointer("/sampling/erroredCount")
            .cloned()
            .unwrap_or(Value::Null);
        let why = format!(
            "blocked: {errored} of {sampled} samples produced no observation ({})",
            e["summary"].as_str().unwrap_or("")
        );
        Verdict::new(case_id, CaseStatus::Blocked, why, body)
    } else {
        let matched = e
            .pointer("/sampling/matchingCount")
            .cloned()
            .unwrap_or(Value::Null);
        if invoked == expect_invoked {
            let why = format!(
                "{} as expected ({matched}/{sampled} samples agree)",
                if invoked { "invoked" } else { "not invoked" }
            );
            Verdict::new(case_id, CaseStatus::Passed, why, body)
        } else {
            let why = if !stable {
                format!("no consensus: {matched}/{sampled} samples matched")
            } else {
                findings.join("; ")
            };
            let why = format!(
                "expected {}, {}",
                e["expectedTrigger"].as_str().unwrap_or("?"),
                if why.is_empty() {
                    "got the opposite".into()
                } else {
                    why
                }
            );
            Verdict::new(case_id, CaseStatus::Failed, why, body)
        }
    };
    // An unstable case defers the suite even when it would otherwise pass.
    if stable {
        verdict
    } else {
        verdict.tag("unstable").at_least(Recommendation::Defer)
    }
}

fn execution_verdict(case_id: String, e: &Value, mut body: Value, findings: &[String]) -> Verdict {
    let thresholds = threshold_findings(e);
    let outcome = e["outcome"].as_str().unwrap_or("blocked");
    let (status, why) = if e["invoked"] == false {
        (CaseStatus::Failed, "the skill was not invoked".to_string())
    } else if !findings.is_empty() {
        (CaseStatus::Failed, findings.join("; "))
    } else if outcome == "passed" && !thresholds.is_empty() {
        (
            CaseStatus::Degraded,
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
        let status = match outcome {
            "passed" => CaseStatus::Passed,
            "failed" => CaseStatus::Failed,
            "degraded" => CaseStatus::Degraded,
            _ => CaseStatus::Blocked,
        };
        (
            status,
            format!("outcome {outcome}: {}", e["summary"].as_str().unwrap_or("")),
        )
    };
    if !thresholds.is_empty() {
        body["thresholdFindings"] = Value::Array(thresholds);
    }
    Verdict::new(case_id, status, why, body)
}
