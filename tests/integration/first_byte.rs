//! The time to first byte (`firstByteMs`) the host records beside a case's
//! whole duration: measured at the host's HTTP transport for providers
//! that speak HTTP through it, kept by a cassette, absent for providers
//! that do not; and `[providers.openai] stream` (`CAUTILUS_OPENAI_STREAM`),
//! which makes it the time to the model's first token.

use std::path::{Path, PathBuf};

use cautilus_tests::model_server::{ModelServer, Recorded, Reply};
use serde_json::{Value, json};

use crate::support::{EvalRun, eval_run_with};

/// A two-case suite; with `trials`, an experiment (its cells in
/// `experiment.json`).
fn fixture(dir: &Path, trials: bool) -> PathBuf {
    let path = dir.join(if trials {
        "trials.fixture.yaml"
    } else {
        "latency.fixture.yaml"
    });
    let trials = if trials { "trials: 2\n" } else { "" };
    std::fs::write(
        &path,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: latency
provider: openai
model: m1
{trials}cases:
  - caseId: hello
    input: Say hello.
    expected: {{ finalText: Hello }}
  - caseId: bye
    input: Say bye.
    expected: {{ finalText: Hello }}
"
        ),
    )
    .unwrap();
    path
}

/// A Chat Completions answer streamed as OpenAI streams it: comments
/// first (a server's keep-alive pings), then the deltas, a usage chunk
/// and `[DONE]`; or the whole answer when the request did not ask for a
/// stream.
fn answer(request: &Recorded, _: usize) -> Reply {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    if body["stream"] != json!(true) {
        return Reply::json(
            200,
            json!({"model": "m1", "choices": [{"message": {"role": "assistant", "content": "Hello"}}],
                   "usage": {"prompt_tokens": 4, "completion_tokens": 1}})
            .to_string(),
        );
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"object": "chat.completion.chunk", "model": "m1-served",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let events = [
        chunk(json!({"role": "assistant"}), Value::Null),
        chunk(json!({"content": "Hel"}), Value::Null),
        chunk(json!({"content": "lo"}), Value::Null),
        chunk(json!({}), json!("stop")),
        json!({"object": "chat.completion.chunk", "model": "m1-served", "choices": [],
               "usage": {"prompt_tokens": 4, "completion_tokens": 2}})
        .to_string(),
        "[DONE]".to_string(),
    ];
    let text: String = std::iter::once(": ping\n\n".to_string())
        .chain(events.iter().map(|e| format!("data: {e}\n\n")))
        .collect();
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: text,
    }
}

fn run(
    fixture: &Path,
    server: Option<&ModelServer>,
    stream: Option<&str>,
    args: &[&str],
) -> EvalRun {
    let mut all = vec!["--provider", "openai"];
    all.extend_from_slice(args);
    eval_run_with(fixture, &all, |command| {
        command
            .env_remove("OPENAI_API_KEY")
            .env("PATH", "/usr/bin:/bin");
        match server {
            Some(server) => command.env("OPENAI_BASE_URL", format!("{}/v1", server.url)),
            None => command.env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        };
        match stream {
            Some(value) => command.env("CAUTILUS_OPENAI_STREAM", value),
            None => command.env_remove("CAUTILUS_OPENAI_STREAM"),
        };
    })
}

/// (caseId, durationMs, firstByteMs) of each evaluation (every trial's),
/// checked against the experiment record's cells when the suite is an
/// experiment (trials).
fn times(run: &EvalRun) -> Vec<(String, u64, Option<u64>)> {
    let root = run.dir.path();
    let packets: Vec<PathBuf> = if root.join("experiment.json").exists() {
        (1..=2)
            .map(|t| root.join(format!("variants/default/trial-{t}/eval-observed.json")))
            .collect()
    } else {
        vec![root.join("eval-observed.json")]
    };
    let mut evaluations = Vec::new();
    for packet in packets {
        let observed = crate::support::read_json(&packet);
        for e in observed["evaluations"].as_array().unwrap() {
            evaluations.push((
                e["caseId"].as_str().unwrap().to_string(),
                e["durationMs"].as_u64().unwrap(),
                e.get("firstByteMs").and_then(Value::as_u64),
            ));
        }
    }
    let record = run.packet("experiment.json");
    if let Some(cells) = record["cells"].as_array() {
        let mut cells: Vec<(String, u64, Option<u64>)> = cells
            .iter()
            .map(|c| {
                (
                    c["caseId"].as_str().unwrap().to_string(),
                    c["durationMs"].as_u64().unwrap(),
                    c["firstByteMs"].as_u64(),
                )
            })
            .collect();
        let mut sorted = evaluations.clone();
        sorted.sort();
        cells.sort();
        assert_eq!(
            sorted, cells,
            "the record's cells carry the evaluations' times"
        );
    }
    evaluations
}

