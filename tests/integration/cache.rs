//! The compiled-component cache is used by a second load (a second process,
//! modelled by a second runtime): a cache-hit signal, not a timing.

use cautilus::plugin::{CacheStatus, PluginSource, Runtime, RuntimeConfig};

use crate::support::run;

#[test]
fn second_runtime_loads_from_the_compiled_cache() {
    let dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        fuel_metering: false,
        compile_notice: None,
    };
    let source = PluginSource::File(cautilus_tests::component("preset-probe"));

    let first = Runtime::new(config.clone())
        .unwrap()
        .load(source.clone())
        .unwrap();
    assert_eq!(first.cache_status().unwrap(), CacheStatus::Miss);
    let artifacts: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(artifacts.len(), 1, "one compiled artifact was stored");

    let second = Runtime::new(config).unwrap().load(source.clone()).unwrap();
    assert_eq!(second.cache_status().unwrap(), CacheStatus::Hit);

    let uncached = Runtime::new(RuntimeConfig::default())
        .unwrap()
        .load(source)
        .unwrap();
    assert_eq!(uncached.cache_status().unwrap(), CacheStatus::Disabled);
}

#[test]
fn a_corrupt_artifact_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        fuel_metering: false,
        compile_notice: None,
    };
    let source = PluginSource::File(cautilus_tests::component("preset-probe"));
    Runtime::new(config.clone())
        .unwrap()
        .load(source.clone())
        .unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        std::fs::write(entry.path(), b"garbage").unwrap();
    }
    let again = Runtime::new(config.clone())
        .unwrap()
        .load(source.clone())
        .unwrap();
    assert_eq!(again.cache_status().unwrap(), CacheStatus::Miss);
    assert_eq!(
        Runtime::new(config)
            .unwrap()
            .load(source)
            .unwrap()
            .cache_status()
            .unwrap(),
        CacheStatus::Hit
    );
}

#[test]
fn a_second_cli_process_reports_cache_hits() {
    // The first call may compile (or find the shared cache warm); the second must hit.
    let (code, _, stderr) = run(&["plugin", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["plugin", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    assert!(rows.len() >= 11, "every built-in is listed: {stdout}");
    assert!(rows.iter().all(|r| r["compiledCache"] == "hit"), "{stdout}");
}

#[cfg(unix)]
#[test]
fn a_cache_directory_others_can_write_is_not_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("shared");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(cache.clone()),
        fuel_metering: false,
        compile_notice: None,
    };
    let source = PluginSource::File(cautilus_tests::component("preset-probe"));
    let plugin = Runtime::new(config).unwrap().load(source).unwrap();
    assert_eq!(
        plugin.cache_status().unwrap(),
        CacheStatus::Disabled,
        "never load native code from a world-writable directory"
    );
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        0,
        "and never write there"
    );
}

#[cfg(unix)]
#[test]
fn a_new_cache_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("new-cache");
    let config = RuntimeConfig {
        cache_dir: Some(cache.clone()),
        fuel_metering: false,
        compile_notice: None,
    };
    Runtime::new(config)
        .unwrap()
        .load(PluginSource::File(cautilus_tests::component(
            "preset-probe",
        )))
        .unwrap();
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn built_ins_load_in_the_background() {
    let registry = || -> &'static cautilus::plugin::Registry {
        crate::support::install_builtins();
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(crate::support::shared_cache_dir()),
            fuel_metering: false,
            compile_notice: None,
        })
        .unwrap();
        Box::leak(Box::new(cautilus::plugin::Registry::new(
            std::sync::Arc::new(runtime),
        )))
    };
    // Nobody asks: the guard's drop waits for the thread, which loaded them.
    let idle = registry();
    assert!(!idle.builtins_loaded());
    drop(idle.preload_builtins());
    assert!(idle.builtins_loaded());

    // Asked for while they load: the command gets them (after the load
    // under way, or by loading them itself), and the guard still returns.
    let busy = registry();
    let preloading = busy.preload_builtins();
    let asked = busy.builtins().unwrap().len();
    drop(preloading);
    assert_eq!(asked, idle.builtins().unwrap().len());
}

/// `cautilus` with its own compiled cache `cache` and the compile-notice
/// threshold `notice_bytes`; returns (exit code, stdout, stderr).
fn with_cache(cache: &std::path::Path, notice_bytes: &str, args: &[&str]) -> (i32, String, String) {
    crate::support::output(
        crate::support::cautilus()
            .env("CAUTILUS_CACHE_DIR", cache)
            .env("CAUTILUS_COMPILE_NOTICE_BYTES", notice_bytes)
            .args(args)
            .output()
            .expect("run cautilus"),
    )
}

