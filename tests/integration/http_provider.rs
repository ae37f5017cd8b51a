//! The `http` provider: the user's own service (a loopback server each
//! test starts) answers each case, the request rendered from the
//! fixture's template, the answer read by JSONPath; plain JSON, server-sent
//! events, NDJSON, a session API, 429 then success, a 10 MB answer, a slow
//! first token; a secret header reaches the server and no record or
//! cassette, and only for a host the user granted; a provider mistake
//! errors its case naming it; variants with two URLs; a cassette replayed
//! with the server stopped; the FAQ bot's HTTP mode
//! (`fixtures/eval/apps/faq-bot/http_app.py`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use cautilus_tests::model_server::{ModelServer, Recorded, Reply};
use serde_json::{Value, json};

use crate::support::{all_text, cautilus, output, read_json, repo};

/// A finished run: (exit code, stdout, stderr, output directory).
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    out: PathBuf,
}

impl Run {
    fn evaluation(&self, packet: &str, case_id: &str) -> Value {
        let packet = read_json(&self.out.join(packet));
        packet["evaluations"]
            .as_array()
            .unwrap_or_else(|| panic!("{packet}\n{}\n{}", self.stdout, self.stderr))
            .iter()
            .find(|e| e["caseId"] == case_id)
            .cloned()
            .unwrap_or_else(|| panic!("no case {case_id}: {packet}"))
    }

    fn case(&self, case_id: &str) -> Value {
        self.evaluation("eval-summary.json", case_id)
    }

    fn observed(&self, case_id: &str) -> Value {
        self.evaluation("eval-observed.json", case_id)
    }

