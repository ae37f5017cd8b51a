//! Plugin runtime benchmarks (numbers and how to read them: bench/README.md).
//!
//! - `wasm_vs_native/*`: one scorer call through a warm session vs the same
//!   scorers-core function called natively;
//! - `fresh_store_call`: a new session (store + instantiate + prepare) plus
//!   one call, i.e. the cost of the isolation unit;
//! - `load_builtin_pack/{cold,warm}`: a new runtime loading the built-in
//!   pack with an empty and with a populated compiled cache.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use cautilus::plugin::builtin::BuiltinComponent;
use cautilus::plugin::{
    Grants, Limits, PluginSource, Registry, Runtime, RuntimeConfig, ScoreInput, ScorerSession,
};
use cautilus_scorers_core::{distance, json, text};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

fn two_kb_text(seed: u64) -> String {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    ];
    let mut state = seed;
    let mut out = String::new();
    while out.len() < 2048 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(words[(state >> 33) as usize % words.len()]);
        out.push(' ');
    }
    out.truncate(2048);
    out
}

fn fifty_key_object(variant: u64) -> Value {
    let mut map = serde_json::Map::new();
    for i in 0..50u64 {
        let value = match i % 4 {
            0 => json!(i + if i == 10 { variant } else { 0 }),
            1 => json!(format!("value-{i}")),
            2 => json!([i, i + 1, i + 2]),
            _ => json!({"nested": i, "flag": i % 3 == 0}),
        };
        map.insert(format!("key_{i:02}"), value);
    }
    Value::Object(map)
}

/// The built-in pack, handed to the library as the binary's `main` does.
fn builtins() -> &'static [BuiltinComponent] {
    cautilus::plugin::builtin::install(cautilus_builtins::COMPONENTS);
    cautilus::plugin::builtin::components().expect("installed above")
}

fn registry() -> Registry {
    builtins();
    let dir = std::env::temp_dir().join("cautilus-bench-cache");
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(dir),
        fuel_metering: false,
        compile_notice: None,
    })
    .unwrap();
    Registry::new(Arc::new(runtime))
}

fn session(registry: &Registry, scorer: &str, config: Value) -> ScorerSession {
    let (plugin, id) = registry.resolve_scorer(scorer).unwrap();
    ScorerSession::new(
        plugin,
        &id,
        &config,
        Limits::default(),
        Arc::new(Grants::default()),
    )
    .unwrap()
}

fn input(output: &str) -> ScoreInput {
    ScoreInput::from_output("bench", Some(output.to_string()))
}

fn wasm_vs_native(c: &mut Criterion) {
    let registry = registry();
    let mut group = c.benchmark_group("wasm_vs_native");

    let hay = two_kb_text(1);
    let needle = hay[1500..1540].to_string();
    let contains_config = json!({"value": needle});
    let native: text::TextConfig = serde_json::from_value(contains_config.clone()).unwrap();
    let mut wasm = session(&registry, "contains", contains_config);
    let hay_input = input(&hay);
    group.bench_function("contains/native", |b| {
        b.iter(|| text::contains(&native, black_box(&hay), None).unwrap())
    });
    group.bench_function("contains/wasm", |b| {
        b.iter(|| wasm.score(black_box(&hay_input)).unwrap())
    });

    let a = two_kb_text(2);
    let reference = two_kb_text(3);
    let lev_config = json!({"value": reference});
    let native: distance::LevenshteinConfig = serde_json::from_value(lev_config.clone()).unwrap();
    let mut wasm = session(&registry, "levenshtein", lev_config);
    let a_input = input(&a);
    group.bench_function("levenshtein_2kb/native", |b| {
        b.iter(|| distance::levenshtein_score(&native, black_box(&a), None).unwrap())
    });
    group.bench_function("levenshtein_2kb/wasm", |b| {
        b.iter(|| wasm.score(black_box(&a_input)).unwrap())
    });

    let expected = fifty_key_object(0);
    let actual = fifty_key_object(1).to_string();
    let diff_config = json!({"value": expected});
    let native: json::JsonDiffConfig = serde_json::from_value(diff_config.clone()).unwrap();
    let mut wasm = session(&registry, "json-diff", diff_config);
    let actual_input = input(&actual);
    group.bench_function("json_diff_50_keys/native", |b| {
        b.iter(|| json::json_diff(&native, black_box(&actual), None).unwrap())
    });
    group.bench_function("json_diff_50_keys/wasm", |b| {
        b.iter(|| wasm.score(black_box(&actual_input)).unwrap())
    });
    group.finish();
}

fn fresh_store_call(c: &mut Criterion) {
    let registry = registry();
    let (plugin, id) = registry.resolve_scorer("contains").unwrap();
    let config = json!({"value": "world"});
    let grants = Arc::new(Grants::default());
    let hello = input("hello world");
    c.bench_function("fresh_store_call", |b| {
        b.iter(|| {
            let mut session = ScorerSession::new(
                plugin.clone(),
                &id,
                &config,
                Limits::default(),
                grants.clone(),
            )
            .unwrap();
            session.score(black_box(&hello)).unwrap()
        })
    });
}

fn load_builtin_pack(c: &mut Criterion) {
    let mut group = c.benchmark_group("load_builtin_pack");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    group.bench_function("cold", |b| {
        b.iter(|| {
            let dir = tempfile::tempdir().unwrap();
            let runtime = Runtime::new(RuntimeConfig {
                cache_dir: Some(dir.path().to_path_buf()),
                fuel_metering: false,
                compile_notice: None,
            })
            .unwrap();
            for component in builtins() {
                black_box(runtime.load(PluginSource::Builtin(component)).unwrap());
            }
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        fuel_metering: false,
        compile_notice: None,
    };
    for component in builtins() {
        Runtime::new(config.clone())
            .unwrap()
            .load(PluginSource::Builtin(component))
            .unwrap();
    }
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("warm", |b| {
        b.iter(|| {
            let runtime = Runtime::new(config.clone()).unwrap();
            for component in builtins() {
                black_box(runtime.load(PluginSource::Builtin(component)).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, wasm_vs_native, fresh_store_call, load_builtin_pack);
criterion_main!(benches);
