//! cautilus: an evaluator for LLM applications and coding agents.
//!
//! Everything that varies between users (presets, scorers, judges, provider
//! adapters) is a WebAssembly component loaded through the WIT contract in
//! `wit/`; the host owns what must be trusted and uniform: loading, limits,
//! capability grants, scheduling, statistics and records.
//!
//! - [`contract`]: the plugin contract's version and compatibility rule;
//! - [`plugin`]: the sandboxed component runtime (engine, cache, limits,
//!   host imports, scorer sessions, built-in pack);
//! - [`taxonomy`]: the host-owned surface/preset table;
//! - [`fixture`]: loading and checking evaluation fixtures;
//! - [`eval`]: the evaluation pipeline (`eval test|evaluate|validate`);
//! - [`pack`]: preset packs: manifest, archive, installed packs, lock file;
//! - [`authoring`]: for plugin authors: examples files, building a scorer
//!   project (`plugin test`, `pack test`);
//! - [`process_tree`]: running an untrusted program so that every process it
//!   starts ends with its run (code graders, the `process` import);
//! - [`report`]: HTML, JUnit and Markdown reports of a run's records;
//! - [`schema`]: JSON Schemas of the fixture and the packets;
//! - [`file_names`]: file names made from user-written ids;
//! - [`json_members`]: an object's members as raw text (editing top levels);
//! - [`term`]: text printed to a terminal, escaped (and scrubbed of secrets);
//! - [`cli`]: the `cautilus` command line.

pub mod authoring;
pub mod cli;
pub mod contract;
pub mod cores;
pub mod eval;
pub mod evidence;
pub mod file_names;
pub mod fixture;
pub mod json_members;
pub mod json_text;
pub mod lazy_json;
pub mod pack;
pub mod plugin;
pub mod private_temp;
pub mod process_tree;
pub mod project;
pub mod quality;
pub mod regular_file;
pub mod report;
pub mod schema;
pub mod secrets;
pub mod taxonomy;
pub mod term;
pub mod tls;
pub mod wildcard;
