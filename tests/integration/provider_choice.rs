//! Which provider a run gets without `--provider`, and what a project's
//! `[providers.<id>]` tables may set: both follow from what the built-in
//! providers declare, through the binary, with the words the host used
//! when it named the providers itself.

use crate::support::{cautilus, output, repo};

/// `eval test` of a copy of the chat fixture asking for `provider` in
/// `project`, with no key, base URL or CLI reachable (an empty PATH).
fn run_unreachable(project: &std::path::Path, provider: &str) -> (i32, String, String) {
    let text =
        std::fs::read_to_string(repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml"))
            .unwrap()
            .replace("provider: anthropic", &format!("provider: {provider}"));
    std::fs::write(project.join("chat.fixture.yaml"), text).unwrap();
    let empty = project.join("no-programs");
    std::fs::create_dir_all(&empty).unwrap();
    let mut command = cautilus();
    command
        .current_dir(project)
        .args(["eval", "test", "--fixture", "chat.fixture.yaml"])
        .env("PATH", &empty);
    for variable in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ] {
        command.env_remove(variable);
    }
    output(command.output().unwrap())
}

#[test]
fn a_fixture_whose_provider_nothing_here_can_reach_is_refused_with_each_way() {
    let project = tempfile::tempdir().unwrap();
    for (asked, ways) in [
        (
            "anthropic",
            "set ANTHROPIC_API_KEY (the `anthropic` API provider), or install and log in to Claude Code so `claude` is on PATH (`claude-cli`)",
        ),
        (
            "openai",
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server such as llama.cpp, vLLM or Ollama (the `openai` API provider), or install and log in to Codex so `codex` is on PATH (`codex-cli`)",
        ),
    ] {
        let (code, stdout, stderr) = run_unreachable(project.path(), asked);
        assert_eq!(code, 2, "{asked}: {stdout}{stderr}");
        let says = format!(
            "provider `{asked}`: the fixture asks for `{asked}` and nothing here can reach it: {ways}; or run without a model: `--provider fixture`"
        );
        assert!(stderr.contains(&says), "{asked}: {stderr}");
    }
}

#[test]
fn a_providers_table_of_no_declared_endpoint_is_refused_naming_the_file_and_the_ids() {
    let project = tempfile::tempdir().unwrap();
    for (table, says) in [
        (
            "[providers.opnai]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
            "unknown key `providers.opnai`; did you mean `openai`? keys here: openai, anthropic",
        ),
        (
            "[providers.codex-cli]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
            "unknown key `providers.codex-cli`; keys here: openai, anthropic",
        ),
        (
            "[providers.anthropic]\nstream = true\n",
            "unknown key `providers.anthropic.stream`; keys here: base_url, prices",
        ),
    ] {
        let config = project.path().join("cautilus.toml");
        std::fs::write(&config, table).unwrap();
        let (code, stdout, stderr) = run_unreachable(project.path(), "openai");
        assert_eq!(code, 2, "{table}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{}: {says}", config.display())),
            "{table}: {stderr}"
        );
        // `eval list` checks the tables as `eval test` does.
        let list = cautilus()
            .current_dir(project.path())
            .args(["eval", "list", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let (code, _, stderr) = output(list);
        assert_eq!(code, 2, "{table}: {stderr}");
        assert!(stderr.contains(says), "{table}: {stderr}");
    }
    // A table the provider declares is used: the run reaches its base URL's
    // server (here none: refused at the call, not for the table).
    std::fs::write(
        project.path().join("cautilus.toml"),
        "[providers.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let (_, stdout, stderr) = run_unreachable(project.path(), "openai");
    assert!(
        !stderr.contains("nothing here can reach it"),
        "{stdout}{stderr}"
    );
    assert!(!stderr.contains("unknown key"), "{stdout}{stderr}");
}
