//! Coding agents on the repo surface, with the real `claude` binary (npm
//! `@anthropic-ai/claude-code`) working offline against a scripted loopback
//! Messages API. The script answers with tool calls, so the real CLI runs
//! real tools (Read, Bash, Write) in cautilus's copy of the workspace, and
//! cautilus observes its real event stream. A test whose CLI is not on PATH
//! says so and passes; `.ci/run` installs it.

use std::path::Path;

use cautilus_tests::model_server::{
    ModelServer, Recorded, Reply, anthropic_blocks, openai_responses_items,
};
use serde_json::{Value, json};

use crate::support::{all_text, cautilus, codex_home, output, repo};

const KEY: &str = "sk-ant-agent-loopback-4242";
const MODEL: &str = "claude-sonnet-4-6";

fn claude_installed() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("claude").is_file()));
    if !found {
        eprintln!(
            "skipping: `claude` is not on PATH (npm install -g @anthropic-ai/claude-code; .ci/run installs it)"
        );
    }
    found
}

/// The agent's working directory, from Claude Code's system prompt.
fn working_directory(body: &str) -> String {
    let at = body
        .find("orking directory: ")
        .map(|i| i + "orking directory: ".len())
        .expect("Claude Code names its working directory");
    body[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\')
        .collect()
}

/// What the scripted model does for a prompt: its tool calls in order,
/// then its final answer.
fn script(prompt: &str, cwd: &str) -> (Vec<Value>, String) {
    let read =
        |file: &str| json!({"name": "Read", "input": {"file_path": format!("{cwd}/{file}")}});
    let bash = |command: &str| json!({"name": "Bash", "input": {"command": command, "description": "run"}});
    // The skill probe (fixtures/eval/repo/skill).
    if prompt.contains("Write the release notes") {
        return (
            vec![read("skills/release-notes/SKILL.md")],
            "Following the release-notes skill.".into(),
        );
    }
    if prompt.contains("Rename the variable") {
        return (vec![bash("ls")], "There is no src/main.rs to edit.".into());
    }
    if prompt.contains("Draft release notes") {
        return (
            vec![
                read("skills/release-notes/SKILL.md"),
                bash("git log --oneline -5 || true"),
            ],
            "Drafted RELEASE_NOTES.md from the log.\n{\"outcome\": \"passed\"}".into(),
        );
    }
    if prompt.contains("Which command runs the tests") {
        (
            vec![read("AGENTS.md")],
            "The tests run with `cargo test --workspace`.\n{\"selectedSkill\": \"none\", \"reasonSummary\": \"a question\"}".into(),
        )
    } else {
        (
            vec![
                read("AGENTS.md"),
                json!({"name": "Bash", "input": {"command": "cat wit/README.md docs/ARCHITECTURE.md | head -5", "description": "read the route's files"}}),
                json!({"name": "Write", "input": {"file_path": format!("{cwd}/NOTES.md"), "content": "route: wit-contract\n"}}),
            ],
            "I took the wit-contract route.\n{\"selectedSkill\": \"wit-contract\", \"reasonSummary\": \"a new host import\"}".into(),
        )
    }
}

/// The loopback Messages API: each request of the agent's session gets the
/// next step of its prompt's script (counted by the tool results so far).
fn agent_api(request: &Recorded, _: usize) -> Reply {
    if request.method != "POST" || !request.path.starts_with("/v1/messages") {
        return Reply::json(200, "{}");
    }
    if request.path.contains("count_tokens") {
        return Reply::json(200, r#"{"input_tokens": 10}"#);
    }
    let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
    // Side requests (titles, summaries) carry no tools: answer in words.
    if body["tools"].as_array().is_none_or(Vec::is_empty) {
        return anthropic_blocks(MODEL, &[json!({"type": "text", "text": "ok"})]);
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text_of = |m: &Value| match &m["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let prompt = messages.first().map(text_of).unwrap_or_default();
    let results = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count();
    let (calls, answer) = script(&prompt, &working_directory(&request.body));
    match calls.get(results) {
        Some(call) => anthropic_blocks(
            MODEL,
            &[json!({"type": "tool_use", "id": format!("toolu_{results}"),
                     "name": call["name"], "input": call["input"]})],
        ),
        None => anthropic_blocks(MODEL, &[json!({"type": "text", "text": answer})]),
    }
}

/// `cautilus eval test --fixture F --workspace W --output-dir O`.
fn eval_command(fixture: &Path, workspace: &Path, out: &Path) -> std::process::Command {
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(workspace)
        .arg("--output-dir")
        .arg(out);
    command
}

/// Runs `eval test` with the loopback model and a throwaway HOME.
fn eval_test(
    fixture: &Path,
    workspace: &Path,
    extra: &[&str],
    server: &ModelServer,
) -> (i32, String, String, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = eval_command(fixture, workspace, out.path());
    command
        .args(extra)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("HOME", home.path());
    let (code, stdout, stderr) = output(command.output().unwrap());
    (code, stdout, stderr, out)
}

fn packet(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

fn evaluation<'a>(packet: &'a Value, id: &str) -> &'a Value {
    packet["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caseId"] == id)
        .unwrap_or_else(|| panic!("no evaluation `{id}` in {packet}"))
}

/// The seed's success criterion: with Claude Code installed and no other
/// configuration, `eval test --fixture <whole-repo fixture>` runs the agent
/// on this repository and records provider, model, harness, durationMs and
/// costUsd.
#[test]
fn claude_code_routes_this_repository_by_its_agents_md() {
    if !claude_installed() {
        return;
    }
    let server = ModelServer::start(agent_api);
    let fixture = repo().join("fixtures/eval/repo/whole-repo/agents-routing.fixture.json");
    let (code, stdout, stderr, out) = eval_test(&fixture, &repo(), &[], &server);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS  route-new-host-import"), "{stdout}");
    // Each sample has its own copy, so cases may overlap; records keep case order.
    let (code, parallel, stderr, _) =
        eval_test(&fixture, &repo(), &["--concurrency", "2"], &server);
    assert_eq!(code, 0, "{parallel}\n{stderr}");
    let first = |text: &str, id: &str| text.find(id).unwrap_or(usize::MAX);
    assert!(
        first(&parallel, "route-new-host-import") < first(&parallel, "route-question"),
        "{parallel}"
    );

    let observed = packet(out.path(), "eval-observed.json");
    let routed = evaluation(&observed, "route-new-host-import");
    assert_eq!(routed["provider"], "anthropic");
    assert_eq!(routed["model"], MODEL, "the model that answered");
    assert_eq!(routed["harness"], "claude_code");
    assert!(routed["durationMs"].as_u64().is_some(), "{routed}");
    assert!(routed["costUsd"].as_f64().is_some(), "{routed}");
    // Observed, not canned: what the agent read and ran.
    assert_eq!(routed["entryFile"], "AGENTS.md");
    assert_eq!(
        routed["loadedSupportingFiles"],
        json!(["wit/README.md", "docs/ARCHITECTURE.md"])
    );
    assert_eq!(
        routed["routingDecision"]["firstToolCall"],
        "Read(AGENTS.md)"
    );
    assert_eq!(routed["routingDecision"]["selectedSkill"], "wit-contract");
    // The raw transcript is saved, linked and redacted.
    let transcript = routed["artifactRefs"][0]["path"].as_str().unwrap();
    let text = std::fs::read_to_string(out.path().join(transcript)).unwrap();
    assert!(text.contains("\"type\":\"result\""), "{text}");
    // The HTML report shows it with the case.
    let report = cautilus::report::load(out.path()).unwrap();
    let row = report
        .cases
        .iter()
        .find(|c| c.id == "route-new-host-import")
        .unwrap();
    let shown = row
        .transcript
        .as_ref()
        .expect("the transcript in the report");
    assert_eq!(shown.path, transcript);
    assert!(shown.text.contains("\"type\":\"result\""), "{}", shown.text);
    assert!(
        cautilus::report::html::render(&report)
            .unwrap()
            .contains("\\\"type\\\":\\\"result\\\"")
    );
    assert!(
        !all_text(out.path()).contains(KEY),
        "the key reached a record"
    );
    // The agent was really run: the server saw its tool results.
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.body.contains("tool_result") && r.body.contains("how to route work")),
        "the real Read tool returned AGENTS.md to the model"
    );
    // Read-only by default: the Write was denied, and nothing was written.
    assert!(!repo().join("NOTES.md").exists());

    // So on that trace, `tools-succeeded` fails and names the denied call.
    let suite = tempfile::tempdir().unwrap();
    let denied = suite.path().join("denied.fixture.json");
    std::fs::write(
        &denied,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "repo",
            "preset": "whole-repo",
            "suiteId": "denied",
            "cases": [{
                "caseId": "denied",
                "prompt": "Add a host import. Read the repo instructions first.",
                "expectedEntryFile": "AGENTS.md",
                "assertions": [{"type": "tools-succeeded"}]
            }]
        })
        .to_string(),
    )
    .unwrap();
    let workspace = user_workspace();
    let (code, stdout, stderr, _) = eval_test(&denied, workspace.path(), &[], &server);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("assertion `tools-succeeded` failed: failed: `Write` (call 3)"),
        "{stdout}"
    );
}

