//! What the coding-agent providers share when they read an agent's event
//! stream: workspace-relative paths, the files a shell command reads, which
//! files are instruction files, and the trace they add up to.
//!
//! Shell reads are recognized by the command that reads (`cat`, `head`,
//! `tail`, `less`, `more`, `bat`, `nl`, and the file argument of `sed`,
//! `awk`, `grep`, `rg`), taking arguments that look like paths (they hold a
//! `.` or a `/`, and are not options or numbers). It is a heuristic: a file
//! read by a script the agent ran is not seen.

use cautilus_sdk::{ToolCall, WorkspaceTrace};
use serde_json::Value;

/// Names of instruction files, wherever they are.
const INSTRUCTION_NAMES: &[&str] = &[
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
];

/// Most characters of a tool's output kept on its call.
pub const TOOL_OUTPUT_CHARS: usize = 2000;

/// Whether `path` (workspace-relative) is an instruction file.
pub fn is_instruction_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    INSTRUCTION_NAMES.contains(&name)
        || path == ".github/copilot-instructions.md"
        || (path.starts_with(".claude/") && name.ends_with(".md") && !name.eq("SKILL.md"))
}

/// `path` relative to the workspace `root` (`/`-separated, without `./`);
/// a path outside the workspace stays as given.
pub fn relative(path: &str, root: Option<&str>) -> String {
    let path = path.trim();
    let inside = root
        .map(|r| r.trim_end_matches('/'))
        .filter(|r| !r.is_empty())
        .and_then(|r| path.strip_prefix(r))
        .and_then(|rest| rest.strip_prefix('/'));
    let mut path = inside.unwrap_or(path);
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path.to_string()
}

/// Programs that read the files they are given.
const READERS: &[&str] = &["cat", "head", "tail", "less", "more", "bat", "nl"];
/// Programs whose last argument may be a file they read.
const LAST_ARG_READERS: &[&str] = &["sed", "awk", "grep", "rg", "egrep", "fgrep"];

/// The files a shell command reads, in order.
pub fn shell_reads(command: &str) -> Vec<String> {
    let mut reads = Vec::new();
    for segment in command.split(['|', ';', '&', '\n']) {
        let words: Vec<String> = segment
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        // `sudo cat x`, `command cat x`: the program is the first plain word.
        let Some(start) = words
            .iter()
            .position(|w| !matches!(w.as_str(), "sudo" | "command" | "exec" | "time"))
        else {
            continue;
        };
        let program = words[start].rsplit('/').next().unwrap_or(&words[start]);
        let args = &words[start + 1..];
        let looks_like_path = |w: &&String| {
            !w.starts_with('-')
                && !w.starts_with('>')
                && !w.starts_with('<')
                && (w.contains('.') || w.contains('/'))
                && !w
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == 'p')
        };
        if READERS.contains(&program) {
            reads.extend(args.iter().filter(looks_like_path).cloned());
        } else if LAST_ARG_READERS.contains(&program)
            && let Some(last) = args.last().filter(looks_like_path)
            && args.len() >= 2
        {
            reads.push(last.clone());
        }
    }
    reads
}

/// A trace being read from an event stream.
#[derive(Debug)]
pub struct TraceBuilder {
    /// The workspace root as the agent saw it (its working directory).
    pub root: Option<String>,
    pub trace: WorkspaceTrace,
}

impl Default for TraceBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceBuilder {
    pub fn new() -> Self {
        Self {
            root: None,
            trace: WorkspaceTrace {
                files_read: Vec::new(),
                instruction_files: Vec::new(),
                skills: Vec::new(),
                subagents: Vec::new(),
                commands: Vec::new(),
                turns: None,
                session_id: None,
                transcript: None,
            },
        }
    }

    /// Instruction files the harness loads by itself when they are at the
    /// workspace root (`present`: the root's entries, from the host).
    pub fn harness_loads(&mut self, loaded: &[&str], present: &[String]) {
        for name in loaded {
            if present.iter().any(|p| p == name) {
                push_new(&mut self.trace.instruction_files, name.to_string());
            }
        }
    }

    /// The agent read `path` (as the tool gave it).
    pub fn read(&mut self, path: &str) {
        let path = relative(path, self.root.as_deref());
        if path.is_empty() {
            return;
        }
        if is_instruction_file(&path) {
            push_new(&mut self.trace.instruction_files, path.clone());
        }
        if path == "SKILL.md" || path.ends_with("/SKILL.md") {
            let skill = path
                .trim_end_matches("SKILL.md")
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            if !skill.is_empty() {
                push_new(&mut self.trace.skills, skill.to_string());
            }
        }
        push_new(&mut self.trace.files_read, path);
    }

