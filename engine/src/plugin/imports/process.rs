//! The `process` import: the programs its policy ([`ProcessPolicy`])
//! allows, run in the case's workspace with a clean environment, a
//! timeout and capped output ([`run_bounded`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use wasmtime::component::{HasData, Linker};

use super::CallCtx;
use crate::plugin::bindings::process;
use crate::plugin::capability::process::ProcessPolicy;
use crate::plugin::grants::Grants;

/// What the `process` import sees of a store.
pub struct ProcessCtx {
    policy: ProcessPolicy,
    /// Variables of the host's environment that granted programs get.
    program_env: Vec<String>,
    /// Values the host sets for some of `program_env` instead of its own.
    program_env_set: Vec<(String, OsString)>,
    /// The run's working directory for programs.
    workspace: Option<PathBuf>,
    /// The current case's own workspace, overriding the run's.
    pub case_workspace: Option<PathBuf>,
    /// Most bytes kept of a program's stdout and of its stderr.
    output_limit: usize,
    /// Each program runs in a new empty directory inside the workspace.
    fresh_dir: bool,
}

impl ProcessCtx {
    pub fn new(policy: ProcessPolicy, grants: &Grants, output_limit: usize) -> Self {
        Self {
            policy,
            program_env: grants.program_env.clone(),
            program_env_set: grants.program_env_set.clone(),
            workspace: grants.workspace.clone(),
            case_workspace: None,
            output_limit,
            fresh_dir: grants.fresh_dir,
        }
    }

    /// The variables of the host's environment a program gets, as granted
    /// (the credentials among them registered as secrets).
    fn inherited(&self) -> Vec<(String, OsString)> {
        self.program_env
            .iter()
            .filter_map(|name| {
                let set = self.program_env_set.iter().find(|(n, _)| n == name);
                let value = match set {
                    Some((_, value)) => value.clone(),
                    None => std::env::var_os(name)?,
                };
                if crate::secrets::names_a_credential(name) {
                    crate::secrets::register(value.to_str());
                }
                Some((name.clone(), value))
            })
            .collect()
    }

    /// Where `command` runs: its `cwd` inside the workspace (the case's,
    /// else the run's, else the temporary directory).
    fn cwd(&self, command: &process::Command) -> Result<PathBuf, process::ProcessError> {
        let workspace = self
            .case_workspace
            .clone()
            .or_else(|| self.workspace.clone())
            .unwrap_or_else(std::env::temp_dir);
        let Some(rel) = &command.cwd else {
            return Ok(workspace);
        };
        let rel = std::path::Path::new(rel);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(process::ProcessError::Denied(format!(
                "cwd `{}` must be relative to the workspace and stay inside it",
                rel.display()
            )));
        }
        Ok(workspace.join(rel))
    }
}

/// The `process` context and the current call's clock (its deadline caps
/// the program's timeout).
pub struct ProcessCtxView<'a> {
    pub ctx: &'a ProcessCtx,
    pub call: &'a CallCtx,
}

/// The `process` interface's data.
pub struct Process;

impl HasData for Process {
    type Data<'a> = ProcessCtxView<'a>;
}

/// A store state that serves `process`.
pub trait ProcessView: Send {
    fn process(&mut self) -> ProcessCtxView<'_>;
}

impl process::Host for ProcessCtxView<'_> {
    async fn run(
        &mut self,
        command: process::Command,
    ) -> Result<process::Output, process::ProcessError> {
        let policy = &self.ctx.policy;
        policy
            .allows(&command.program)
            .and_then(|()| policy.allows_env(&command.env))
            .map_err(process::ProcessError::Denied)?;
        let mut cwd = self.ctx.cwd(&command)?;
        // Removed when the program (and every process it started) ended.
        let fresh = match self.ctx.fresh_dir {
            false => None,
            true => {
                let dir = crate::private_temp::tempdir_in("run-", &cwd).map_err(|e| {
                    process::ProcessError::Failed(format!(
                        "cannot create an empty directory to run it in: {e}"
                    ))
                })?;
                cwd = dir.path().to_path_buf();
                Some(dir)
            }
        };
        let timeout = self.call.bounded(Duration::from_millis(u64::from(
            command.timeout_ms.unwrap_or(60_000),
        )));
        let inherited = self.ctx.inherited();
        // The waiting is done on tokio's blocking pool, so the I/O workers
        // keep serving the other calls in flight.
        let limit = self.ctx.output_limit;
        tokio::task::spawn_blocking(move || {
            let ran = run_bounded(&command, &inherited, &cwd, timeout, limit);
            drop(fresh);
            ran
        })
        .await
        .unwrap_or_else(|e| {
            Err(process::ProcessError::Failed(format!(
                "the runner stopped: {e}"
            )))
        })
    }
}

pub(super) fn add_to_linker<T: ProcessView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    process::add_to_linker::<T, Process>(linker, T::process)
}

/// Runs a command with a clean environment (the host's `PATH`, then
/// `inherited` (from the host's environment, as granted), then the
/// command's own variables), a timeout and capped output, through
/// [`crate::process_tree`]: every process the program starts ends with it.
/// Its output comes back scrubbed of every secret the run granted
/// ([`crate::secrets::scrub_granted_output`]).
pub(crate) fn run_bounded(
    command: &process::Command,
    inherited: &[(String, std::ffi::OsString)],
    cwd: &std::path::Path,
    timeout: Duration,
    output_limit: usize,
) -> Result<process::Output, process::ProcessError> {
    use crate::process_tree::{RunError, Spec, run};
    let mut env = vec![(
        OsString::from("PATH"),
        std::env::var_os("PATH").unwrap_or_default(),
    )];
    env.extend(
        inherited
            .iter()
            .map(|(k, v)| (OsString::from(k), v.clone())),
    );
    env.extend(
        command
            .env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let finished = run(&Spec {
        program: &command.program,
        args: &command.args,
        env: &env,
        cwd,
        stdin: command.stdin.as_deref(),
        timeout,
        output_limit,
    })
    .map_err(|error| match error {
        RunError::NotFound(program) => process::ProcessError::NotFound(program),
        other => process::ProcessError::Failed(other.to_string()),
    })?;
    // A program may echo a granted secret: the plugin gets its output
    // without it (and cannot cut it in two before the host scrubs).
    let cut = finished.truncated;
    Ok(process::Output {
        status: finished.status,
        stdout: crate::secrets::scrub_granted_output(finished.stdout, cut),
        stderr: crate::secrets::scrub_granted_output(finished.stderr, cut),
        timed_out: finished.timed_out,
        truncated: finished.truncated,
    })
}