/// A small workspace of the user's, which the agent must not change.
fn user_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("AGENTS.md"),
        "# how to route work\n\nRoutes: wit-contract, none.\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("wit")).unwrap();
    std::fs::write(dir.path().join("wit/README.md"), "# WIT\n").unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/ARCHITECTURE.md"), "# Architecture\n").unwrap();
    dir
}

#[test]
fn real_traces_fail_expectations_and_trajectories_and_never_touch_the_users_tree() {
    if !claude_installed() {
        return;
    }
    let server = ModelServer::start(agent_api);
    let workspace = user_workspace();
    let before = all_text(workspace.path());
    let suite = tempfile::tempdir().unwrap();
    let fixture = suite.path().join("edit.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "repo",
            "preset": "whole-repo",
            "suiteId": "agent-edits",
            "agent": {"permissions": "edit"},
            "cases": [{
                "caseId": "strays",
                "prompt": "Add a host import. Read the repo instructions first.",
                "expectedEntryFile": "AGENTS.md",
                "forbiddenSupportingFiles": ["wit/README.md"],
                "allowedFirstToolCalls": ["Bash(ls)"],
                "expectedRouting": {"selectedSkill": "none"},
                "assertions": [
                    {"type": "tool-called", "tool": "Read", "args": {"file_path": "AGENTS.md"}},
                    {"type": "tool-trajectory", "mode": "strict", "tools": ["Read", "Bash", "Write"]},
                    {"type": "tools-succeeded"},
                    {"type": "tool-not-called", "tool": "Write", "required": false},
                    {"type": "tool-order", "before": "Write", "after": "Bash", "required": false}
                ]
            }, {
                // The same kind of trace against the other half of the checks.
                "caseId": "inverse",
                "prompt": "Add a host import. Read the repo instructions first.",
                "expectedEntryFile": "README.md",
                "requiredInstructionFiles": ["CLAUDE.md"],
                "requiredSupportingFiles": ["wit/README.md", "docs/ARCHITECTURE.md"],
                "assertions": [
                    {"type": "tool-called", "tool": "Grep", "required": false},
                    {"type": "tool-trajectory", "mode": "superset", "tools": ["Bash", "Write"]},
                    {"type": "tool-not-called", "tool": "Grep"},
                    {"type": "tool-order", "before": "Read", "after": "Write"},
                    {"type": "tool-count", "tool": "Read", "min": 1},
                    {"type": "tool-count", "max": 2, "required": false},
                    {"type": "tool-trajectory", "mode": "subset", "tools": ["Read", "Bash"], "required": false}
                ]
            }]
        })
        .to_string(),
    )
    .unwrap();
    let (code, stdout, stderr, out) = eval_test(
        &fixture,
        workspace.path(),
        &["--provider", "claude-code", "--keep-workspaces"],
        &server,
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");

    let summary = packet(out.path(), "eval-summary.json");
    let case = evaluation(&summary, "strays");
    assert_eq!(case["status"], "failed", "{case}");
    let results = &case["expectationResults"];
    assert_eq!(results["entryFile"]["status"], "passed", "{case}");
    for failed in ["supportingFiles", "routing", "firstToolCall"] {
        assert_eq!(results[failed]["status"], "failed", "{failed}: {case}");
    }
    let statuses: Vec<(&str, &str)> = case["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("tool-called", "passed"),
            ("tool-trajectory", "passed"),
            ("tools-succeeded", "passed"),
            ("tool-not-called", "failed"),
            ("tool-order", "failed"),
        ]
    );

    let inverse = evaluation(&summary, "inverse");
    assert_eq!(inverse["status"], "failed", "{inverse}");
    let results = &inverse["expectationResults"];
    assert_eq!(results["supportingFiles"]["status"], "passed", "{inverse}");
    for failed in ["entryFile", "instructionFiles"] {
        assert_eq!(results[failed]["status"], "failed", "{failed}: {inverse}");
    }
    let statuses: Vec<&str> = inverse["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "failed", "passed", "passed", "passed", "passed", "failed", "failed"
        ],
        "{inverse}"
    );

    // The agent wrote NOTES.md in its copy (kept on request), never in the
    // user's tree.
    assert_eq!(
        all_text(workspace.path()),
        before,
        "the user's tree changed"
    );
    let kept = stderr
        .lines()
        .find_map(|l| {
            l.split_once("sample 1: ")
                .map(|(_, p)| p.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no kept workspace in {stderr}"));
    let notes = Path::new(&kept).join("NOTES.md");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "route: wit-contract\n",
        "the agent's Write ran in its copy"
    );
    for line in stderr
        .lines()
        .filter(|l| l.starts_with("kept the workspace"))
    {
        let path = line.rsplit_once(": ").unwrap().1.trim();
        std::fs::remove_dir_all(path).unwrap();
    }
}

/// A one-case routing suite on `workspace`.
fn question_fixture(dir: &Path) -> std::path::PathBuf {
    let fixture = dir.join("question.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "repo",
            "preset": "whole-repo",
            "suiteId": "agent-question",
            "cases": [{
                "caseId": "question",
                "prompt": "Which command runs the tests in this repository? Do not change anything.",
                "expectedEntryFile": "AGENTS.md",
                "expectedRouting": {"selectedSkill": "none"}
            }]
        })
        .to_string(),
    )
    .unwrap();
    fixture
}

