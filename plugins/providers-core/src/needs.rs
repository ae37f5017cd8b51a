//! What the built-in providers need from the machine they run on
//! ([`cautilus_sdk::provider::Needs`]): the endpoints of the model APIs,
//! the programs of the CLIs with the host variables they read and what to
//! do when they are missing, Codex's home, the price families, the
//! generation settings each applies, the API each messaging CLI stands in
//! for and what makes each usable. The host grants exactly this, and picks
//! a stand-in from it, knowing none of it.

use cautilus_sdk::provider::{Endpoint, HomeSetting, Needs, PriceFamily, Program, ProgramHome};

/// The variable that asks the `openai` provider for streamed answers
/// (`[providers.openai] stream` in `cautilus.toml` stands for it).
pub const OPENAI_STREAM_VARIABLE: &str = "CAUTILUS_OPENAI_STREAM";

/// Variables every CLI may need to find its home, temp dir and proxy.
pub const CLI_BASE_ENV: [&str; 9] = [
    "HOME",
    "USER",
    "LANG",
    "TMPDIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
];

/// What Claude Code reads its login and endpoint from.
pub const CLAUDE_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CONFIG_DIR",
    "XDG_CONFIG_HOME",
];

/// What Codex reads its login and endpoint from.
pub const CODEX_ENV: &[&str] = &[
    "CODEX_HOME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "XDG_CONFIG_HOME",
];

/// Every generation setting (the host's `fixture::settings::NAMES`).
const ALL_SETTINGS: &[&str] = &["temperature", "maxTokens", "topP", "seed", "stop"];

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The `exec` provider: nothing of the machine's but the program the
/// fixture names, which the host resolves and grants itself; it passes
/// every generation setting on to the program (which applies what it
/// reads).
pub fn exec() -> Needs {
    Needs {
        endpoint: None,
        program: None,
        prices: None,
        settings_applied: Some(strings(ALL_SETTINGS)),
        stands_in_for: None,
        setup_hint: None,
        runs_suite_program: true,
        calls_suite_service: false,
    }
}

/// The `http` provider: nothing of the machine's but the service the
/// fixture's `http` field describes, whose host (and the secrets its
/// headers name, for hosts the user granted) the host grants itself; it
/// passes every generation setting on (the body template places them).
pub fn http() -> Needs {
    Needs {
        calls_suite_service: true,
        runs_suite_program: false,
        ..exec()
    }
}

/// The `openai` API provider: an OpenAI-compatible `chat/completions`.
pub fn openai() -> Needs {
    Needs {
        endpoint: Some(Endpoint {
            url_variable: "OPENAI_BASE_URL".into(),
            default_url: "https://api.openai.com/v1".into(),
            key_variable: "OPENAI_API_KEY".into(),
            // A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) needs none.
            key_required: false,
            stream_variable: Some(OPENAI_STREAM_VARIABLE.into()),
        }),
        program: None,
        prices: Some(family("openai")),
        settings_applied: Some(strings(ALL_SETTINGS)),
        stands_in_for: None,
        setup_hint: Some(
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server such as llama.cpp, vLLM or Ollama"
                .into(),
        ),
        runs_suite_program: false,
        calls_suite_service: false,
    }
}

/// The `anthropic` API provider: the Messages API.
pub fn anthropic() -> Needs {
    Needs {
        endpoint: Some(Endpoint {
            url_variable: "ANTHROPIC_BASE_URL".into(),
            default_url: "https://api.anthropic.com".into(),
            key_variable: "ANTHROPIC_API_KEY".into(),
            key_required: true,
            stream_variable: None,
        }),
        program: None,
        prices: Some(family("anthropic")),
        // The Messages API takes no seed.
        settings_applied: Some(strings(&["temperature", "maxTokens", "topP", "stop"])),
        stands_in_for: None,
        // Said from its key variable: "set ANTHROPIC_API_KEY".
        setup_hint: None,
        runs_suite_program: false,
        calls_suite_service: false,
    }
}

