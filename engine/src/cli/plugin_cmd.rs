//! `cautilus plugin list|inspect|new|test`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde::Serialize;

use super::registry;
use super::scaffold::{self, NewPresetArgs, NewScorerArgs};
use crate::plugin::bindings::types::{Capability, CostClass};
use crate::plugin::{CacheStatus, Description, Plugin};

const LIST_EXAMPLES: &str = "\
Examples:
  cautilus plugin list
  cautilus plugin list ./my_scorer.wasm --json";

const INSPECT_EXAMPLES: &str = "\
Examples:
  cautilus plugin inspect contains
  cautilus plugin inspect ./target/wasm32-wasip2/release/my_scorer.wasm --json";

const NEW_EXAMPLES: &str = "\
Examples:
  cautilus plugin new scorer mentions-all
  cautilus plugin new scorer mentions-all --path plugins/mentions-all
  cautilus plugin new scorer tone-check --lang python
  cautilus plugin new scorer tone-check --lang javascript
  cautilus plugin new preset exact-prompt";

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// List built-in plugins and any given components
    #[command(after_help = LIST_EXAMPLES)]
    List(ListArgs),
    /// Show what a plugin describes: scorers, config schemas, cost class
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect(InspectArgs),
    /// Create a new plugin crate
    #[command(subcommand, after_help = NEW_EXAMPLES)]
    New(NewCommand),
    /// Build a scorer project if needed and run its example answers (exit 0 all pass, 1 one fails, 2 error)
    Test(super::plugin_test::TestArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Extra .wasm components to list besides the built-in ones
    paths: Vec<PathBuf>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A built-in id (component or scorer) or a .wasm path
    reference: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum NewCommand {
    /// A scorer project (Rust, Python or JavaScript) that builds with the one command it prints
    #[command(after_help = NEW_EXAMPLES)]
    Scorer(NewScorerArgs),
    /// A preset crate (an app/prompt preset of your own) that builds with `cargo build --release --target wasm32-wasip2`
    #[command(after_help = NEW_EXAMPLES)]
    Preset(NewPresetArgs),
}

pub fn run(command: PluginCommand) -> anyhow::Result<ExitCode> {
    match command {
        PluginCommand::List(args) => list(args),
        PluginCommand::Inspect(args) => inspect(args),
        PluginCommand::New(NewCommand::Scorer(args)) => scaffold::new_scorer(args),
        PluginCommand::New(NewCommand::Preset(args)) => scaffold::new_preset(args),
        PluginCommand::Test(args) => super::plugin_test::run(args),
    }
}

/// One row of `plugin list`: one per scorer, preset or provider.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    id: String,
    kind: &'static str,
    component: String,
    version: String,
    wit_version: &'static str,
    sha256: String,
    capabilities: Vec<String>,
    source: String,
    compiled_cache: &'static str,
}

fn rows(plugin: &Plugin) -> Result<Vec<Row>, crate::plugin::PluginError> {
    let cache = plugin.cache_status()?;
    let info = plugin.description.plugin_info();
    let row = |id: &str| Row {
        id: id.to_string(),
        kind: plugin.kind.as_str(),
        component: info.id.clone(),
        version: info.version.clone(),
        wit_version: plugin.wit_version,
        sha256: plugin.sha256.clone(),
        capabilities: info.capabilities.iter().map(capability_text).collect(),
        source: plugin.label.clone(),
        compiled_cache: cache.as_str(),
    };
    Ok(match &plugin.description {
        Description::Scorer(pack) => pack.scorers.iter().map(|s| row(&s.id)).collect(),
        Description::Preset(p) => vec![row(&format!("{}/{}", p.info.surface, p.info.preset))],
        Description::Provider(_) => vec![row(&info.id)],
    })
}