#[test]
fn a_recorded_agent_run_replays_without_the_agent_and_a_changed_repository_misses() {
    if !claude_installed() {
        return;
    }
    let server = ModelServer::start(agent_api);
    let workspace = user_workspace();
    let suite = tempfile::tempdir().unwrap();
    let fixture = question_fixture(suite.path());
    let (code, stdout, stderr, recorded) = eval_test(
        &fixture,
        workspace.path(),
        &["--replay", "record-new"],
        &server,
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let calls = server.requests().len();
    let cassette = workspace
        .path()
        .join(".cautilus/cassettes/agent-question.json");
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(text.contains("\"workspaceHash\""), "{text}");
    assert!(!text.contains(KEY), "the key reached the cassette");

    // Replayed with no agent on PATH and no credentials: the same result.
    let replay = |label: &str| {
        let out = tempfile::tempdir().unwrap();
        let mut command = eval_command(&fixture, workspace.path(), out.path());
        command
            .args(["--replay", "replay-strict"])
            .env("PATH", "/nonexistent")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL");
        let (code, stdout, stderr) = output(command.output().unwrap());
        eprintln!("{label}: {stdout}{stderr}");
        (code, stdout, stderr, out)
    };
    let (code, stdout, stderr, replayed) = replay("replay");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(server.requests().len(), calls, "no live call on replay");
    let live = evaluation(&packet(recorded.path(), "eval-observed.json"), "question").clone();
    let again = evaluation(&packet(replayed.path(), "eval-observed.json"), "question").clone();
    for key in [
        "harness",
        "model",
        "entryFile",
        "routingDecision",
        "loadedInstructionFiles",
    ] {
        assert_eq!(live[key], again[key], "{key}");
    }
    assert_eq!(again["harness"], "claude_code");

    // The repository changed: the recorded answer no longer applies.
    std::fs::write(workspace.path().join("AGENTS.md"), "# changed\n").unwrap();
    let (code, stdout, stderr, _) = replay("changed");
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("a changed repository is a miss"),
        "{stdout}\n{stderr}"
    );
}