/// The experiment record's aggregate of the time to first byte.
fn first_byte_aggregate(run: &EvalRun) -> Value {
    let record = run.packet("experiment.json");
    let aggregates = record["aggregates"].as_object().unwrap();
    aggregates.values().next().unwrap()["firstByte"].clone()
}

#[test]
fn an_http_provider_records_its_time_to_first_byte_and_a_streamed_answer_reads_as_whole() {
    let dir = tempfile::tempdir().unwrap();
    for (trials, stream) in [(false, None), (false, Some("1")), (true, Some("yes"))] {
        let fixture = fixture(dir.path(), trials);
        let server = ModelServer::start(answer);
        let run = run(&fixture, Some(&server), stream, &[]);
        assert_eq!(run.code, 0, "{stream:?}: {}\n{}", run.stdout, run.stderr);
        let requests = server.requests();
        assert_eq!(requests.len(), if trials { 4 } else { 2 });
        for request in &requests {
            let body: Value = serde_json::from_str(&request.body).unwrap();
            match stream {
                Some(_) => {
                    assert_eq!(body["stream"], json!(true));
                    assert_eq!(body["stream_options"], json!({"include_usage": true}));
                }
                None => assert!(body.get("stream").is_none(), "{body}"),
            }
        }
        let times = times(&run);
        assert_eq!(times.len(), requests.len());
        for (case, duration, first_byte) in times {
            let first_byte = first_byte.unwrap_or_else(|| panic!("{case}: no firstByteMs"));
            assert!(first_byte <= duration, "{case}: {first_byte} > {duration}");
        }
        if trials {
            assert_eq!(first_byte_aggregate(&run)["n"], json!(4));
            continue;
        }
        let evaluation = &run.packet("eval-observed.json")["evaluations"][0];
        assert_eq!(evaluation["observed"]["finalText"], "Hello", "{evaluation}");
        let expected_output = if stream.is_some() { 2 } else { 1 };
        assert_eq!(
            evaluation["usage"]["outputTokens"], expected_output,
            "{evaluation}"
        );
        if stream.is_some() {
            assert_eq!(
                evaluation["model"], "m1-served",
                "the model the stream named"
            );
        }
    }
}

#[test]
fn a_cassette_keeps_the_time_to_first_byte_and_the_fixture_backend_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture(dir.path(), false);
    let recorded = {
        let server = ModelServer::start(answer);
        let run = run(
            &fixture,
            Some(&server),
            Some("true"),
            &["--replay", "record-new"],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        times(&run)
    };
    assert!(recorded.iter().all(|(_, _, first)| first.is_some()));
    // Streamed or not is how the answer travels, not what it is: the same
    // cassette replays either way, with the recorded times.
    for stream in [Some("true"), None] {
        let replayed = run(&fixture, None, stream, &["--replay", "replay-strict"]);
        assert_eq!(replayed.code, 0, "{}", replayed.stderr);
        assert_eq!(
            times(&replayed),
            recorded,
            "{}\n{}",
            replayed.stdout,
            replayed.stderr
        );
    }
    // The fixture backend makes no HTTP request: nothing to time.
    let experiment = self::fixture(dir.path(), true);
    let canned = eval_run_with(&experiment, &["--provider", "fixture"], |_| {});
    assert!(canned.code == 0 || canned.code == 1, "{}", canned.stderr);
    assert!(times(&canned).iter().all(|(_, _, first)| first.is_none()));
    assert_eq!(first_byte_aggregate(&canned), Value::Null);
}

#[test]
fn a_bad_stream_switch_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture(dir.path(), false);
    let server = ModelServer::start(answer);
    let run = run(&fixture, Some(&server), Some("sometimes"), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("CAUTILUS_OPENAI_STREAM must be true or false, got `sometimes`"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}
