//! Sharding on a real cluster engine: a one-node Slurm cluster (Debian's
//! `slurm-wlm` and `munge`; slurmctld, slurmd and munged started here in a
//! temporary directory, and ended with the test) runs a job array of the
//! shards of a suite through `scripts/cautilus-shard.sh`, and a merge job
//! that depends on it; the merged experiment equals an unsharded run's.
//! One shard is requeued while a case is in flight: its second attempt
//! resumes from its journal, asking no finished case again. Skipped,
//! saying so, where the Slurm or munge programs are not installed (.ci/run
//! installs them).
//!
//! Without Slurm, the script's three ways (start, continue, done) and
//! `cautilus eval state` are checked by running it directly.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{cautilus, output, read_json, repo, shared_cache_dir};

/// The shards of the suite.
const SHARDS: usize = 3;
/// The case of shard 2 whose first answer waits while the marker exists.
const SLOW: &str = "c05";

fn binary() -> PathBuf {
    std::env::var_os("CAUTILUS_TEST_BINARY")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cautilus").into())
        .into()
}

fn shard_script() -> PathBuf {
    repo().join("scripts/cautilus-shard.sh")
}

/// A suite of 12 cases answered by `answer.sh` (the `exec` provider), three
/// of them failing, with a declared gate; the program appends each case it
/// is asked to `calls.log`, and answers `SLOW` only once `hold` is gone
/// (its process id in `slow.pid`).
fn project(dir: &Path) -> PathBuf {
    let root = dir.join("project");
    std::fs::create_dir_all(&root).unwrap();
    let calls = root.join("calls.log");
    let hold = root.join("hold");
    let script = root.join("answer.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             input=$(cat)\n\
             case_id=$(printf '%s' \"$input\" | sed -n 's/.*\"caseId\": *\"\\([^\"]*\\)\".*/\\1/p')\n\
             echo \"$case_id\" >> '{calls}'\n\
             if [ \"$case_id\" = {SLOW} ]; then\n  echo $$ > '{pid}'\n  while [ -e '{hold}' ]; do sleep 0.1; done\nfi\n\
             echo \"the answer to $case_id\"\n",
            calls = calls.display(),
            hold = hold.display(),
            pid = root.join("slow.pid").display(),
        ),
    )
    .unwrap();
    set_mode(&script, 0o755);
    let mut cases = String::new();
    for i in 1..=12 {
        // c03, c07, c11 expect what no answer says.
        let expected = if i % 4 == 3 {
            "nope".to_string()
        } else {
            format!("c{i:02}")
        };
        cases.push_str(&format!(
            "  - {{ caseId: c{i:02}, input: question {i}, expected: {{ finalText: {expected} }} }}\n"
        ));
    }
    std::fs::write(
        root.join("suite.fixture.yaml"),
        format!(
            "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: sharded-answers
provider: exec
model: answer-sh
exec: {{ command: [./answer.sh] }}
assertions:
  - type: contains
gates:
  passRate: {{ min: 0.7 }}
cases:
{cases}"
        ),
    )
    .unwrap();
    root
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The unsharded run of the project's suite, in `full`.
fn unsharded(root: &Path) -> Value {
    let mut command = cautilus();
    command.current_dir(root).args([
        "eval",
        "test",
        "--fixture",
        "suite.fixture.yaml",
        "--output-dir",
        "full",
        "--quiet",
    ]);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    read_json(&root.join("full/experiment.json"))
}