fn codex_installed() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("codex").is_file()));
    if !found {
        eprintln!(
            "skipping: `codex` is not on PATH (npm install -g @openai/codex; .ci/run installs it)"
        );
    }
    found
}

/// The loopback Responses API for Codex: each request gets the next shell
/// command of the script (through Codex's `exec` tool, counted by the tool
/// outputs so far), then the answer.
fn codex_api(request: &Recorded, _: usize) -> Reply {
    if request.method != "POST" || !request.path.ends_with("/responses") {
        return Reply::json(200, r#"{"data": []}"#);
    }
    let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let done = input
        .iter()
        .filter(|i| i["type"] == "custom_tool_call_output" || i["type"] == "function_call_output")
        .count();
    let prompt = input
        .iter()
        .filter(|i| i["role"] == "user")
        .map(|i| i.to_string())
        .collect::<String>();
    let (commands, answer): (&[&str], &str) = if prompt.contains("Add a host import") {
        (
            &[
                "cat AGENTS.md",
                "cat wit/README.md docs/ARCHITECTURE.md | head -5",
            ],
            "I took the wit-contract route.\n{\"selectedSkill\": \"wit-contract\"}",
        )
    } else {
        (
            &["cat AGENTS.md | head -3", "sed -n 1,3p wit/README.md"],
            "Run `cargo test --workspace`.\n{\"selectedSkill\": \"none\"}",
        )
    };
    // Codex offers `exec_command` as a function for the models it knows,
    // and through its JavaScript `exec` tool for its default one.
    let function = body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "exec_command"));
    match commands.get(done) {
        Some(command) if function => openai_responses_items(
            "gpt-5-mini",
            &[
                json!({"type": "function_call", "id": format!("fc_{done}"), "call_id": format!("call_{done}"),
                     "name": "exec_command", "status": "completed",
                     "arguments": json!({"cmd": command}).to_string()}),
            ],
        ),
        Some(command) => openai_responses_items(
            "gpt-5-mini",
            &[
                json!({"type": "custom_tool_call", "id": format!("ctc_{done}"), "call_id": format!("call_{done}"),
                     "name": "exec", "status": "completed",
                     "input": format!("const r = await tools.exec_command({{cmd: '{command}'}}); text(r.output);")}),
            ],
        ),
        None => openai_responses_items(
            "gpt-5-mini",
            &[
                json!({"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                     "content": [{"type": "output_text", "annotations": [], "text": answer}]}),
            ],
        ),
    }
}

#[test]
fn codex_works_a_repo_case_observed_from_its_events() {
    if !codex_installed() {
        return;
    }
    let server = ModelServer::start(codex_api);
    let home = codex_home(&server);
    let workspace = user_workspace();
    let before = all_text(workspace.path());
    let suite = tempfile::tempdir().unwrap();
    let fixture = question_fixture(suite.path());
    let text = std::fs::read_to_string(&fixture).unwrap().replace(
        "\"suiteId\":\"agent-question\"",
        "\"suiteId\":\"agent-question\",\"agent\":{\"model\":\"gpt-5-mini\",\"codexHome\":\"isolated\"}",
    );
    std::fs::write(&fixture, text).unwrap();
    let run = |key: Option<&str>| {
        let out = tempfile::tempdir().unwrap();
        let mut command = eval_command(&fixture, workspace.path(), out.path());
        command
            .args(["--provider", "codex"])
            .env("CODEX_HOME", home.path())
            .env("HOME", suite.path())
            // Codex talks to the loopback server, not OpenAI: its calls get
            // a cost only from prices configured for that endpoint.
            .env(
                "CAUTILUS_OPENAI_PRICES",
                r#"{"gpt-5-mini": {"input": 0.25, "output": 2.0}}"#,
            )
            .env_remove("OPENAI_API_KEY");
        if let Some(key) = key {
            command.env("OPENAI_API_KEY", key);
        }
        let (code, stdout, stderr) = output(command.output().unwrap());
        (code, stdout, stderr, out)
    };
    let entries = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let operator_home = entries(home.path());
    let (code, stdout, stderr, out) = run(Some(KEY));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // `codexHome: isolated`: Codex kept its sessions and logs in a
    // temporary home, not in the operator's.
    assert_eq!(entries(home.path()), operator_home);
    let observed = packet(out.path(), "eval-observed.json");
    let case = evaluation(&observed, "question");
    assert_eq!(case["harness"], "codex_exec");
    assert_eq!(case["provider"], "openai");
    assert_eq!(case["model"], "gpt-5-mini");
    assert!(case["costUsd"].as_f64().is_some(), "{case}");
    assert_eq!(case["costSource"], "configured", "{case}");
    assert_eq!(case["entryFile"], "AGENTS.md");
    assert_eq!(case["loadedSupportingFiles"], json!(["wit/README.md"]));
    assert_eq!(
        case["routingDecision"]["firstToolCall"], "exec_command(cat AGENTS.md | head -3)",
        "{case}"
    );
    let summary = packet(out.path(), "eval-summary.json");
    assert_eq!(evaluation(&summary, "question")["status"], "passed");
    let transcript = case["artifactRefs"][0]["path"].as_str().unwrap();
    assert!(
        std::fs::read_to_string(out.path().join(transcript))
            .unwrap()
            .contains("command_execution")
    );
    assert!(
        !all_text(out.path()).contains(KEY),
        "the key reached a record"
    );
    assert_eq!(all_text(workspace.path()), before);

    // Not logged in (the isolated home has no key to find): blocked, with the fix.
    let (_, stdout, _, out) = run(None);
    assert!(stdout.contains("BLOCK question"), "{stdout}");
    let summary = packet(out.path(), "eval-summary.json");
    let blocked = evaluation(&summary, "question");
    assert_eq!(blocked["status"], "blocked", "{blocked}");
    assert_eq!(blocked["blockerKind"], "runner_auth_missing", "{blocked}");
    assert!(
        blocked["summary"].as_str().unwrap().contains("codex login"),
        "{blocked}"
    );
}

#[test]
fn claude_code_triggers_and_executes_the_skill_probe_on_real_traces() {
    if !claude_installed() {
        return;
    }
    let server = ModelServer::start(agent_api);
    let dir = repo().join("fixtures/eval/repo/skill");
    let workspace = dir.join("workspace");
    let (code, stdout, stderr, out) = eval_test(
        &dir.join("release-notes.fixture.json"),
        &workspace,
        &[],
        &server,
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let summary = packet(out.path(), "eval-summary.json");
    let trigger = evaluation(&summary, "trigger-on-release-notes-request");
    assert_eq!(trigger["status"], "passed", "{trigger}");
    assert_eq!(
        trigger["sampling"]["invokedCount"], 3,
        "three real samples read SKILL.md: {trigger}"
    );
    assert_eq!(
        evaluation(&summary, "no-trigger-on-unrelated-request")["status"],
        "passed"
    );
    let execution = evaluation(&summary, "execute-release-notes");
    assert_eq!(execution["status"], "passed", "{execution}");
    let observed = packet(out.path(), "eval-observed.json");
    let executed = evaluation(&observed, "execute-release-notes");
    assert!(
        executed["commands"].to_string().contains("git log"),
        "{executed}"
    );
    assert_eq!(
        evaluation(&observed, "trigger-on-release-notes-request")["artifactRefs"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "one transcript per sample"
    );

    // The same traces against expectations they break.
    let broken = tempfile::tempdir().unwrap();
    let mut fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("release-notes.fixture.json")).unwrap(),
    )
    .unwrap();
    fixture["cases"][1]["expectedTrigger"] = json!("must_invoke");
    fixture["cases"][2]["forbiddenCommandFragments"] = json!(["git log"]);
    let path = broken.path().join("broken.fixture.json");
    std::fs::write(&path, fixture.to_string()).unwrap();
    let (code, stdout, stderr, out) = eval_test(&path, &workspace, &[], &server);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let summary = packet(out.path(), "eval-summary.json");
    assert_eq!(
        evaluation(&summary, "trigger-on-release-notes-request")["status"],
        "passed"
    );
    assert_eq!(
        evaluation(&summary, "no-trigger-on-unrelated-request")["status"],
        "failed"
    );
    assert_eq!(
        evaluation(&summary, "execute-release-notes")["status"],
        "failed"
    );
}

/// This repository's own routing test through the real `codex`.
#[test]
fn codex_routes_this_repository_by_its_agents_md() {
    if !codex_installed() {
        return;
    }
    let server = ModelServer::start(codex_api);
    let home = codex_home(&server);
    let out = tempfile::tempdir().unwrap();
    let fixture = repo().join("fixtures/eval/repo/whole-repo/agents-routing.fixture.json");
    let mut command = eval_command(&fixture, &repo(), out.path());
    command
        .args(["--provider", "codex"])
        .env("CODEX_HOME", home.path())
        .env("OPENAI_API_KEY", KEY)
        .env("HOME", out.path());
    let (code, stdout, stderr) = output(command.output().unwrap());
    // The scripted answer to the question reads wit/README.md, which that
    // case forbids: a failing expectation on a real Codex trace.
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS  route-new-host-import"), "{stdout}");
    assert!(
        stdout.contains("FAIL  route-question — supportingFiles: missing required [], loaded forbidden [\"wit/README.md\"]"),
        "{stdout}"
    );
    let observed = packet(out.path(), "eval-observed.json");
    let routed = evaluation(&observed, "route-new-host-import");
    assert_eq!(routed["harness"], "codex_exec");
    assert_eq!(routed["entryFile"], "AGENTS.md");
    assert_eq!(
        routed["routingDecision"]["firstToolCall"],
        "exec_command(cat AGENTS.md)"
    );
    assert_eq!(
        routed["loadedSupportingFiles"],
        json!(["wit/README.md", "docs/ARCHITECTURE.md"])
    );
}

#[test]
fn claude_code_without_a_login_blocks_with_runner_auth_missing() {
    if !claude_installed() {
        return;
    }
    let suite = tempfile::tempdir().unwrap();
    let fixture = question_fixture(suite.path());
    let workspace = user_workspace();
    let out = tempfile::tempdir().unwrap();
    let mut command = eval_command(&fixture, workspace.path(), out.path());
    command
        .args(["--provider", "claude-code"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("HOME", suite.path());
    let (_, stdout, stderr) = output(command.output().unwrap());
    let summary = packet(out.path(), "eval-summary.json");
    let blocked = evaluation(&summary, "question");
    assert_eq!(blocked["status"], "blocked", "{stdout}\n{stderr}");
    assert_eq!(blocked["blockerKind"], "runner_auth_missing", "{blocked}");
    assert!(
        blocked["summary"].as_str().unwrap().contains("log in"),
        "{blocked}"
    );
}
