//! What the built-in `exec` provider is granted: the program the suite's
//! `exec` field names ([`crate::fixture::exec_field`]), resolved here.
//!
//! The fixture is untrusted (it arrives in pull requests), so the program
//! it names is held to the rules of every other path it writes:
//! - a path (`./app.py`, `bin/app`, `../tools/app`) is relative to the
//!   fixture's directory and must lead (`..` applied, every symbolic link
//!   followed) to an executable file inside the fixture's root
//!   ([`PathRoot::contain`]);
//! - a bare name (`python3`, looked up on `PATH`) or an absolute path runs
//!   only when the user grants exactly that with `--grant-program`;
//! - an argument written `./x` or `../x` that exists is a file next to the
//!   fixture likewise (the program runs in an empty directory, so it gets
//!   the file's real path).
//!
//! The provider alone is granted the program (its request is made on its
//! behalf, [`crate::plugin::Plugin::requesting_program`]); it runs in a new
//! empty directory per call, with `PATH` and the secrets the user grants
//! with `--grant-secret NAME=VAR` (as variable `NAME`) and nothing else of
//! the host's environment. The provider is told the command as written
//! (`exec`, part of the call key, so a cassette recorded here replays
//! elsewhere) and as resolved (`execArgv`, left out of the key). A run
//! answered from its cassette only (`replay-strict`) resolves nothing: the
//! program need not exist.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::eval::EvalError;
use crate::eval::provider::setup::{ProviderSetup, on_path};
use crate::fixture::exec_field::ExecField;
use crate::fixture::{PathRoot, Suite};
use crate::plugin::{Description, Plugin, PluginSource};

/// Whether `plugin` runs the suite's program: a built-in provider that
/// declares so (`runs-suite-program` in its needs). A provider from a
/// `.wasm` file or a pack declaring it gets no program this way: it runs
/// only what the user grants it.
pub fn is_exec(plugin: &Plugin) -> bool {
    matches!(&plugin.source, PluginSource::Builtin(_))
        && matches!(&plugin.description, Description::Provider(p) if p.needs.runs_suite_program)
}

/// Gives the `exec` provider of a run of `suite` its program: the command
/// as written always, and unless the run answers from its cassette only
/// (`resolve` false), the resolved program, granted, with its time limit,
/// secrets and directory. Any other provider is left as it is.
pub fn prepare(
    setup: &mut ProviderSetup,
    suite: &Suite,
    resolve: bool,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), EvalError> {
    if !is_exec(&setup.plugin) {
        return Ok(());
    }
    let (field, argv) = check(suite, resolve, &setup.grants.programs, env)?;
    setup.options.insert("exec".into(), field.written());
    let Some(argv) = argv else {
        return Ok(());
    };
    setup.plugin = Arc::new(setup.plugin.requesting_program(argv[0].clone()));
    if !setup.grants.programs.contains(&argv[0]) {
        setup.grants.programs.push(argv[0].clone());
    }
    setup.options.insert("execArgv".into(), json!(argv));
    let limit = field.timeout_ms.unwrap_or(timeout_ms).min(timeout_ms);
    setup
        .options
        .insert("timeoutMs".into(), json!(limit.min(u64::from(u32::MAX))));
    // `--grant-secret NAME=VAR`: the program reads `NAME`.
    for (name, variable) in setup.grants.secrets.clone() {
        if let Some(value) = env(&variable) {
            setup.grants.program_env.push(name.clone());
            setup.grants.program_env_set.push((name, value.into()));
        }
    }
    let dir = crate::private_temp::tempdir("cautilus-exec-").map_err(|e| EvalError::Provider {
        provider: setup.plugin.id().to_string(),
        message: format!("cannot create an empty directory to run the program in: {e}"),
    })?;
    setup.grants.workspace = Some(dir.path().to_path_buf());
    setup.grants.fresh_dir = true;
    setup.scratch = Some(dir);
    Ok(())
}

/// The suite's `exec` field, checked, and unless the run answers from its
/// cassette only (`resolve` false) its command resolved (see the module
/// docs; `granted`: the programs the user grants): what [`prepare`] gives
/// the provider, and what an experiment checks of every variant before
/// the first one runs.
pub fn check(
    suite: &Suite,
    resolve: bool,
    granted: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ExecField, Option<Vec<String>>), EvalError> {
    let problem = |path: &str, message: String| EvalError::Cases {
        file: suite.file.clone(),
        problems: vec![(suite.field_at(path), message)],
    };
    let Some(written) = suite.body.get("exec").filter(|v| !v.is_null()) else {
        return Err(problem(
            "exec",
            "is missing: the `exec` provider runs the program this field names, e.g. `exec: {command: [./app.py]}`".into(),
        ));
    };
    let field = ExecField::parse(written)
        .map_err(|(path, message)| problem(&format!("exec{path}"), message))?;
    if !resolve {
        return Ok((field, None));
    }
    let base = suite.file.parent().unwrap_or(Path::new(""));
    let argv = resolve_command(&field.command, base, &suite.root, granted, env)
        .map_err(|(at, message)| problem(&format!("exec.command[{at}]"), message))?;
    Ok((field, Some(argv)))
}