/// What a merged record must share with the unsharded one: aggregates
/// (without the latencies, which vary), gates, the verdict and each cell's
/// verdict, in order.
fn assert_same_result(merged: &Value, full: &Value) {
    fn timeless(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| {
                        let k = k.to_ascii_lowercase();
                        !(k.contains("ms") || k.contains("latency") || k.contains("duration"))
                    })
                    .map(|(k, v)| (k.clone(), timeless(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
            other => other.clone(),
        }
    }
    assert_eq!(
        timeless(&merged["aggregates"]),
        timeless(&full["aggregates"]),
        "aggregates"
    );
    for key in ["gates", "passed", "fingerprints", "comparison", "skipped"] {
        assert_eq!(merged[key], full[key], "{key}");
    }
    let cells = |r: &Value| -> Vec<(String, String, bool)> {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["caseId"].as_str().unwrap().into(),
                    c["status"].as_str().unwrap().into(),
                    c["passed"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(cells(merged), cells(full), "each cell's verdict, in order");
    assert_eq!(cells(full).len(), 12);
}

/// The lines of a file (none when it is absent).
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn state(dir: &Path) -> String {
    let mut command = cautilus();
    command.args(["eval", "state"]).arg(dir);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stderr}");
    stdout.trim().to_string()
}

/// Polls `done` every 200 ms until it is true, or panics after `timeout`
/// with `what` and `context()`.
fn wait_for(
    what: &str,
    timeout: Duration,
    mut done: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > timeout {
            panic!("{what}: not within {timeout:?}\n{}", context());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_shard_script_starts_continues_or_leaves_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let root = project(dir.path());
    let full = unsharded(&root);
    assert_eq!(full["passed"], true);
    std::fs::remove_file(root.join("calls.log")).unwrap();
    let script = |k: usize, out: &str| {
        let mut command = Command::new(shard_script());
        command
            .current_dir(&root)
            .arg(k.to_string())
            .arg(SHARDS.to_string())
            .arg(out)
            .args(["--fixture", "suite.fixture.yaml", "--concurrency", "1"])
            .env("CAUTILUS_BIN", binary())
            .env("CAUTILUS_CACHE_DIR", shared_cache_dir());
        command
    };
    assert_eq!(state(&root.join("shard-2")), "none");
    // Shard 2 stopped while its slow case is in flight, as a scheduler
    // stops a job: SIGTERM to the script (passed on to cautilus), then to
    // the case's program. The script exits with cautilus's 143.
    std::fs::write(root.join("hold"), "").unwrap();
    let mut child = script(2, "shard-2")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines_out, lines_in) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            all.push_str(&line);
            all.push('\n');
            let _ = lines_out.send(line);
        }
        all
    });
    let calls = root.join("calls.log");
    wait_for(
        "the slow case asked",
        Duration::from_secs(300),
        || root.join("slow.pid").exists() && lines(&calls).iter().any(|c| c == SLOW),
        || lines(&calls).join(" "),
    );
    let journaled = lines(&root.join("shard-2/cells.jsonl")).len();
    assert_eq!(journaled, 1, "c02 finished before the slow c05");
    let signal = |pid: u32| {
        // SAFETY: kill(2) of a process this test started.
        assert_eq!(
            unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGTERM) },
            0
        );
    };
    signal(child.id());
    let start = Instant::now();
    loop {
        let line = lines_in
            .recv_timeout(Duration::from_secs(120))
            .expect("cautilus says it was interrupted");
        if line.starts_with("interrupted: finishing the cases in flight") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120));
    }
    let slow: u32 = std::fs::read_to_string(root.join("slow.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    signal(slow);
    let status = child.wait().unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert_eq!(state(&root.join("shard-2")), "unfinished");
    // The case in flight errored of the signal: it was not kept.
    assert_eq!(lines(&root.join("shard-2/cells.jsonl")).len(), 1);
    // Run again: it continues; c02 is not asked again.
    std::fs::remove_file(root.join("hold")).unwrap();
    let (code, _, stderr) = output(script(2, "shard-2").output().unwrap());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("continuing the unfinished shard 2/3 in shard-2"),
        "{stderr}"
    );
    assert_eq!(state(&root.join("shard-2")), "completed");
    assert_eq!(lines(&calls), ["c02", SLOW, SLOW, "c08", "c11"]);
    // Run again: nothing to do.
    let (code, _, stderr) = output(script(2, "shard-2").output().unwrap());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("completed earlier"), "{stderr}");
    assert_eq!(lines(&calls).len(), 5);
    // The other shards, then the merge.
    for k in [1, 3] {
        let (code, _, stderr) = output(script(k, &format!("shard-{k}")).output().unwrap());
        assert_eq!(code, 0, "{stderr}");
    }
    let mut merge = cautilus();
    merge
        .current_dir(&root)
        .args(["eval", "merge", "shard-1", "shard-2", "shard-3"])
        .args(["--output-dir", "merged"]);
    let (code, stdout, stderr) = output(merge.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_same_result(&read_json(&root.join("merged/experiment.json")), &full);
    // Without declared gates, the failing c03 fails shard 3: cautilus
    // exits 1 and the script 0, its records written.
    let text = std::fs::read_to_string(root.join("suite.fixture.yaml")).unwrap();
    let gates = "gates:\n  passRate: { min: 0.7 }\n";
    assert!(text.contains(gates));
    std::fs::write(root.join("nogates.fixture.yaml"), text.replace(gates, "")).unwrap();
    let mut direct = cautilus();
    direct.current_dir(&root).args([
        "eval",
        "test",
        "--fixture",
        "nogates.fixture.yaml",
        "--shard",
        "3/3",
        "--output-dir",
        "direct-3",
    ]);
    let (code, stdout, stderr) = output(direct.output().unwrap());
    assert_eq!(code, 1, "{stdout}{stderr}");
    let mut command = Command::new(shard_script());
    command
        .current_dir(&root)
        .args(["3", "3", "nogates-3", "--fixture", "nogates.fixture.yaml"])
        .env("CAUTILUS_BIN", binary())
        .env("CAUTILUS_CACHE_DIR", shared_cache_dir());
    let (code, _, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(state(&root.join("nogates-3")), "completed");
    // Bad arguments, and a failure passed on.
    let (code, _, stderr) = output(
        Command::new(shard_script())
            .args(["x", "3"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("usage:"), "{stderr}");
    let mut bad = script(1, "shard-bad");
    bad.args(["--shard", "1/2"]);
    let (code, _, stderr) = output(bad.output().unwrap());
    assert_eq!(code, 2, "{stderr}");
}

/// The Slurm and munge programs, found on PATH or in /usr/sbin.
struct Programs {
    munged: PathBuf,
    slurmctld: PathBuf,
    slurmd: PathBuf,
}

fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn programs() -> Option<Programs> {
    let missing: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scontrol",
        "sinfo",
    ]
    .into_iter()
    .filter(|p| find(p).is_none())
    .collect();
    if !missing.is_empty() {
        eprintln!(
            "skipping: the Slurm test needs {} (Debian packages `slurm-wlm` and `munge`; .ci/run installs them)",
            missing.join(", ")
        );
        return None;
    }
    // SAFETY: getuid(2) has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!(
            "skipping: the Slurm test runs slurmd, which starts jobs as their user, as root (CI runs it as root)"
        );
        return None;
    }
    Some(Programs {
        munged: find("munged")?,
        slurmctld: find("slurmctld")?,
        slurmd: find("slurmd")?,
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A one-node cluster in a temporary directory: munged, slurmctld and
/// slurmd in the foreground, each in its own process group, ended (the
/// jobs first, then the whole groups) when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    fn start(programs: &Programs, dir: &Path) -> Self {
        let dir = dir.join("slurm");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::create_dir_all(dir.join("spool")).unwrap();
        // munged wants its socket's directory searchable by all, and its
        // key the owner's alone.
        set_mode(dir.parent().unwrap(), 0o755);
        set_mode(&dir, 0o755);
        let key = dir.join("munge.key");
        let mut bytes = vec![0u8; 128];
        std::io::Read::read_exact(
            &mut std::fs::File::open("/dev/urandom").unwrap(),
            &mut bytes,
        )
        .unwrap();
        std::fs::write(&key, bytes).unwrap();
        set_mode(&key, 0o600);
        let socket = dir.join("munge.socket");
        let mut cluster = Self {
            conf: dir.join("slurm.conf"),
            dir: dir.clone(),
            daemons: Vec::new(),
        };
        let mut munged = Command::new(&programs.munged);
        munged
            .arg("--foreground")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
            .arg(format!("--log-file={}", dir.join("munged.log").display()))
            .arg(format!("--seed-file={}", dir.join("munged.seed").display()));
        cluster.spawn("munged", munged);
        wait_for(
            "munged's socket",
            Duration::from_secs(60),
            || socket.exists(),
            || cluster.logs(),
        );

        let host = {
            let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
            name.trim().split('.').next().unwrap().to_string()
        };
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let d = dir.display();
        // `cred_expire`: a requeued job starts again after it (120 s by
        // default); started sooner, slurmd refuses its revoked credential.
        std::fs::write(
            &cluster.conf,
            format!(
                "ClusterName=cautilus-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket},cred_expire=30
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
",
                ctld = free_port(),
                slurmd = free_port(),
                socket = socket.display(),
            ),
        )
        .unwrap();
        let mut slurmctld = Command::new(&programs.slurmctld);
        slurmctld.args(["-D", "-f"]).arg(&cluster.conf);
        cluster.spawn("slurmctld", slurmctld);
        let mut slurmd = Command::new(&programs.slurmd);
        slurmd.args(["-D", "-f"]).arg(&cluster.conf);
        cluster.spawn("slurmd", slurmd);
        wait_for(
            "the node idle (sinfo)",
            Duration::from_secs(120),
            || {
                cluster
                    .run("sinfo", &["-h", "-N", "-o", "%T"])
                    .is_ok_and(|s| s.trim() == "idle")
            },
            || cluster.logs(),
        );
        cluster
    }

    fn spawn(&mut self, name: &'static str, mut command: Command) {
        use std::os::unix::process::CommandExt;
        let log = std::fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        command
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0);
        let child = command.spawn().unwrap_or_else(|e| panic!("{name}: {e}"));
        self.daemons.push((name, child));
    }

    /// A Slurm command of this cluster.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(find(program).unwrap());
        command.env("SLURM_CONF", &self.conf);
        command
    }

    /// Runs a Slurm command: its stdout, or its stderr as the error.
    fn run(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let out = self
            .command(program)
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "{program} {args:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// `JobState` of a job (or one task of an array: `<id>_<k>`).
    fn job_state(&self, job: &str) -> String {
        self.run("scontrol", &["-o", "show", "job", job])
            .ok()
            .and_then(|s| {
                s.split_whitespace()
                    .find_map(|f| f.strip_prefix("JobState=").map(str::to_string))
            })
            .unwrap_or_default()
    }

    /// The daemons' logs and the queue, for a failure message.
    fn logs(&self) -> String {
        let mut text = String::new();
        for name in [
            "munged.out",
            "slurmctld.out",
            "slurmd.out",
            "slurmctld.log",
            "slurmd.log",
        ] {
            let log = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            text.push_str(&format!("--- {name} (last 40 lines)\n"));
            for line in tail.into_iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
        if let Ok(queue) = self.run("squeue", &["-a", "-o", "%i %T %r"]) {
            text.push_str(&format!("--- squeue\n{queue}"));
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The jobs first (their processes are slurmd's), then the daemons.
        if !self.daemons.is_empty() {
            let _ = self.run("scancel", &["--full", "--user", "root"]);
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(30)
                && self
                    .run("squeue", &["-h", "-o", "%i"])
                    .is_ok_and(|s| !s.trim().is_empty())
            {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            let group = i32::try_from(child.id()).unwrap();
            // SAFETY: killpg(2) of a process group this test started.
            unsafe { libc::killpg(group, libc::SIGTERM) };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // SAFETY: as above; whatever is left of the group.
            unsafe { libc::killpg(group, libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

#[test]
fn a_slurm_job_array_of_shards_merges_to_the_unsharded_result_and_a_requeued_shard_resumes() {
    let Some(programs) = programs() else {
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let root = project(dir.path());
    let cluster = Cluster::start(&programs, dir.path());
    let context = || cluster.logs();

    // Each task appends its attempt (SLURM_RESTART_COUNT) to a file, then
    // runs the shard script; the merge job runs once every task succeeded.
    let shard_job = root.join("shard.sbatch");
    std::fs::write(
        &shard_job,
        format!(
            "#!/bin/bash\n\
             set -eu\n\
             echo \"${{SLURM_RESTART_COUNT:-0}}\" >> \"attempts-$SLURM_ARRAY_TASK_ID\"\n\
             exec '{script}' \"$SLURM_ARRAY_TASK_ID\" {SHARDS} \"shard-$SLURM_ARRAY_TASK_ID\" \
             --fixture suite.fixture.yaml --concurrency 1 --quiet\n",
            script = shard_script().display()
        ),
    )
    .unwrap();
    let merge_job = root.join("merge.sbatch");
    let shards: Vec<String> = (1..=SHARDS).map(|k| format!("shard-{k}")).collect();
    std::fs::write(
        &merge_job,
        format!(
            "#!/bin/bash\n\
             \"$CAUTILUS_BIN\" eval merge {} --output-dir merged\n",
            shards.join(" ")
        ),
    )
    .unwrap();
    let sbatch = |args: &[&str], script: &Path| -> String {
        let out = cluster
            .command("sbatch")
            .current_dir(&root)
            .args(["--parsable", "--chdir"])
            .arg(&root)
            .args(args)
            .arg(script)
            .env("CAUTILUS_BIN", binary())
            .env("CAUTILUS_CACHE_DIR", shared_cache_dir())
            .output()
            .unwrap();
        let (code, stdout, stderr) = output(out);
        assert_eq!(code, 0, "sbatch: {stdout}{stderr}\n{}", context());
        stdout.trim().split(';').next().unwrap().to_string()
    };

    // Shard 2's second case waits (its program polls `hold`) until the
    // shard is requeued.
    std::fs::write(root.join("hold"), "").unwrap();
    let array = sbatch(
        &[
            &format!("--array=1-{SHARDS}"),
            "--cpus-per-task=1",
            "--output=slurm-%A_%a.out",
        ],
        &shard_job,
    );
    let merge = sbatch(
        &[
            &format!("--dependency=afterok:{array}"),
            "--output=slurm-merge-%j.out",
        ],
        &merge_job,
    );
    let calls = root.join("calls.log");
    let journal = root.join("shard-2/cells.jsonl");
    wait_for(
        "shard 2 with one finished case and its slow case in flight",
        Duration::from_secs(600),
        || lines(&calls).iter().any(|c| c == SLOW) && !lines(&journal).is_empty(),
        || format!("calls: {:?}\n{}", lines(&calls), context()),
    );
    let task = format!("{array}_2");
    cluster
        .run("scontrol", &["requeue", &task])
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    // Slurm starts a requeued job again once its credential expired
    // (`cred_expire`), so once the first attempt has ended.
    let attempts = root.join("attempts-2");
    wait_for(
        "shard 2's second attempt",
        Duration::from_secs(300),
        || lines(&attempts).len() == 2,
        || format!("{task}: {}\n{}", cluster.job_state(&task), context()),
    );
    // The first attempt's journal held c02; c05 was in flight, and errored
    // of the signal: not kept. (The second attempt waits on c05.)
    let kept = lines(&journal);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].contains("\"c02\""), "{}", kept[0]);
    std::fs::remove_file(root.join("hold")).unwrap();

    wait_for(
        "the merge job ended",
        Duration::from_secs(900),
        || {
            matches!(
                cluster.job_state(&merge).as_str(),
                "COMPLETED" | "FAILED" | "CANCELLED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY"
            )
        },
        || {
            format!(
                "merge {merge}: {}\n{}",
                cluster.job_state(&merge),
                context()
            )
        },
    );
    let job_output = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    let merge_output = job_output(&format!("slurm-merge-{merge}.out"));
    assert_eq!(
        cluster.job_state(&merge),
        "COMPLETED",
        "{merge_output}\nshard 2: {}\n{}",
        job_output(&format!("slurm-{array}_2.out")),
        context()
    );
    assert!(merge_output.contains("experiment passed"), "{merge_output}");

    // The second attempt resumed: SLURM_RESTART_COUNT 1, the case the first
    // had journaled (c02) not asked again, every case asked once but the
    // one in flight at the requeue.
    assert_eq!(lines(&root.join("attempts-2")), ["0", "1"]);
    for k in [1, 3] {
        assert_eq!(
            lines(&root.join(format!("attempts-{k}"))),
            ["0"],
            "shard {k}"
        );
    }
    assert!(
        job_output(&format!("slurm-{array}_2.out")).contains("continuing the unfinished shard 2/3")
    );
    let all = lines(&calls);
    for i in 1..=12 {
        let case = format!("c{i:02}");
        let asked = all.iter().filter(|c| **c == case).count();
        let want = if case == SLOW { 2 } else { 1 };
        assert_eq!(asked, want, "{case} asked {asked} times: {all:?}");
    }

    // The merged experiment is the unsharded run's.
    std::fs::remove_file(&calls).unwrap();
    let full = unsharded(&root);
    assert_same_result(&read_json(&root.join("merged/experiment.json")), &full);
    drop(cluster);
    eprintln!("the Slurm test took {:?}", started.elapsed());
}