    /// The agent ran a shell command.
    pub fn command(&mut self, command: &str) {
        self.trace.commands.push(command.to_string());
        for path in shell_reads(command) {
            self.read(&path);
        }
    }

    pub fn skill(&mut self, name: &str) {
        if !name.trim().is_empty() {
            push_new(&mut self.trace.skills, name.trim().to_string());
        }
    }

    pub fn subagent(&mut self, name: &str) {
        if !name.trim().is_empty() {
            self.trace.subagents.push(name.trim().to_string());
        }
    }
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Arguments that name a file, made workspace-relative so that assertions
/// on them (`args: {file_path: AGENTS.md}`) hold on any machine.
const PATH_ARGUMENTS: &[&str] = &["file_path", "path", "notebook_path"];

/// `input` with its path arguments relative to `root`.
pub fn relative_arguments(mut input: Value, root: Option<&str>) -> Value {
    if let Some(object) = input.as_object_mut() {
        for key in PATH_ARGUMENTS {
            if let Some(Value::String(path)) = object.get_mut(*key) {
                *path = relative(path, root);
            }
        }
    }
    input
}

/// A tool call as recorded: its arguments as JSON text.
pub fn tool_call(name: &str, arguments: &Value) -> ToolCall {
    ToolCall {
        name: name.to_string(),
        arguments: (!arguments.is_null()).then(|| arguments.to_string()),
        output: None,
        succeeded: None,
        duration_ms: None,
    }
}

/// The first `limit` characters of `text`.
pub fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The last JSON object in `text` (bare or in a ```json fence), as text:
/// what an agent's final answer reports in structured form.
pub fn last_json_object(text: &str) -> Option<String> {
    let mut end = text.len();
    while let Some(close) = text[..end].rfind('}') {
        let mut start = close;
        while let Some(open) = text[..start].rfind('{') {
            if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(&text[open..=close])
            {
                return Some(value.to_string());
            }
            start = open;
        }
        end = close;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_workspace() {
        let root = Some("/tmp/ws");
        assert_eq!(relative("/tmp/ws/AGENTS.md", root), "AGENTS.md");
        assert_eq!(relative("./wit/README.md", root), "wit/README.md");
        assert_eq!(relative("/etc/passwd", root), "/etc/passwd");
        assert_eq!(relative("/tmp/wsx/a", root), "/tmp/wsx/a");
    }

    #[test]
    fn shell_reads_take_path_arguments_of_reading_commands() {
        assert_eq!(shell_reads("cat AGENTS.md | head -3"), ["AGENTS.md"]);
        assert_eq!(
            shell_reads("head -n 20 docs/ARCHITECTURE.md && sed -n 1,40p wit/README.md"),
            ["docs/ARCHITECTURE.md", "wit/README.md"]
        );
        assert_eq!(shell_reads("grep -n route AGENTS.md"), ["AGENTS.md"]);
        assert_eq!(
            shell_reads("ls -la; cargo test --workspace"),
            Vec::<String>::new()
        );
        assert_eq!(shell_reads("/bin/cat './notes.txt'"), ["./notes.txt"]);
    }

    #[test]
    fn reads_note_instruction_files_and_skills() {
        let mut trace = TraceBuilder::new();
        trace.root = Some("/w".into());
        trace.read("/w/AGENTS.md");
        trace.command("cat skills/release-notes/SKILL.md");
        trace.read("/w/AGENTS.md");
        trace.read("/w/.claude/rules.md");
        assert_eq!(
            trace.trace.files_read,
            [
                "AGENTS.md",
                "skills/release-notes/SKILL.md",
                ".claude/rules.md"
            ]
        );
        assert_eq!(
            trace.trace.instruction_files,
            ["AGENTS.md", ".claude/rules.md"]
        );
        assert_eq!(trace.trace.skills, ["release-notes"]);
        trace.harness_loads(&["CLAUDE.md"], &["CLAUDE.md".into(), "src".into()]);
        assert_eq!(trace.trace.instruction_files.last().unwrap(), "CLAUDE.md");
    }

    #[test]
    fn the_last_json_object_of_a_final_answer() {
        assert_eq!(
            last_json_object("Route chosen.\n```json\n{\"selectedSkill\": \"wit-contract\"}\n```")
                .as_deref(),
            Some(r#"{"selectedSkill":"wit-contract"}"#)
        );
        assert_eq!(
            last_json_object(r#"a {"a":1} then {"b":{"c":2}} end"#).as_deref(),
            Some(r#"{"b":{"c":2}}"#)
        );
        assert_eq!(last_json_object("no json {here"), None);
    }
}