    fn said(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A new empty project holding `fixture` (its records and cassettes land
/// in it).
fn project(fixture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cautilus.toml"), "").unwrap();
    std::fs::write(dir.path().join("http.fixture.yaml"), fixture).unwrap();
    dir
}

/// `cautilus eval test` of the project's fixture with `args` and `env`
/// (nothing else of the test's environment but `PATH`).
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(dir)
        .unwrap()
        .keep();
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(dir.join("http.fixture.yaml"))
        .arg("--workspace")
        .arg(dir)
        .arg("--output-dir")
        .arg(&out)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("CAUTILUS_CACHE_DIR", crate::support::shared_cache_dir());
    for (k, v) in env {
        command.env(k, v);
    }
    let (code, stdout, stderr) = output(command.output().unwrap());
    Run {
        code,
        stdout,
        stderr,
        out,
    }
}

/// A chat suite of `cases` (YAML list items) sent to `http` (YAML flow).
fn chat_fixture(http: &str, cases: &str) -> String {
    format!(
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: http-suite\nprovider: http\nmodel: bot-1\nsettings: {{ temperature: 0.5 }}\nhttp: {http}\ncases:\n{cases}"
    )
}

const ONE_CASE: &str = "  - caseId: a\n    messages:\n      - { role: user, content: How do refunds work? }\n    assertions:\n      - { type: contains, value: \"14 days\" }\n";

fn body_of(request: &Recorded) -> Value {
    serde_json::from_str(&request.body).unwrap_or(Value::Null)
}

#[test]
fn a_json_answer_gives_text_usage_cost_and_tool_calls_from_the_rendered_request() {
    let server = ModelServer::start(|_, _| {
        Reply::json(
            200,
            json!({"data": {"reply": "Refunds take 14 days."}, "meta": {"tokens": {"in": 7, "out": 4}, "cost": 0.002},
                   "tools": [{"name": "faq_lookup", "arguments": {"topic": "refund"}, "succeeded": true}]})
            .to_string(),
        )
    });
    let http = format!(
        "{{ url: \"{}/v1/chat?case=${{caseId}}\", headers: {{ Accept: application/json }}, body: {{ question: \"${{message}}\", history: \"${{messages}}\", temperature: \"${{settings.temperature}}\", topP: \"${{settings.topP}}\", model: \"${{model}}\", note: \"case ${{caseId}} at ${{settings.temperature}}\" }}, answer: $.data.reply, usage: {{ inputTokens: $.meta.tokens.in, outputTokens: $.meta.tokens.out }}, costUsd: $.meta.cost, toolCalls: $.tools }}",
        server.url
    );
    let case = format!(
        "{ONE_CASE}      - {{ type: tool-called, tool: faq_lookup, args: {{ topic: refund }} }}\n      - {{ type: execution-metrics, max_tool_calls: 1, max_tokens: 20, max_cost_usd: 0.01 }}\n"
    );
    let dir = project(&chat_fixture(&http, &case));
    let run = run(dir.path(), &[], &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/chat?case=a");
    assert_eq!(requests[0].header("accept"), Some("application/json"));
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    // Its members in the order the fixture wrote them.
    assert!(
        requests[0].body.starts_with("{\"question\":"),
        "{}",
        requests[0].body
    );
    assert_eq!(
        body_of(&requests[0]),
        json!({"question": "How do refunds work?", "history": [{"role": "user", "content": "How do refunds work?"}],
               "temperature": 0.5, "topP": null, "model": "bot-1", "note": "case a at 0.5"})
    );
    let observed = run.observed("a");
    assert_eq!(observed["harness"], "http");
    assert_eq!(observed["observed"]["finalText"], "Refunds take 14 days.");
    assert_eq!(observed["costUsd"], 0.002);
    assert_eq!(observed["costSource"], "reported");
    let text = observed.to_string();
    assert!(text.contains("\"outputTokens\":4"), "{text}");
    // Its tool calls, tokens and cost were captured: the tool assertion
    // and the bounds were checked against them (an uncaptured one fails).
    let case = run.case("a");
    assert_eq!(case["status"], "passed", "{case}");
    assert_eq!(case["assertions"].as_array().unwrap().len(), 3, "{case}");
    let state = read_json(&run.out.join("run.json"));
    assert!(state.get("settingsNotApplied").is_none(), "{state}");
}

#[test]
fn server_sent_events_and_ndjson_are_joined_into_one_answer() {
    let server = ModelServer::start(|request, _| {
        if request.path == "/sse" {
            Reply {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                body: ": ping\n\ndata: {\"delta\": \"Refunds take \"}\n\nevent: x\ndata: {\"delta\": \"14 days.\"}\n\ndata: {\"usage\": {\"out\": 5}}\n\ndata: [DONE]\n\n".into(),
            }
        } else {
            Reply {
                status: 200,
                headers: vec![("content-type".into(), "application/x-ndjson".into())],
                body: "{\"t\": \"Refunds \"}\n{\"t\": \"take 14 days.\"}\n{\"done\": true, \"n\": 3}\n".into(),
            }
        }
    });
    for (path, stream, answer, usage) in [
        ("sse", "sse", "$.delta", "$.usage.out"),
        ("ndjson", "ndjson", "$.t", "$.n"),
    ] {
        let http = format!(
            "{{ url: \"{}/{path}\", body: {{ q: \"${{message}}\" }}, stream: {stream}, answer: \"{answer}\", usage: {{ outputTokens: \"{usage}\" }} }}",
            server.url
        );
        let dir = project(&chat_fixture(&http, ONE_CASE));
        let run = run(dir.path(), &[], &[]);
        assert_eq!(run.code, 0, "{stream}: {}", run.said());
        let observed = run.observed("a");
        assert_eq!(
            observed["observed"]["finalText"], "Refunds take 14 days.",
            "{stream}"
        );
        assert!(
            observed.get("firstByteMs").is_some(),
            "{stream}: {observed}"
        );
        let usage = observed.to_string();
        let expected = if stream == "sse" { 5 } else { 3 };
        assert!(
            usage.contains(&format!("\"outputTokens\":{expected}")),
            "{stream}: {usage}"
        );
    }
}

#[test]
fn a_session_sends_one_request_per_user_turn_with_the_id_of_the_first_answer() {
    // The first turn has no id yet (`/chat/`); the later ones carry it in
    // the URL and the body, as a session API asks.
    let server = ModelServer::start(|request, index| {
        let body = body_of(request);
        let text = body["text"].as_str().unwrap_or("");
        match (index, request.path.as_str(), body["session"].as_str()) {
            (0, "/chat/", None) => Reply::json(
                200,
                json!({"session": {"id": "s 42"}, "reply": "hello"}).to_string(),
            ),
            (_, "/chat/s%2042", Some("s 42")) => Reply::json(
                200,
                json!({"reply": format!("turn {}: {text}", index + 1)}).to_string(),
            ),
            _ => Reply::json(400, json!({"error": "no session"}).to_string()),
        }
    });
    let http = format!(
        "{{ url: \"{}/chat/${{session.id}}\", body: {{ text: \"${{message}}\", session: \"${{session.id}}\" }}, answer: $.reply, session: {{ idPath: $.session.id }} }}",
        server.url
    );
    let dir = project(&chat_fixture(
        &http,
        "  - caseId: a\n    messages:\n      - { role: user, content: Hi }\n      - { role: assistant, content: (the service answers) }\n      - { role: user, content: Refunds? }\n      - { role: user, content: Shipping? }\n    assertions:\n      - { type: contains, value: \"turn 3: Shipping?\" }\n",
    ));
    let run = run(dir.path(), &[], &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one request per user turn");
    assert_eq!(body_of(&requests[0])["session"], Value::Null);
    assert_eq!(body_of(&requests[2])["session"], "s 42");
    let observed = run.observed("a");
    assert_eq!(observed["observed"]["finalText"], "turn 3: Shipping?");
    // Every turn is in the transcript, the service's answers in place of
    // the case's scripted one.
    let messages: Vec<(String, String)> = observed["observed"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("user", "Hi"),
        ("assistant", "hello"),
        ("user", "Refunds?"),
        ("assistant", "turn 2: Refunds?"),
        ("user", "Shipping?"),
        ("assistant", "turn 3: Shipping?"),
    ];
    assert_eq!(
        messages,
        expected.map(|(r, c)| (r.to_string(), c.to_string()))
    );
}

#[test]
fn a_session_opened_by_a_start_request_carries_its_id_from_the_first_turn() {
    // A REST session API: `POST /sessions` gives the id, every turn goes
    // to `/sessions/<id>/turns`; a case whose start answer lacks the id
    // errors naming the path and quoting the answer.
    let server = ModelServer::start(|request, _| {
        let body = body_of(request);
        match request.path.as_str() {
            "/sessions"
                if body["user"] == "a"
                    && body["first"] == "Hi"
                    && body["so_far"].as_array().map(Vec::len) == Some(1) =>
            {
                Reply::json(201, json!({"session": {"id": "s-7"}}).to_string())
            }
            "/sessions" => Reply::json(200, json!({"status": "full"}).to_string()),
            "/sessions/s-7/turns" => Reply::json(
                200,
                json!({"reply": format!("s-7 heard {}", body["text"].as_str().unwrap_or(""))})
                    .to_string(),
            ),
            _ => Reply::json(404, json!({"error": "no such session"}).to_string()),
        }
    });
    let http = format!(
        "{{ url: \"{0}/sessions/${{session.id}}/turns\", body: {{ text: \"${{message}}\" }}, answer: $.reply, session: {{ idPath: $.session.id, start: {{ url: \"{0}/sessions\", body: {{ user: \"${{caseId}}\", first: \"${{message}}\", so_far: \"${{messages}}\" }} }} }} }}",
        server.url
    );
    let cases = "  - caseId: a\n    messages:\n      - { role: user, content: Hi }\n      - { role: user, content: Refunds? }\n    assertions:\n      - { type: contains, value: \"s-7 heard Refunds?\" }\n";
    let dir = project(&chat_fixture(
        &http,
        &(cases.to_string() + &cases.replace("caseId: a", "caseId: b")),
    ));
    let run = run(dir.path(), &[], &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.case("a")["status"], "passed", "{}", run.said());
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths.iter().filter(|p| *p == "/sessions/s-7/turns").count(),
        2,
        "{paths:?}"
    );
    assert!(!paths.iter().any(|p| p.contains("//")), "{paths:?}");
    let b = run.case("b");
    assert_eq!(b["status"], "errored", "{b}");
    assert!(
        b.to_string().contains(
            "the session id path `$.session.id` found nothing in the answer to the session's start request"
        ) && b.to_string().contains("full"),
        "{b}"
    );
}

#[test]
fn a_rate_limited_request_is_retried_after_its_retry_after() {
    let server = ModelServer::start(|_, index| {
        if index == 0 {
            Reply::json(429, json!({"error": "slow down"}).to_string())
                .with_header("retry-after", "1")
        } else {
            Reply::json(200, json!({"reply": "Refunds take 14 days."}).to_string())
        }
    });
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, answer: $.reply }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let run = run(dir.path(), &[], &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(server.requests().len(), 2);
    let observed = run.observed("a");
    assert_eq!(observed["retries"], 1, "{observed}");
    assert!(
        observed["durationMs"].as_u64().unwrap() >= 1000,
        "{observed}"
    );
}

#[test]
fn a_get_request_carries_the_case_in_its_query() {
    let server = ModelServer::start(|request, _| {
        Reply::json(
            200,
            json!({"answers": [{"text": format!("{} {}", request.method, request.path)}]})
                .to_string(),
        )
    });
    let http = format!(
        "{{ url: \"{}/ask?q=${{message}}&case=${{caseId}}\", method: GET, answer: \"$.answers[0].text\" }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let run = run(dir.path(), &[], &[]);
    // The answer is the request line, which fails the case's assertion.
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        run.observed("a")["observed"]["finalText"],
        "GET /ask?q=How%20do%20refunds%20work%3F&case=a"
    );
    assert_eq!(server.requests()[0].body, "");
}

#[test]
fn a_slow_first_token_is_recorded_as_first_byte_ms() {
    let server = ModelServer::start(|_, _| {
        std::thread::sleep(Duration::from_millis(700));
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: "data: {\"delta\": \"Refunds take 14 days.\"}\n\ndata: [DONE]\n\n".into(),
        }
    });
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, stream: sse, answer: $.delta }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let run = run(dir.path(), &[], &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let observed = run.observed("a");
    let first = observed["firstByteMs"].as_u64().expect("firstByteMs");
    assert!(first >= 700, "{observed}");
    assert!(observed["durationMs"].as_u64().unwrap() >= first);
}

#[test]
fn a_request_past_its_time_limit_errors_its_case() {
    let server = ModelServer::start(|_, _| {
        std::thread::sleep(Duration::from_millis(1500));
        Reply::json(200, json!({"reply": "Refunds take 14 days."}).to_string())
    });
    // The field's limit, and the field's capped by --timeout-ms.
    for (limit, args) in [("300", &[][..]), ("20000", &["--timeout-ms", "400"][..])] {
        let http = format!(
            "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, answer: $.reply, timeoutMs: {limit} }}",
            server.url
        );
        let dir = project(&chat_fixture(&http, ONE_CASE));
        let run = run(dir.path(), args, &[]);
        assert_eq!(run.code, 1, "{}", run.said());
        let case = run.case("a");
        assert_eq!(case["status"], "errored", "{case}");
        let said = case.to_string();
        let ms = if limit == "300" { "300" } else { "400" };
        assert!(
            said.contains(&format!(
                "no answer from {}/chat within {ms} ms",
                server.url
            )),
            "{said}"
        );
    }
}

#[test]
fn a_10_mb_answer_errors_its_case_naming_the_limit_until_it_is_raised() {
    // The answer is short; the documents beside it are 10 MB.
    let server = ModelServer::start(|_, _| {
        let big = "x".repeat(10 * 1024 * 1024);
        Reply::json(
            200,
            format!("{{\"reply\": \"Refunds take 14 days.\", \"documents\": \"{big}\"}}"),
        )
    });
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, answer: $.reply }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let started = std::time::Instant::now();
    let run = run(dir.path(), &[], &[]);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(run.code, 1, "{}", run.said());
    let case = run.case("a");
    assert_eq!(case["status"], "errored", "{case}");
    let said = case.to_string();
    assert!(said.contains("larger than 1048576 bytes"), "{said}");
    assert!(said.contains("--output-mib"), "{said}");
    // Raised (with the memory to hold it), the answer is read from it.
    let raised = self::run(
        dir.path(),
        &["--output-mib", "16", "--memory-mib", "256"],
        &[],
    );
    assert_eq!(raised.code, 0, "{}", raised.said());
    assert_eq!(
        raised.observed("a")["observed"]["finalText"],
        "Refunds take 14 days."
    );
}

#[test]
fn provider_mistakes_error_the_case_naming_the_template_or_path_with_an_excerpt() {
    let server = ModelServer::start(|request, _| {
        if request.path == "/missing" {
            Reply::json(404, json!({"error": "no such route"}).to_string())
        } else {
            Reply::json(200, json!({"text": "Refunds take 14 days."}).to_string())
        }
    });
    let rows = [
        (
            "/chat",
            "{ q: \"${message}\" }",
            "$.reply",
            vec![
                "the answer path `$.reply` found nothing in the response from",
                "Refunds take 14 days.",
            ],
        ),
        (
            "/chat",
            "{ q: \"${messages[3].content}\" }",
            "$.text",
            vec!["`http.body.q`: `${messages[3].content}`: the case has no such value"],
        ),
        (
            "/missing",
            "{ q: \"${message}\" }",
            "$.text",
            vec!["HTTP 404 from", "no such route"],
        ),
    ];
    for (path, body, answer, expected) in rows {
        let http = format!(
            "{{ url: \"{}{path}\", body: {body}, answer: \"{answer}\" }}",
            server.url
        );
        let dir = project(&chat_fixture(&http, ONE_CASE));
        let run = run(dir.path(), &[], &[]);
        assert_eq!(run.code, 1, "{path} {body}: {}", run.said());
        let case = run.case("a");
        assert_eq!(case["status"], "errored", "{case}");
        let said = case.to_string();
        for line in &expected {
            assert!(said.contains(line), "{line}\nnot in {said}");
        }
    }
    // What the host can check stops the run before it starts, naming the
    // field's path and the fixture's line.
    let rows = [
        (
            "{ url: \"http://127.0.0.1:9/x\", body: { q: \"${inputs}\" }, answer: $.a }",
            "http.body.q",
            "`inputs` is not a field of the case",
        ),
        (
            "{ url: \"http://127.0.0.1:9/x\", answer: \"$.a[\" }",
            "http.answer",
            "is not a JSONPath",
        ),
        (
            "{ url: \"http://127.0.0.1:9/x\", headers: { Authorization: Bearer sk-1 }, answer: $.a }",
            "http.headers.Authorization",
            "carries a credential and the fixture is public",
        ),
        (
            "{ url: \"http://127.0.0.1:9/x\", answer: $.a, retries: 3 }",
            "http.retries",
            "unknown field `retries`",
        ),
    ];
    for (http, path, message) in rows {
        let dir = project(&chat_fixture(http, ONE_CASE));
        let run = run(dir.path(), &[], &[]);
        assert_eq!(run.code, 2, "{http}: {}", run.said());
        assert!(
            run.stderr.contains("http.fixture.yaml:")
                && run.stderr.contains(&format!("{path}: "))
                && run.stderr.contains(message),
            "{http}: {}",
            run.stderr
        );
    }
}

const SECRET: &str = "http-secret-value-5150";

/// A server that answers only requests carrying the secret.
fn guarded() -> ModelServer {
    ModelServer::start(|request, _| {
        if request.header("x-api-key") == Some(SECRET)
            && request.header("authorization") == Some(&format!("Bearer {SECRET}"))
        {
            Reply::json(
                200,
                json!({"reply": format!("Refunds take 14 days. You sent {SECRET}.")}).to_string(),
            )
        } else {
            Reply::json(401, json!({"error": "bad key"}).to_string())
        }
    })
}

fn secret_fixture(server: &ModelServer) -> String {
    let http = format!(
        "{{ url: \"{}/chat\", headers: {{ X-Api-Key: {{ secret: BOT_KEY }}, Authorization: {{ bearerSecret: BOT_KEY }} }}, body: {{ q: \"${{message}}\" }}, answer: $.reply }}",
        server.url
    );
    chat_fixture(&http, ONE_CASE)
}

#[test]
fn a_granted_secret_reaches_the_server_and_no_record_or_cassette() {
    let server = guarded();
    let dir = project(&secret_fixture(&server));
    let run_in = run;
    let run = run_in(
        dir.path(),
        &[
            "--grant-secret",
            "BOT_KEY=ACME_BOT_KEY",
            "--grant-http",
            "127.0.0.1",
            "--replay",
            "record-new",
        ],
        &[("ACME_BOT_KEY", SECRET)],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        run.observed("a")["observed"]["finalText"],
        "Refunds take 14 days. You sent [redacted]."
    );
    let cassette = dir.path().join(".cautilus/cassettes/http-suite.json");
    assert!(cassette.exists());
    let everything = all_text(dir.path());
    assert!(
        !everything.contains(SECRET),
        "a record or cassette holds the secret"
    );
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
    // Replayed without the key, its grants or the server (CI): the key
    // holds the secret's name only.
    drop(server);
    let replayed = run_in(dir.path(), &["--replay", "replay-strict"], &[]);
    assert_eq!(replayed.code, 0, "{}", replayed.said());
    assert_eq!(
        replayed.observed("a")["observed"]["finalText"],
        "Refunds take 14 days. You sent [redacted]."
    );
}

/// A key with the characters servers escape (`/`, `+`, `=`).
const SLASHED: &str = "sk-proj/Ab+9=http-5151";

/// `text` with every UTF-16 unit as a JSON `\uXXXX` escape.
fn all_u_escaped(text: &str) -> String {
    text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

#[test]
fn a_secret_echoed_in_any_escaping_is_redacted_from_errors_records_and_output() {
    // PHP's `\/`, a server that escapes every character, a query string
    // quoted back, an HTML error page; and one answer that decodes to it.
    let forms = [
        SLASHED.replace('/', "\\/"),
        all_u_escaped(SLASHED),
        "sk-proj%2FAb%2B9%3Dhttp-5151".to_string(),
        "sk-proj&#47;Ab&#x2B;9&#61;http-5151".to_string(),
    ];
    let bodies = forms.clone();
    let server = ModelServer::start(move |request, _| {
        let q = body_of(request)["q"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match q
            .strip_prefix("form ")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) => Reply::json(400, format!("{{\"error\": \"bad key {}\"}}", bodies[n])),
            None => Reply::json(
                200,
                format!("{{\"reply\": \"14 days, key {}\"}}", bodies[1]),
            ),
        }
    });
    let http = format!(
        "{{ url: \"{}/chat\", headers: {{ Authorization: {{ bearerSecret: BOT_KEY }} }}, body: {{ q: \"${{message}}\" }}, answer: $.reply }}",
        server.url
    );
    let mut cases = String::new();
    for n in 0..forms.len() {
        cases.push_str(&format!(
            "  - caseId: e{n}\n    messages:\n      - {{ role: user, content: form {n} }}\n"
        ));
    }
    cases.push_str(ONE_CASE);
    let dir = project(&chat_fixture(&http, &cases));
    let run = run(
        dir.path(),
        &[
            "--grant-secret",
            "BOT_KEY=ACME_BOT_KEY",
            "--grant-http",
            "127.0.0.1",
        ],
        &[("ACME_BOT_KEY", SLASHED)],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    for n in 0..forms.len() {
        let case = run.case(&format!("e{n}"));
        assert_eq!(case["status"], "errored", "{case}");
        assert!(case.to_string().contains("bad key [redacted]"), "{case}");
    }
    assert_eq!(
        run.observed("a")["observed"]["finalText"],
        "14 days, key [redacted]"
    );
    let everything = format!("{}{}", all_text(dir.path()), run.said());
    // Whatever escaping a record or report adds on top: no piece of any
    // form is left (its start, its end, the escaped `s` it starts with).
    for piece in ["sk-proj", "http-5151", "u0073"] {
        assert!(
            !everything.contains(piece),
            "`{piece}` is in a record or the output"
        );
    }
}

#[test]
fn cases_the_template_tells_apart_by_id_replay_their_own_answers() {
    let server = ModelServer::start(|request, _| {
        let case = body_of(request)["case"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Reply::json(
            200,
            json!({"reply": format!("answer for {case}")}).to_string(),
        )
    });
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ case: \"${{caseId}}\", q: \"${{message}}\" }}, answer: $.reply }}",
        server.url
    );
    // The same question in both: only the id tells them apart.
    let cases = ONE_CASE.to_string() + &ONE_CASE.replace("caseId: a", "caseId: b");
    let dir = project(&chat_fixture(&http, &cases));
    let recorded = run(dir.path(), &["--replay", "record-new"], &[]);
    assert_eq!(server.requests().len(), 2, "{}", recorded.said());
    drop(server);
    let replayed = run(dir.path(), &["--replay", "replay-strict"], &[]);
    for case in ["a", "b"] {
        assert_eq!(
            replayed.observed(case)["observed"]["finalText"],
            format!("answer for {case}"),
            "{}",
            replayed.said()
        );
    }
}

#[test]
fn each_trial_of_an_experiment_is_recorded_as_its_own_call() {
    // A service whose answer changes from call to call: trial 2 must ask
    // it again (not replay trial 1's recording), and a second recording
    // run replays each trial's own answer without asking.
    let server = ModelServer::start(|_, index| {
        Reply::json(
            200,
            json!({"reply": format!("call {}", index + 1)}).to_string(),
        )
    });
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, answer: $.reply }}\ntrials: 2\nvariants: {{ deployed: {{}} }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let args = ["--replay", "record-new", "--concurrency", "1"];
    let first = run(dir.path(), &args, &[]);
    assert_eq!(server.requests().len(), 2, "{}", first.said());
    let again = run(dir.path(), &args, &[]);
    assert_eq!(server.requests().len(), 2, "{}", again.said());
    let answers: std::collections::BTreeSet<String> = (1..=2)
        .map(|trial| {
            let observed = read_json(&again.out.join(format!(
                "variants/deployed/trial-{trial}/eval-observed.json"
            )));
            observed["evaluations"][0]["observed"]["finalText"]
                .as_str()
                .unwrap_or_else(|| panic!("{observed}\n{}", again.said()))
                .to_string()
        })
        .collect();
    assert_eq!(
        answers,
        ["call 1", "call 2"].map(String::from).into(),
        "{}",
        again.said()
    );
}

#[test]
fn a_secret_a_header_cannot_carry_errors_its_case_naming_the_variable() {
    let server = guarded();
    let dir = project(&secret_fixture(&server));
    for (value, said) in [
        (
            "http-secret-value-5150\n",
            "holds a control character (U+000A, a line break",
        ),
        ("", "which is empty"),
    ] {
        let run = run(
            dir.path(),
            &[
                "--grant-secret",
                "BOT_KEY=ACME_BOT_KEY",
                "--grant-http",
                "127.0.0.1",
            ],
            &[("ACME_BOT_KEY", value)],
        );
        let case = run.case("a");
        assert_eq!(case["status"], "errored", "{case}");
        assert!(
            case.to_string().contains(said) && case.to_string().contains("ACME_BOT_KEY"),
            "{case}"
        );
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[test]
fn a_later_step_that_would_send_a_secret_to_an_ungranted_host_stops_the_run_before_step_one() {
    let server = ModelServer::start(|_, _| Reply::json(200, json!({"reply": "ok"}).to_string()));
    let step = |suite: &str, url: &str, headers: &str| {
        format!(
            "  - schemaVersion: cautilus.evaluation_input.v1\n    surface: app\n    preset: chat\n    suiteId: {suite}\n    provider: http\n    model: bot\n    http: {{ url: \"{url}\", headers: {{ {headers} }}, body: {{ q: \"${{message}}\" }}, answer: $.reply }}\n    cases:\n      - caseId: a\n        messages: [{{ role: user, content: hi }}]\n"
        )
    };
    let fixture = format!(
        "schemaVersion: cautilus.evaluation_input.v1\nsuiteId: two-services\nsteps:\n{}{}",
        step("first", &format!("{}/chat", server.url), ""),
        step(
            "second",
            "http://localhost:9/chat",
            "X-Api-Key: { secret: KEY }"
        ),
    );
    let dir = project(&fixture);
    let run = run(
        dir.path(),
        &["--grant-secret", "KEY=THE_KEY", "--grant-http", "127.0.0.1"],
        &[("THE_KEY", "k-123456")],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.said()
            .contains("would send secret `KEY` to `localhost`"),
        "{}",
        run.said()
    );
    assert!(
        server.requests().is_empty(),
        "step 0 ran before step 1 was refused"
    );
}

#[test]
fn a_secret_goes_only_to_a_host_the_user_granted() {
    let server = guarded();
    let dir = project(&secret_fixture(&server));
    let denied = run(
        dir.path(),
        &["--grant-secret", "BOT_KEY=ACME_BOT_KEY"],
        &[("ACME_BOT_KEY", SECRET)],
    );
    assert_eq!(denied.code, 2, "{}", denied.said());
    assert!(
        denied
            .stderr
            .contains("http.headers.X-Api-Key: would send secret `BOT_KEY` to `127.0.0.1`")
            && denied.stderr.contains("--grant-http 127.0.0.1"),
        "{}",
        denied.stderr
    );
    let ungranted = run(dir.path(), &["--grant-http", "127.0.0.1"], &[]);
    assert_eq!(ungranted.code, 2, "{}", ungranted.said());
    assert!(
        ungranted.stderr.contains("--grant-secret BOT_KEY=ENV_VAR"),
        "{}",
        ungranted.stderr
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    // The project's config grants the host as the flag does.
    std::fs::write(
        dir.path().join("cautilus.toml"),
        "[grants]\nhttp = [\"127.0.0.1\"]\nsecrets = { BOT_KEY = \"ACME_BOT_KEY\" }\n",
    )
    .unwrap();
    let configured = run(dir.path(), &[], &[("ACME_BOT_KEY", SECRET)]);
    assert_eq!(configured.code, 0, "{}", configured.said());
}

#[test]
fn variants_call_two_deployments_and_replay_with_the_servers_stopped() {
    let full = ModelServer::start(|_, _| {
        Reply::json(
            200,
            json!({"reply": "Refunds take 14 days. Keep your receipt."}).to_string(),
        )
    });
    let brief = ModelServer::start(|_, _| {
        Reply::json(200, json!({"reply": "Refunds take 14 days."}).to_string())
    });
    // The variant's `http` is merged over the suite's: its URL alone.
    let http = |server: &ModelServer| {
        format!(
            "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\" }}, answer: $.reply }}",
            server.url
        )
    };
    let fixture = format!(
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: http-variants\nprovider: http\nmodel: bot\nhttp: {}\nvariants:\n  full: {{}}\n  brief:\n    http: {{ url: \"{}/chat\" }}\nbaseline: full\ncases:\n  - caseId: refund\n    messages:\n      - {{ role: user, content: How do refunds work? }}\n    assertions:\n      - {{ type: contains, value: receipt }}\n",
        http(&full),
        brief.url
    );
    let dir = project(&fixture);
    let verdicts = |run: &Run| -> Vec<String> {
        ["full", "brief"]
            .iter()
            .map(|variant| {
                let summary = read_json(
                    &run.out
                        .join(format!("variants/{variant}/trial-1/eval-summary.json")),
                );
                format!("{variant}: {}", summary["evaluations"][0]["status"])
            })
            .collect()
    };
    let recorded = run(dir.path(), &["--replay", "record-new"], &[]);
    assert_ne!(recorded.code, 2, "{}", recorded.said());
    assert_eq!(
        verdicts(&recorded),
        ["full: \"passed\"", "brief: \"failed\""]
    );
    assert_eq!((full.requests().len(), brief.requests().len()), (1, 1));
    let cassette =
        std::fs::read_to_string(dir.path().join(".cautilus/cassettes/http-variants.json")).unwrap();
    assert!(
        cassette.contains(&full.url) && cassette.contains(&brief.url),
        "each variant's URL is in its key"
    );
    drop((full, brief));
    std::thread::sleep(Duration::from_millis(50));
    let replayed = run(dir.path(), &["--replay", "replay-strict"], &[]);
    assert_eq!(replayed.code, recorded.code, "{}", replayed.said());
    assert_eq!(verdicts(&replayed), verdicts(&recorded));
}

/// The FAQ bot's HTTP mode, started on a free port.
struct FaqBot {
    child: std::process::Child,
    port: String,
}

impl FaqBot {
    fn start(key: Option<&str>) -> Self {
        use std::io::BufRead;
        let mut command = std::process::Command::new("python3");
        command
            .arg(repo().join("fixtures/eval/apps/faq-bot/http_app.py"))
            .arg("0")
            .stdout(std::process::Stdio::piped());
        if let Some(key) = key {
            command.env("FAQ_BOT_KEY", key);
        }
        let mut child = command.spawn().expect("python3 runs the FAQ bot");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().rsplit(':').next().unwrap().to_string();
        Self { child, port }
    }
}

impl Drop for FaqBot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_faq_bot_service_answers_as_json_and_as_events() {
    // The JSON example sends a key (a granted secret) to a bot that checks
    // it; the event-stream one sends none.
    let (keyed, open) = (FaqBot::start(Some(SECRET)), FaqBot::start(None));
    let source = repo().join("fixtures/eval/apps/faq-bot");
    for (fixture, cases, bot) in [
        (
            "faq-http.fixture.yaml",
            &["refund", "hours", "unknown"][..],
            &keyed,
        ),
        (
            "faq-http-sse.fixture.yaml",
            &["shipping", "hours"][..],
            &open,
        ),
    ] {
        let dir = project(&std::fs::read_to_string(source.join(fixture)).unwrap());
        let run = run(
            dir.path(),
            &["--grant-secret", "FAQ_BOT_KEY", "--grant-http", "127.0.0.1"],
            &[("FAQ_BOT_PORT", &bot.port), ("FAQ_BOT_KEY", SECRET)],
        );
        assert_eq!(run.code, 0, "{fixture}: {}", run.said());
        for case in cases {
            assert_eq!(run.case(case)["status"], "passed", "{}", run.case(case));
            assert_eq!(run.observed(case)["harness"], "http");
        }
        assert!(!all_text(dir.path()).contains(SECRET));
        if fixture == "faq-http.fixture.yaml" {
            // The judge read the service's answer.
            let judged = run.case("refund").to_string();
            assert!(judged.contains("fixture judge"), "{judged}");
        }
    }
}

#[test]
fn a_variant_that_would_send_a_secret_to_an_ungranted_host_stops_the_run_before_any_variant_runs() {
    let server = ModelServer::start(|_, _| Reply::json(200, json!({"reply": "ok"}).to_string()));
    let http = format!(
        "{{ url: \"{}/chat\", headers: {{ X-Api-Key: {{ secret: KEY }} }}, body: {{ q: \"${{message}}\" }}, answer: $.reply }}\nvariants:\n  here: {{}}\n  elsewhere: {{ http: {{ url: \"http://localhost:9/chat\" }} }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let run = run(
        dir.path(),
        &["--grant-secret", "KEY=THE_KEY", "--grant-http", "127.0.0.1"],
        &[("THE_KEY", "k-123456")],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.said().contains(
            "http.headers.X-Api-Key: in variant `elsewhere`: would send secret `KEY` to `localhost`"
        ),
        "{}",
        run.said()
    );
    assert!(!run.said().contains("PASS"), "{}", run.said());
}

#[test]
fn a_fixture_may_not_interpolate_the_variable_a_granted_secret_comes_from() {
    // `${{ ACME }}` would put the secret's value in the body, sent to
    // whatever host the fixture names: refused before the run, whatever
    // the variable's name.
    let server = ModelServer::start(|_, _| Reply::json(200, json!({"reply": "ok"}).to_string()));
    let http = format!(
        "{{ url: \"{}/chat\", body: {{ q: \"${{message}}\", k: \"${{{{ ACME }}}}\" }}, answer: $.reply }}",
        server.url
    );
    let dir = project(&chat_fixture(&http, ONE_CASE));
    let run = run(
        dir.path(),
        &["--grant-secret", "MYKEY=ACME", "--grant-http", "127.0.0.1"],
        &[("ACME", "sk-exfil-value-777")],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.said()
            .contains("reads the variable a secret granted to this run comes from"),
        "{}",
        run.said()
    );
    assert!(server.requests().is_empty(), "the service was called");
    // Not granted as a secret, an ordinary variable interpolates.
    let plain = self::run(dir.path(), &[], &[("ACME", "plain-value")]);
    assert_eq!(plain.code, 1, "{}", plain.said());
    // A value holding a credential is refused whatever its variable's name
    // (connection strings, URLs with a password, proxies with a user).
    for value in [
        "postgres://app:s3cret@db:5432/prod",
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==",
        "http://user:pass@proxy:3128",
    ] {
        let refused = self::run(dir.path(), &[], &[("ACME", value)]);
        assert_eq!(refused.code, 2, "{value}: {}", refused.said());
        assert!(
            refused
                .said()
                .contains("`${{ ACME }}`'s value holds a credential"),
            "{}",
            refused.said()
        );
        assert!(!refused.said().contains("s3cret") && !refused.said().contains("abc=="));
    }
    assert!(server.requests().len() <= 1, "only the plain run called it");
}
