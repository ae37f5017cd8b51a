//! The readable summary printed after a run: one line per case (status and
//! why), then the recommendation.

use std::io::Write;

use serde_json::Value;

/// Prints the per-case lines and the recommendation of a summary packet.
pub fn print_summary(out: &mut impl Write, summary: &Value) -> std::io::Result<()> {
    let empty = Vec::new();
    let evaluations = summary
        .get("evaluations")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for evaluation in evaluations {
        let status = evaluation
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let tag = match status {
            "passed" => "PASS ",
            "failed" => "FAIL ",
            "errored" => "ERROR",
            "blocked" => "BLOCK",
            "degraded" => "DEGR ",
            _ => "?    ",
        };
        let id = evaluation
            .get("caseId")
            .or_else(|| evaluation.get("evaluationId"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let why = evaluation
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or("");
        writeln!(out, "  {tag} {id} — {why}")?;
    }
    let counts = summary
        .get("evaluationCounts")
        .cloned()
        .unwrap_or(Value::Null);
    let parts: Vec<String> = counts
        .as_object()
        .map(|c| {
            c.iter()
                .filter(|(k, _)| *k != "total")
                .map(|(k, v)| format!("{v} {k}"))
                .collect()
        })
        .unwrap_or_default();
    writeln!(
        out,
        "recommendation: {} ({} cases: {})",
        summary
            .get("recommendation")
            .and_then(Value::as_str)
            .unwrap_or("?"),
        counts.get("total").cloned().unwrap_or(Value::Null),
        parts.join(", ")
    )
}
