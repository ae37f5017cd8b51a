//! Plain-Rust logic of the built-in providers, unit-tested natively; the
//! components in `plugins/provider-*` are thin wrappers around it.
//!
//! - [`api`]: one JSON call to a model API (options, retries, errors);
//! - [`openai`], [`anthropic`]: their request bodies and observations;
//!   [`openai_embed`]: the `openai` provider's embeddings;
//! - [`prompt`]: a conversation rendered as one prompt for a CLI;
//! - [`cli`]: one run of a messaging-mode CLI;
//! - [`claude_cli`]: `claude -p` in messaging mode;
//! - [`codex_cli`]: `codex exec --json` in messaging mode, its cost derived
//!   from [`prices`];
//! - [`claude_code`]: Claude Code as a coding agent in the workspace, observed
//!   from its event stream, and [`codex_agent`], Codex likewise
//!   ([`agent_trace`]: what agents' traces share);
//! - [`exec`]: the user's own program, the case as JSON on stdin;
//! - [`http_service`]: the user's own service over HTTP, the request
//!   rendered from the fixture's template ([`http_template`]), sent
//!   ([`http_call`]), the answer split ([`http_stream`]) and read by
//!   JSONPath ([`http_answer`]);
//! - [`needs`]: what each built-in provider needs from the machine (its
//!   endpoint or program, price family, generation settings).

pub mod agent_trace;
pub mod anthropic;
pub mod api;
pub mod claude_cli;
pub mod claude_code;
pub mod cli;
pub mod codex_agent;
pub mod codex_cli;
pub mod codex_turns;
pub mod exec;
pub mod http_answer;
pub mod http_call;
pub mod http_service;
pub mod http_stream;
pub mod http_template;
pub mod messaging;
pub mod needs;
pub mod openai;
pub mod openai_embed;
pub mod prices;
pub mod prompt;

pub use api::{Answer, Api, ApiOptions, Call, backoff, count};

#[cfg(test)]
mod test_support;
