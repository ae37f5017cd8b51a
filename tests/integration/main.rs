//! The cautilus integration tests: one test binary, run against the real
//! `cautilus` binary and the real plugin runtime.
//!
//! - `agents`: the repo surface on the real `claude` (Claude Code), offline
//!   against a scripted loopback model whose answers are tool calls;
//! - `scorers`: every built-in scorer through the host, with edge cases;
//! - `sandbox`: hostile components hit every limit; the host stays healthy;
//! - `capabilities`: each host import, allowed and denied;
//! - `worlds`: preset/provider worlds load; wrong world/version refused;
//! - `cache`: the compiled cache is observably used by a second load; a
//!   long compile is announced on stderr; `plugin inspect` shows the state;
//! - `cassettes`: record once, replay offline (`--replay`), redaction;
//! - `cli_providers`: `claude-cli` with the real `claude` binary, offline
//!   against a scripted loopback Messages API (skipped when not installed);
//! - `checks_first`: every suite checked before any model call (`eval list`,
//!   a project's `eval test`); suite-level `tags`;
//! - `cli`: commands, output and exit codes;
//! - `concurrency`: provider calls in flight at once (`--concurrency`), in
//!   case order, interrupted and resumed;
//! - `exec_provider`: the `exec` provider: a Python FAQ bot answering as
//!   text and JSON, its errors, what a fixture may run, granted secrets,
//!   process trees at its timeout, variants recorded and replayed;
//! - `eval`: `eval test|evaluate|validate` with proof and negative fixtures;
//! - `kept_answers`: answers kept as they arrive (`answers.jsonl`): those
//!   behind a hanging case survive SIGKILL and a second interrupt, and
//!   `--resume` scores them without asking again; damage, redaction;
//! - `evidence`: the read models (run list, detail, cell evidence,
//!   comparison, suite progress) over a dozen real runs and a promoted
//!   baseline, and `cautilus mcp` driven by the reference MCP client;
//! - `judge_failures`: a judge whose verdicts cannot be used: every
//!   errored assertion named, counted and in the aggregates;
//! - `hostile_output`: a granted key echoed back reaches no record, report
//!   or output; hostile fixture text reaches the terminal escaped;
//! - `observed`: `eval evaluate`: schemaVersion vs declared pair, app MUST
//!   fields, `unchecked` cases;
//! - `compose`, `steps`, `snapshots`, `assertions`: fixture composition
//!   (C1–C4, discovery, interpolation) and assertions of every type;
//! - `runs`: runs under load and interruption (per-case assertion configs
//!   at scale, errored vs failed, SIGINT/SIGKILL and `--resume`);
//! - `run_dirs`: run directories: one run at a time (the lock, its holder,
//!   stale locks), never among the fixture's inputs or foreign files, and
//!   a resumed journal checked against the suite;
//! - `plugin_test`: `plugin test` and `pack test`: example answers, the
//!   diff, exit codes; Rust, Python and JavaScript projects built by it;
//! - `plugin_units`: the unit tests of the built-in components' plain Rust;
//! - `process_trees`: a code grader's processes end with it, whatever it
//!   does, and when cautilus is killed (Linux);
//! - `project`: `cautilus.toml`, fixture discovery, `eval list`, the
//!   config's defaults in `eval test`;
//! - `quality`: experiments: variants, trials, the baseline comparison,
//!   gates and the exit code, filtered runs, cassette replay,
//!   `experiment.json`;
//! - `providers`: the `openai`/`anthropic` API adapters against a scripted
//!   loopback server, and the grants a user gives a provider;
//! - `real_model`: `openai` against SmolLM2-135M served by llama.cpp (only
//!   with `CAUTILUS_TEST_SMOLLM_URL`; scripts/smollm2-server.sh);
//! - `readback`: every kind of run directory and `latest` read back by
//!   `report`, `eval compare` (verdict changes) and `eval evaluate --fixture`;
//! - `serve`: `cautilus serve`'s API over a dozen real runs (every route,
//!   refused hosts, methods, run ids and files outside the project), its
//!   app in headless Chromium (history, comparison, a cell's source line)
//!   and its live view of a slow run;
//! - `reports`: the HTML report in headless Chromium, JUnit against its
//!   schema, the Markdown summary, `cautilus report`, live progress under a
//!   pseudo-terminal;
//! - `slurm`: sharding on a one-node Slurm cluster (slurmctld, slurmd and
//!   munged started by the test; skipped when not installed): a job array
//!   of shards through scripts/cautilus-shard.sh, a dependent merge equal
//!   to the unsharded run, a requeued shard resuming from its journal;
//! - `score_judge`: `cautilus score --judge`, the project's `[judge]`,
//!   grants and cassettes of a judged score;
//! - `scaffold`: `plugin new scorer` builds and loads;
//! - `untrusted_fixtures`: fixtures written by an attacker: host keys, paths
//!   leading out of the root, workspace templates, goldens, encodings.
//! - `untrusted_files`: cassettes, baselines, answers and pack archives a
//!   user is handed: size caps, edited entries, ids as file names, deep
//!   JSON, changed manifests, zero bombs.

mod agents;
mod assertions;
mod authoring;
mod cache;
mod capabilities;
mod cassettes;
mod checks_first;
mod cli;
mod cli_providers;
mod compose;
mod concurrency;
mod eval;
mod evidence;
mod exec_provider;
mod first_byte;
mod hostile_output;
mod http_provider;
mod judge_failures;
mod kept_answers;
mod large_suites;
mod observed;
mod packs;
mod plugin_test;
mod plugin_units;
mod preset_schemas;
mod process_trees;
mod project;
mod provider_choice;
mod providers;
mod quality;
mod readback;
mod real_model;
mod reports;
mod run_dirs;
mod runs;
mod sandbox;
mod scaffold;
mod schemas;
mod score_judge;
mod scorers;
mod serve;
mod settings;
mod slurm;
mod snapshots;
mod steps;
mod support;
mod untrusted_files;
mod untrusted_fixtures;
mod worlds;