/// Claude Code, as a messaging CLI (`claude-cli`) or a coding agent
/// (`claude-code`).
pub fn claude(agent: bool) -> Needs {
    let hint = if agent {
        "install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in"
    } else {
        "install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in, or use `--provider anthropic` with ANTHROPIC_API_KEY"
    };
    let mut needs = cli("claude", CLAUDE_ENV, hint, agent, None, family("anthropic"));
    if !agent {
        // A fixture asking for `anthropic` runs through Claude Code when
        // no ANTHROPIC_API_KEY is set.
        needs.stands_in_for = Some("anthropic".into());
        needs.setup_hint = Some("install and log in to Claude Code so `claude` is on PATH".into());
    }
    needs
}

/// Codex, as a messaging CLI (`codex-cli`) or a coding agent (`codex`).
pub fn codex(agent: bool) -> Needs {
    let hint = if agent {
        "install Codex (`npm install -g @openai/codex`) and log in (`codex login`)"
    } else {
        "install Codex (`npm install -g @openai/codex`) and log in (`codex login`), or use `--provider openai` with OPENAI_API_KEY"
    };
    let home = ProgramHome {
        variable: "CODEX_HOME".into(),
        default_dir: ".codex".into(),
        files: strings(&["auth.json", "config.toml"]),
    };
    // Its derived costs stand only when it talks to OpenAI.
    let prices = PriceFamily {
        redirect_variable: Some("OPENAI_BASE_URL".into()),
        home_setting: Some(HomeSetting {
            file: "config.toml".into(),
            key: "model_provider".into(),
        }),
        ..family("openai")
    };
    let mut needs = cli("codex", CODEX_ENV, hint, agent, Some(home), prices);
    if !agent {
        // A fixture asking for `openai` runs through Codex when no OpenAI
        // endpoint is set.
        needs.stands_in_for = Some("openai".into());
        needs.setup_hint = Some("install and log in to Codex so `codex` is on PATH".into());
    }
    needs
}

fn family(name: &str) -> PriceFamily {
    PriceFamily {
        name: name.into(),
        redirect_variable: None,
        home_setting: None,
    }
}

fn cli(
    name: &str,
    env: &[&str],
    hint: &str,
    agent: bool,
    home: Option<ProgramHome>,
    prices: PriceFamily,
) -> Needs {
    Needs {
        endpoint: None,
        program: Some(Program {
            name: name.into(),
            environment: CLI_BASE_ENV
                .iter()
                .chain(env)
                .map(|v| v.to_string())
                .collect(),
            install_hint: hint.into(),
            agent,
            home,
        }),
        prices: Some(prices),
        // The CLIs take none of them.
        settings_applied: Some(Vec::new()),
        stands_in_for: None,
        setup_hint: None,
        runs_suite_program: false,
        calls_suite_service: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_reads_the_base_variables_and_its_own() {
        for needs in [claude(false), claude(true), codex(false), codex(true)] {
            let program = needs.program.expect("a CLI runs a program");
            assert_eq!(&program.environment[..9], CLI_BASE_ENV.map(String::from));
            assert!(program.install_hint.starts_with("install "));
            assert_eq!(needs.settings_applied, Some(Vec::new()));
        }
        assert!(codex(true).program.unwrap().agent);
        assert!(!claude(false).program.unwrap().agent);
        assert!(codex(false).program.unwrap().home.is_some());
        assert!(claude(true).program.unwrap().home.is_none());
        // The messaging CLIs stand in for their API; the agents for nothing.
        assert_eq!(claude(false).stands_in_for.as_deref(), Some("anthropic"));
        assert_eq!(codex(false).stands_in_for.as_deref(), Some("openai"));
        assert_eq!(claude(true).stands_in_for, None);
        assert_eq!(codex(true).setup_hint, None);
    }

    #[test]
    fn apis_declare_their_endpoint_and_family() {
        let openai = openai();
        assert_eq!(openai.prices.unwrap().name, "openai");
        assert!(!openai.endpoint.unwrap().key_required);
        let anthropic = anthropic();
        assert!(anthropic.endpoint.unwrap().key_required);
        assert!(
            !anthropic
                .settings_applied
                .unwrap()
                .contains(&"seed".to_string())
        );
    }
}