fn capability_text(capability: &Capability) -> String {
    match capability {
        Capability::Model => "model".into(),
        Capability::Http(hosts) => format!("http({})", hosts.join(",")),
        Capability::Process(programs) => format!("process({})", programs.join(",")),
    }
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    let mut plugins: Vec<_> = registry.builtins()?.to_vec();
    for path in &args.paths {
        plugins.push(registry.load_path(path)?);
    }
    let mut all = Vec::new();
    for plugin in &plugins {
        all.extend(rows(plugin)?);
    }
    let rows = all;
    if args.json {
        crate::outln!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&rows)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::term_println!(
        "{:<16} {:<9} {:<8} {:<6} {:<13} {:<14} SOURCE",
        "ID",
        "KIND",
        "VERSION",
        "WIT",
        "SHA256",
        "CAPABILITIES"
    );
    for row in &rows {
        let caps = if row.capabilities.is_empty() {
            "-".to_string()
        } else {
            row.capabilities.join(" ")
        };
        crate::term_println!(
            "{:<16} {:<9} {:<8} {:<6} {:<13} {:<14} {}",
            row.id,
            row.kind,
            row.version,
            row.wit_version,
            &row.sha256[..12],
            caps,
            row.source
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Inspection {
    id: String,
    kind: &'static str,
    version: String,
    description: String,
    wit_version: &'static str,
    sha256: String,
    source: String,
    capabilities: Vec<String>,
    /// What `eval test` would grant it on this machine now.
    granted: serde_json::Value,
    compiled_cache: &'static str,
    /// The component's length in bytes, and as people write it.
    size_bytes: u64,
    size: String,
    /// Whether its compiled artifact was cached before this command
    /// (`cached`, `not cached`: this command compiled it, or `off`).
    cache_state: &'static str,
    /// Where its compiled artifact is stored now, if it is.
    cache_path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scorers: Vec<ScorerView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preset: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScorerView {
    id: String,
    description: String,
    cost_class: &'static str,
    config_schema: serde_json::Value,
}

fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    let plugin = registry.resolve_plugin(&args.reference)?;
    let cache = plugin.cache_status()?;
    let info = plugin.description.plugin_info();
    let mut view = Inspection {
        id: info.id.clone(),
        kind: plugin.kind.as_str(),
        version: info.version.clone(),
        description: info.description.clone(),
        wit_version: plugin.wit_version,
        sha256: plugin.sha256.clone(),
        source: plugin.label.clone(),
        capabilities: info.capabilities.iter().map(capability_text).collect(),
        granted: serde_json::Value::Null,
        compiled_cache: cache.as_str(),
        size_bytes: plugin.size,
        size: crate::plugin::notice::human_size(plugin.size),
        cache_state: match cache {
            CacheStatus::Hit => "cached",
            CacheStatus::Miss => "not cached",
            CacheStatus::Disabled => "off",
        },
        cache_path: registry.runtime().cached_artifact(&plugin.sha256),
        scorers: Vec::new(),
        preset: None,
        provider: None,
    };
    match &plugin.description {
        Description::Scorer(pack) => {
            view.scorers = pack
                .scorers
                .iter()
                .filter(|s| {
                    s.id == args.reference
                        || pack.scorers.len() == 1
                        || !is_scorer_id(pack, &args.reference)
                })
                .map(|s| ScorerView {
                    id: s.id.clone(),
                    description: s.description.clone(),
                    cost_class: match s.cost_class {
                        CostClass::Code => "code",
                        CostClass::Model => "model",
                    },
                    config_schema: serde_json::from_str(&s.config_schema)
                        .unwrap_or(serde_json::Value::String(s.config_schema.clone())),
                })
                .collect();
        }
        Description::Preset(p) => {
            let (info, contract) = (&p.info, &p.contract);
            let fields: Vec<_> = contract
                .fields
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "name": f.name, "description": f.description, "schema": f.schema,
                        "defaultFrom": f.default_from, "header": f.header, "overridable": f.overridable,
                    })
                })
                .collect();
            view.preset = Some(serde_json::json!({
                "surface": info.surface, "preset": info.preset,
                "casesSchema": info.cases_schema, "observedSchema": info.observed_schema, "summarySchema": info.summary_schema,
                "suiteFields": fields, "snapshots": contract.snapshots,
                "schemas": contract.schemas.iter().map(|(id, _)| id).collect::<Vec<_>>(),
                "inputFields": contract.input_fields, "answer": contract.answer,
            }));
        }
        Description::Provider(p) => {
            view.provider = Some(serde_json::json!({
                "harness": p.harness, "modes": p.modes, "needs": needs_json(&p.needs),
                // `null`: it gives no embeddings (a judge's `embed` is refused).
                "embeddings": p.embedder.as_ref().map(|e| serde_json::json!({"defaultModel": e.default_model})),
            }));
            view.granted = provider_grants(registry, &args.reference);
        }
    }
    if matches!(plugin.description, Description::Scorer(_)) {
        let model = info
            .capabilities
            .iter()
            .any(|c| matches!(c, Capability::Model));
        view.granted = if model {
            serde_json::json!({"model": "the run's judge model: a suite's `judge: {provider, model}`, `[judge]` in cautilus.toml, or `--judge PROVIDER/MODEL` (eval test, score)"})
        } else {
            serde_json::json!({})
        };
    }
    if args.json {
        crate::outln!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&view)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::term_println!(
        "{} {} ({}, WIT {})",
        view.id,
        view.version,
        view.kind,
        view.wit_version
    );
    if !view.description.is_empty() {
        crate::term_println!("  {}", view.description);
    }
    crate::term_println!("  source:       {}", view.source);
    crate::term_println!("  sha256:       {}", view.sha256);
    crate::term_println!("  size:         {} ({} bytes)", view.size, view.size_bytes);
    crate::term_println!("  compiled:     {}", cache_text(&view));
    crate::term_println!(
        "  capabilities: {}",
        if view.capabilities.is_empty() {
            "none".to_string()
        } else {
            view.capabilities.join(", ")
        }
    );
    if !view.granted.is_null() {
        crate::term_println!("  granted:      {}", granted_text(&view.granted));
    }
    for scorer in &view.scorers {
        crate::outln!();
        crate::term_println!("scorer {} (cost class: {})", scorer.id, scorer.cost_class);
        crate::term_println!("  {}", scorer.description);
        // JSON over several lines (its strings escaped as JSON).
        crate::outln!(
            "  config schema: {}",
            crate::term::json(&serde_json::to_string_pretty(&scorer.config_schema)?)
                .replace('\n', "\n  ")
        );
    }
    if let Some(preset) = &view.preset {
        crate::term_println!("  preset: {preset}");
    }
    if let Some(provider) = &view.provider {
        crate::term_println!("  provider: {provider}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What a provider declares it needs (`provider-needs`), for `inspect`.
fn needs_json(needs: &crate::plugin::bindings::provider_needs::Needs) -> serde_json::Value {
    let endpoint = needs.endpoint.as_ref().map(|e| {
        serde_json::json!({
            "urlVariable": e.url_variable, "defaultUrl": e.default_url,
            "keyVariable": e.key_variable, "keyRequired": e.key_required,
            "streamVariable": e.stream_variable,
        })
    });
    let program = needs.program.as_ref().map(|p| {
        serde_json::json!({
            "name": p.name, "environment": p.environment, "installHint": p.install_hint,
            "agent": p.agent,
            "home": p.home.as_ref().map(|h| serde_json::json!({
                "variable": h.variable, "defaultDir": h.default_dir, "files": h.files,
            })),
        })
    });
    let prices = needs.prices.as_ref().map(|f| {
        serde_json::json!({
            "family": f.name, "redirectVariable": f.redirect_variable,
            "homeSetting": f.home_setting.as_ref().map(|s| serde_json::json!({"file": s.file, "key": s.key})),
        })
    });
    let mut json = serde_json::json!({
        "endpoint": endpoint, "program": program, "prices": prices,
        "settingsApplied": needs.settings_applied,
    });
    // Said only by providers that stand in for another.
    if let Some(id) = &needs.stands_in_for {
        json["standsInFor"] = serde_json::json!(id);
    }
    if let Some(hint) = &needs.setup_hint {
        json["setupHint"] = serde_json::json!(hint);
    }
    if needs.runs_suite_program {
        json["runsSuiteProgram"] = serde_json::json!(true);
    }
    if needs.calls_suite_service {
        json["callsSuiteService"] = serde_json::json!(true);
    }
    json
}

/// What `eval test --provider <reference>` would grant here (without
/// `--grant-*` flags), or why it could not run.
fn provider_grants(registry: &crate::plugin::Registry, reference: &str) -> serde_json::Value {
    let env = |name: &str| std::env::var(name).ok();
    match crate::eval::provider::setup::setup(
        registry,
        reference,
        &crate::eval::provider::setup::GrantFlags::default(),
        600_000,
        &env,
    ) {
        Ok(setup) => serde_json::json!({
            "httpHosts": setup.grants.http_hosts,
            "programs": setup.grants.programs,
            "secrets": setup.grants.secrets.keys().collect::<Vec<_>>(),
            "programEnv": setup.grants.program_env,
        }),
        Err(error) => serde_json::json!({ "unavailable": error.to_string() }),
    }
}

/// The compiled cache state of an inspected component, for people.
fn cache_text(view: &Inspection) -> String {
    let path = view.cache_path.as_ref().map(|p| p.display().to_string());
    match (view.cache_state, path) {
        ("cached", Some(path)) => format!("cached ({path})"),
        ("cached", None) => "cached".into(),
        ("not cached", Some(path)) => {
            format!("not cached before this command (compiled now; stored at {path})")
        }
        ("not cached", None) => {
            "not cached (compiled now; the artifact could not be stored)".into()
        }
        _ => "not cached: the compiled cache is off (CAUTILUS_CACHE_DIR is empty, or its directory is writable by others), so every run compiles it".into(),
    }
}

fn granted_text(granted: &serde_json::Value) -> String {
    if let Some(why) = granted.get("unavailable").and_then(|v| v.as_str()) {
        return format!("nothing here: {why}");
    }
    let mut parts = Vec::new();
    for (key, label) in [
        ("model", "model"),
        ("httpHosts", "http"),
        ("programs", "process"),
        ("secrets", "secrets"),
        ("programEnv", "program env"),
    ] {
        match granted.get(key) {
            Some(serde_json::Value::Array(items)) if !items.is_empty() => {
                let items: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
                parts.push(format!("{label}({})", items.join(", ")));
            }
            Some(serde_json::Value::String(text)) => parts.push(format!("{label}: {text}")),
            _ => {}
        }
    }
    if parts.is_empty() {
        "nothing (add --grant-http/--grant-program/--grant-secret to eval test)".into()
    } else {
        parts.join(", ")
    }
}

fn is_scorer_id(pack: &crate::plugin::bindings::scorer_api::ScorerPack, reference: &str) -> bool {
    pack.scorers.iter().any(|s| s.id == reference)
}
