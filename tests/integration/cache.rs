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
    };
    let source = PluginSource::File(cautilus_tests::component("preset-probe"));

    let first = Runtime::new(config.clone())
        .unwrap()
        .load(source.clone())
        .unwrap();
    assert_eq!(first.cache, CacheStatus::Miss);
    let artifacts: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(artifacts.len(), 1, "one compiled artifact was stored");

    let second = Runtime::new(config).unwrap().load(source.clone()).unwrap();
    assert_eq!(second.cache, CacheStatus::Hit);

    let uncached = Runtime::new(RuntimeConfig::default())
        .unwrap()
        .load(source)
        .unwrap();
    assert_eq!(uncached.cache, CacheStatus::Disabled);
}

#[test]
fn a_corrupt_artifact_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        fuel_metering: false,
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
    assert_eq!(again.cache, CacheStatus::Miss);
    assert_eq!(
        Runtime::new(config).unwrap().load(source).unwrap().cache,
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
    };
    let source = PluginSource::File(cautilus_tests::component("preset-probe"));
    let plugin = Runtime::new(config).unwrap().load(source).unwrap();
    assert_eq!(
        plugin.cache,
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
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(crate::support::shared_cache_dir()),
            fuel_metering: false,
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