#[test]
fn a_compile_is_announced_on_stderr_once_and_inspect_shows_the_cache() {
    let component = crate::support::component("hostile");
    let size = std::fs::metadata(&component).unwrap().len();
    let score = ["score", "--scorer", &component, "--output", "ok", "--json"];
    let inspect = ["plugin", "inspect", &component, "--json"];

    // A fresh cache: inspect finds it not cached (and compiles it).
    let fresh = tempfile::tempdir().unwrap();
    let cache = fresh.path().join("cache");
    let (code, stdout, stderr) = with_cache(&cache, "0", &inspect);
    assert_eq!(code, 0, "{stderr}");
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view["cacheState"], "not cached", "{view}");
    assert_eq!(view["sizeBytes"], size, "{view}");
    assert!(view["size"].as_str().unwrap().ends_with("kB"), "{view}");
    let stored = view["cachePath"].as_str().expect("stored now").to_string();
    assert!(
        std::path::Path::new(&stored).starts_with(&cache),
        "{stored}"
    );
    assert!(
        stderr.contains(&format!("compiling {component} (")),
        "{stderr}"
    );

    // Another fresh cache: the first score announces the compile on
    // stderr (stdout stays the JSON score), the second says nothing.
    let fresh = tempfile::tempdir().unwrap();
    let cache = fresh.path().join("cache");
    let (code, stdout, stderr) = with_cache(&cache, "0", &score);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let scored: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(scored["passed"], true);
    assert!(
        stderr.contains(&format!(
            "compiling {component} ({}) for this machine; cached afterwards…",
            cautilus::plugin::notice::human_size(size)
        )),
        "{stderr}"
    );
    let compiled = stderr
        .lines()
        .find(|l| l.starts_with(&format!("compiled {component} in ")))
        .unwrap_or_else(|| panic!("no timing line: {stderr}"));
    assert!(compiled.ends_with(" s"), "{compiled}");
    let (code, _, stderr) = with_cache(&cache, "0", &score);
    assert_eq!(code, 0);
    assert!(!stderr.contains("compil"), "cached, yet: {stderr}");
    let (_, stdout, _) = with_cache(&cache, "0", &inspect);
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view["cacheState"], "cached", "{view}");
    assert!(view["cachePath"].is_string(), "{view}");
    let (_, text, _) = with_cache(&cache, "0", &["plugin", "inspect", &component]);
    assert!(text.contains("  compiled:     cached ("), "{text}");
    assert!(text.contains(&format!("({size} bytes)")), "{text}");
}

#[test]
fn a_component_below_the_threshold_compiles_silently() {
    let component = crate::support::component("hostile");
    let size = std::fs::metadata(&component).unwrap().len();
    let fresh = tempfile::tempdir().unwrap();
    let score = ["score", "--scorer", &component, "--output", "ok"];
    let above = (size + 1).to_string();
    let (code, stdout, stderr) = with_cache(&fresh.path().join("a"), &above, &score);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("compil"), "{stderr}");
    // At exactly its size it is announced; with no cache, without the promise.
    let (code, _, stderr) = with_cache(&fresh.path().join("b"), &size.to_string(), &score);
    assert_eq!(code, 0);
    assert!(stderr.contains("cached afterwards"), "{stderr}");
    let (code, _, stderr) = with_cache(std::path::Path::new(""), &size.to_string(), &score);
    assert_eq!(code, 0);
    assert!(stderr.contains("the compiled cache is off"), "{stderr}");
}

/// A runtime of `cache` (no notice, no fuel), as a new process has.
fn registry_of(cache: &std::path::Path) -> cautilus::plugin::Registry {
    crate::support::install_builtins();
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_path_buf()),
        fuel_metering: false,
        compile_notice: None,
    })
    .unwrap();
    cautilus::plugin::Registry::new(std::sync::Arc::new(runtime))
}

#[test]
fn built_ins_described_once_are_known_from_their_kept_descriptions_and_made_ready_when_used() {
    // The compiled artifacts of the shared cache, linked into a cache of
    // this test's own (compiling them again would take a minute).
    let shared = crate::support::shared_cache_dir();
    crate::support::registry().builtins().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    for entry in std::fs::read_dir(&shared).unwrap().flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(".cwasm") {
            std::fs::hard_link(entry.path(), cache.join(name)).unwrap();
        }
    }

    // The first process describes every built-in and keeps what they said.
    let first = registry_of(&cache);
    let described: Vec<(String, String)> = first
        .builtins()
        .unwrap()
        .iter()
        .map(|p| (p.id().to_string(), p.kind.to_string()))
        .collect();
    assert!(first.builtins().unwrap().iter().all(|p| p.is_prepared()));
    let kept = cache.join("described");
    let mut entries: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), described.len(), "{entries:?}");

    // The next knows them all without making any ready, and makes ready
    // the one it uses.
    let second = registry_of(&cache);
    let known: Vec<(String, String)> = second
        .builtins()
        .unwrap()
        .iter()
        .map(|p| (p.id().to_string(), p.kind.to_string()))
        .collect();
    assert_eq!(known, described);
    assert!(second.builtins().unwrap().iter().all(|p| !p.is_prepared()));
    let (scorer, _) = second.resolve_scorer("contains").unwrap();
    assert_eq!(scorer.cache_status().unwrap(), CacheStatus::Hit);
    assert!(scorer.is_prepared());
    let prepared = second
        .builtins()
        .unwrap()
        .iter()
        .filter(|p| p.is_prepared())
        .count();
    assert_eq!(prepared, 1, "only the component used was made ready");

    // A damaged description is described again (and kept again).
    let scorer_entry = kept.join(format!("{}.json", scorer.sha256));
    let good = std::fs::read_to_string(&scorer_entry).unwrap();
    std::fs::write(&scorer_entry, &good[..good.len() / 3]).unwrap();
    let third = registry_of(&cache);
    let (again, _) = third.resolve_scorer("contains").unwrap();
    assert!(again.is_prepared(), "described again at load");
    assert_eq!(std::fs::read_to_string(&scorer_entry).unwrap(), good);

    // One that says another world than the component has is not trusted
    // either (a scorer described as a provider would reach a provider's
    // code): described again.
    std::fs::write(
        &scorer_entry,
        good.replacen(
            "\"description\":{\"Scorer\"",
            "\"description\":{\"Provider\"",
            1,
        ),
    )
    .unwrap();
    assert_ne!(std::fs::read_to_string(&scorer_entry).unwrap(), good);
    let fourth = registry_of(&cache);
    let (described_again, _) = fourth.resolve_scorer("contains").unwrap();
    assert!(described_again.is_prepared(), "described again at load");
    assert_eq!(described_again.kind, cautilus::plugin::PluginKind::Scorer);
    assert_eq!(std::fs::read_to_string(&scorer_entry).unwrap(), good);
}