/// The program and arguments of `command`, resolved against `base` (the
/// fixture's directory) inside `root`; `granted`: the programs the user
/// grants by flag. An error is (index in the command, message).
pub fn resolve_command(
    command: &[String],
    base: &Path,
    root: &PathRoot,
    granted: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, (usize, String)> {
    let program = &command[0];
    let is_granted = granted.iter().any(|g| g == program);
    let resolved = if Path::new(program).is_absolute() {
        if !is_granted {
            return Err((
                0,
                format!(
                    "`{program}` is an absolute path; a fixture runs a file beside it (`./app.py`), or a program you grant: `--grant-program {program}`"
                ),
            ));
        }
        program.clone()
    } else if !program.contains('/') {
        if !is_granted {
            return Err((
                0,
                format!(
                    "`{program}` is a program from PATH; a fixture runs one only when you grant it (`--grant-program {program}`), or write a file beside the fixture as `./{program}`"
                ),
            ));
        }
        if !on_path(program, env) {
            return Err((0, format!("`{program}` is not on PATH")));
        }
        program.clone()
    } else {
        let real = root
            .contain(&base.join(program), program)
            .map_err(|m| (0, m))?;
        if !real.is_file() {
            return Err((
                0,
                format!(
                    "program `{program}` not found (looked for {})",
                    base.join(program).display()
                ),
            ));
        }
        if !executable(&real) {
            return Err((
                0,
                format!(
                    "`{program}` is not executable: `chmod +x` it (with a `#!` line), or run it with its interpreter, e.g. `command: [python3, {program}]` and `--grant-program python3`"
                ),
            ));
        }
        real.display().to_string()
    };
    let relative = |arg: &str| arg.starts_with("./") || arg.starts_with("../");
    let mut argv = vec![resolved];
    for (i, arg) in command.iter().enumerate().skip(1) {
        let path = base.join(arg);
        argv.push(if relative(arg) && path.exists() {
            root.contain(&path, arg)
                .map_err(|m| (i, m))?
                .display()
                .to_string()
        } else {
            arg.clone()
        });
    }
    Ok(argv)
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[cfg(unix)]
    #[test]
    fn programs_are_files_inside_the_root_or_granted_by_the_user() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let tmp = tempfile::tempdir().unwrap();
        let root_dir = tmp.path().join("root");
        let fixture_dir = root_dir.join("evals");
        std::fs::create_dir_all(&fixture_dir).unwrap();
        let write = |path: &Path, mode: u32| {
            std::fs::write(path, "#!/bin/sh\necho hi\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write(&fixture_dir.join("app.sh"), 0o755);
        write(&fixture_dir.join("data.txt"), 0o644);
        write(&tmp.path().join("outside.sh"), 0o755);
        symlink(tmp.path().join("outside.sh"), fixture_dir.join("link.sh")).unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        write(&bin.join("python3"), 0o755);
        let path = bin.display().to_string();
        let env = move |name: &str| (name == "PATH").then(|| path.clone());
        let root = PathRoot::open(&root_dir, "the test root").unwrap();
        let real_root = root.dir().to_path_buf();
        let resolve = |command: &[&str], granted: &[&str]| {
            resolve_command(
                &strings(command),
                &fixture_dir,
                &root,
                &strings(granted),
                &env,
            )
        };
        let app = real_root.join("evals/app.sh").display().to_string();
        assert_eq!(
            resolve(&["./app.sh", "--x"], &[]).unwrap(),
            [app.as_str(), "--x"]
        );
        // A bare name is a program from PATH, even with a file of that
        // name beside the fixture.
        assert!(
            resolve(&["app.sh"], &[])
                .unwrap_err()
                .1
                .contains("program from PATH")
        );
        assert_eq!(
            resolve(&["python3", "./app.sh", "./missing"], &["python3"]).unwrap(),
            ["python3", app.as_str(), "./missing"]
        );
        let refused: Vec<(Vec<&str>, Vec<&str>, usize, &str)> = vec![
            (vec!["python3"], vec![], 0, "--grant-program python3"),
            (vec!["/bin/sh"], vec![], 0, "is an absolute path"),
            (vec!["/bin/sh"], vec!["sh"], 0, "--grant-program /bin/sh"),
            (
                vec!["Python3"],
                vec!["python3"],
                0,
                "--grant-program Python3",
            ),
            (vec!["node"], vec!["node"], 0, "`node` is not on PATH"),
            (vec!["../../outside.sh"], vec![], 0, "outside the test root"),
            (vec!["./link.sh"], vec![], 0, "outside the test root"),
            (vec!["./data.txt"], vec![], 0, "is not executable"),
            (vec!["./nope.sh"], vec![], 0, "not found"),
            (
                vec!["./app.sh", "../../outside.sh"],
                vec![],
                1,
                "outside the test root",
            ),
        ];
        for (command, granted, at, message) in refused {
            let (index, said) = resolve(&command, &granted).unwrap_err();
            assert_eq!(index, at, "{command:?}");
            assert!(said.contains(message), "{command:?}: {said}");
        }
        assert_eq!(resolve(&["/bin/sh"], &["/bin/sh"]).unwrap(), ["/bin/sh"]);
    }
}
