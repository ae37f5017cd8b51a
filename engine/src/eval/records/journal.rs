//! The run journal, `cells.jsonl`: one line per finished case, appended as
//! each batch of results reaches the writer and flushed to the kernel
//! before the next batch, so every finished case survives SIGINT, SIGTERM,
//! a crash or SIGKILL of the process. `eval test --resume <run-dir>` reads
//! it to run only the cases that did not finish and to write the complete
//! packets.
//!
//! A line is `{"case": <index>, "caseId", "status", "recommendation",
//! "tags", "summary", "observed": <evaluation>, "verdict": <summary
//! evaluation>}`. A summary evaluation usually repeats the observed one and
//! adds members after it; such a line keeps only what it adds, as
//! `"verdictAfterObserved": {<added members>}`, which halves the journal.
//! Lines are in the order cases finished; a resumed run
//! appends to the same file. A last line cut short by a crash is ignored
//! (and cut off before new lines are appended); a damaged line elsewhere
//! is an error naming it. Every line's case index must be one of the run's
//! and appear once; a resumed run also checks each line's `caseId` is the
//! suite's case at that index ([`Journal::load_checked`]), so an edited or
//! foreign journal is refused (naming the line) instead of putting one
//! case's result in another's place.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::eval::EvalError;
use crate::eval::verdict::tally::{
    recommendation_from_name, recommendation_name, status_from_name, status_name,
};
use crate::plugin::bindings::preset_api::Verdict;

/// The journal's file name in a run directory.
pub const FILE: &str = "cells.jsonl";

/// A finished case as the journal keeps it.
#[derive(Debug, Clone)]
pub struct Finished {
    pub index: usize,
    /// The observed evaluation (JSON text).
    pub observed: String,
    /// The verdict, its body being the summary evaluation.
    pub verdict: Verdict,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    case: usize,
    case_id: String,
    status: String,
    recommendation: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    summary: String,
    #[serde(borrow)]
    observed: &'a RawValue,
    #[serde(borrow, default)]
    verdict: Option<&'a RawValue>,
    #[serde(borrow, default)]
    verdict_after_observed: Option<&'a RawValue>,
}

impl Line<'_> {
    /// The summary evaluation, rebuilt from the observed one when the line
    /// kept only what it adds.
    fn verdict_body(&self) -> Option<String> {
        match (self.verdict, self.verdict_after_observed) {
            (Some(verdict), _) => Some(verdict.get().to_string()),
            (None, Some(added)) => {
                let head = self.observed.get().strip_suffix('}')?;
                let added = added.get().strip_prefix('{')?;
                Some(format!("{head},{added}"))
            }
            (None, None) => None,
        }
    }
}

/// What `verdict` adds after the members of `observed` (both one JSON
/// object on one line), as the text after the separating comma: `Some`
/// when `verdict` starts with every member of `observed`, in order and
/// byte for byte. JSON parses a shared prefix the same way, so the rest
/// is the verdict's remaining members and its closing brace.
fn added_after<'v>(observed: &str, verdict: &'v str) -> Option<&'v str> {
    let head = observed.strip_suffix('}')?;
    if head.trim_end() == "{" {
        return None;
    }
    verdict.strip_prefix(head)?.strip_prefix(',')
}

/// Appends finished cases to a journal.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl JournalWriter {
    /// Opens `path` for appending (creating it).
    pub fn open(path: &Path) -> Result<Self, EvalError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| write_error(path, source))?;
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(256 * 1024, file),
        })
    }

    /// Appends one finished case (buffered until [`JournalWriter::flush`]).
    pub fn append(&mut self, finished: &Finished) -> Result<(), EvalError> {
        let verdict = &finished.verdict;
        let mut line = String::with_capacity(
            finished.observed.len() + verdict.body.len() + verdict.summary.len() + 128,
        );
        line.push_str("{\"case\":");
        line.push_str(&finished.index.to_string());
        for (key, value) in [
            ("caseId", verdict.case_id.as_str()),
            ("status", status_name(verdict.status)),
            (
                "recommendation",
                recommendation_name(verdict.recommendation),
            ),
            ("summary", verdict.summary.as_str()),
        ] {
            line.push_str(",\"");
            line.push_str(key);
            line.push_str("\":");
            line.push_str(&json_string(value));
        }
        line.push_str(",\"tags\":");
        line.push_str(&serde_json::to_string(&verdict.tags).unwrap_or_else(|_| "[]".into()));
        let observed = one_line(&finished.observed);
        let body = one_line(&verdict.body);
        let (observed, body) = (observed.trim(), body.trim());
        line.push_str(",\"observed\":");
        line.push_str(observed);
        match added_after(observed, body) {
            Some(added) => {
                line.push_str(",\"verdictAfterObserved\":{");
                line.push_str(added);
            }
            None => {
                line.push_str(",\"verdict\":");
                line.push_str(body);
            }
        }
        line.push('}');
        // A secret that reached a case is scrubbed (as JSON) on its way out.
        let scrubbed = match crate::secrets::scrub_granted_json(&line) {
            std::borrow::Cow::Owned(clean) => Some(clean),
            std::borrow::Cow::Borrowed(_) => None,
        };
        if let Some(clean) = scrubbed {
            line = clean;
        }
        line.push('\n');
        self.out
            .write_all(line.as_bytes())
            .map_err(|source| write_error(&self.path, source))
    }

    /// Hands everything appended so far to the operating system: from now
    /// on it survives the process being killed.
    pub fn flush(&mut self) -> Result<(), EvalError> {
        self.out
            .flush()
            .map_err(|source| write_error(&self.path, source))
    }
}

/// The suite index of a case id, if it is one of the suite's.
pub type IndexOf<'a> = dyn Fn(&str) -> Option<usize> + 'a;

/// A journal read back: where each finished case's line is.
pub struct Journal {
    file: File,
    path: PathBuf,
    /// Byte offset of each case's line, by case index (`u64::MAX`: not finished).
    offsets: Vec<u64>,
    finished: usize,
}

impl Journal {
    /// Indexes the journal at `path` of a run of `total` cases. A missing
    /// file is an empty journal. A torn last line is cut off.
    pub fn load(path: &Path, total: usize) -> Result<Self, EvalError> {
        Self::load_checked(path, total, None)
    }

    /// [`Journal::load`], checking with `index_of` (the suite index of a
    /// case id, if it is the suite's) that each line's `caseId` is the
    /// suite's case at the line's index. Nothing is cut off when a line is
    /// refused.
    pub fn load_checked(
        path: &Path,
        total: usize,
        index_of: Option<&IndexOf<'_>>,
    ) -> Result<Self, EvalError> {
        if !path.exists() {
            File::create(path).map_err(|source| write_error(path, source))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| write_error(path, source))?;
        // A pipe or a device put in its place would never end.
        crate::regular_file::refuse_special(&file).map_err(|source| write_error(path, source))?;
        let mut reader = BufReader::new(&file);
        let mut offsets = vec![u64::MAX; total];
        let mut finished = 0;
        let mut offset = 0u64;
        let mut number = 0usize;
        let mut line = Vec::new();
        let mut torn_at = None;
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|source| write_error(path, source))?;
            if read == 0 {
                break;
            }
            number += 1;
            let complete = line.ends_with(b"\n");
            match serde_json::from_slice::<Line<'_>>(&line) {
                Ok(entry)
                    if complete
                        && entry.verdict.is_none()
                        && entry.verdict_after_observed.is_none() =>
                {
                    return Err(corrupt(path, number, "a line without its verdict"));
                }
                Ok(entry) if complete && entry.case < total => {
                    if offsets[entry.case] != u64::MAX {
                        return Err(disagrees(
                            path,
                            number,
                            &format!(
                                "case {} was journaled on an earlier line already; a case is journaled once",
                                entry.case
                            ),
                        ));
                    }
                    if let Some(index_of) = index_of {
                        match index_of(&entry.case_id) {
                            Some(index) if index == entry.case => {}
                            Some(index) => {
                                return Err(disagrees(
                                    path,
                                    number,
                                    &format!(
                                        "the line is case {} but its caseId `{}` is the suite's case {index}",
                                        entry.case,
                                        crate::term::short_id(&entry.case_id)
                                    ),
                                ));
                            }
                            None => {
                                return Err(disagrees(
                                    path,
                                    number,
                                    &format!(
                                        "the line is case {} but its caseId `{}` is no case of the suite",
                                        entry.case,
                                        crate::term::short_id(&entry.case_id)
                                    ),
                                ));
                            }
                        }
                    }
                    finished += 1;
                    offsets[entry.case] = offset;
                }
                Ok(entry) if complete => {
                    return Err(corrupt(
                        path,
                        number,
                        &format!(
                            "case {} is past the run's {total} cases; the journal belongs to another run",
                            entry.case
                        ),
                    ));
                }
                _ if !complete => {
                    torn_at = Some(offset);
                    break;
                }
                Ok(_) => unreachable!("complete and incomplete are covered"),
                Err(error) => return Err(corrupt(path, number, &error.to_string())),
            }
            offset += read as u64;
        }
        drop(reader);
        if let Some(offset) = torn_at {
            // A crash cut the last line short: its case did not finish.
            file.set_len(offset)
                .map_err(|source| write_error(path, source))?;
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
            offsets,
            finished,
        })
    }

    /// Number of finished cases.
    pub fn finished(&self) -> usize {
        self.finished
    }

    /// Whether case `index` finished.
    pub fn contains(&self, index: usize) -> bool {
        self.offsets.get(index).is_some_and(|&o| o != u64::MAX)
    }

    /// Reads finished case `index`.
    pub fn read(&mut self, index: usize) -> Result<Finished, EvalError> {
        let offset = self.offsets[index];
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|source| write_error(&self.path, source))?;
        let mut line = Vec::new();
        BufReader::new(&self.file)
            .read_until(b'\n', &mut line)
            .map_err(|source| write_error(&self.path, source))?;
        let entry: Line<'_> = serde_json::from_slice(&line)
            .map_err(|e| corrupt(&self.path, 0, &format!("case {index}: {e}")))?;
        let bad = |what: &str| corrupt(&self.path, 0, &format!("case {index}: unknown {what}"));
        let body = entry
            .verdict_body()
            .ok_or_else(|| bad("verdict (neither `verdict` nor `verdictAfterObserved`)"))?;
        Ok(Finished {
            index,
            observed: entry.observed.get().to_string(),
            verdict: Verdict {
                case_id: entry.case_id,
                status: status_from_name(&entry.status).ok_or_else(|| bad("status"))?,
                recommendation: recommendation_from_name(&entry.recommendation)
                    .ok_or_else(|| bad("recommendation"))?,
                tags: entry.tags,
                summary: entry.summary,
                body,
            },
        })
    }
}

fn write_error(path: &Path, source: std::io::Error) -> EvalError {
    EvalError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupt(path: &Path, line: usize, message: &str) -> EvalError {
    let at = if line > 0 {
        format!(" at line {line}")
    } else {
        String::new()
    };
    EvalError::Input {
        path: path.to_path_buf(),
        message: format!(
            "the run journal is damaged{at} ({message}); start a new run instead of resuming this one"
        ),
    }
}

/// A journal line that parses but does not belong to this run's suite.
fn disagrees(path: &Path, line: usize, message: &str) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: format!(
            "the run journal disagrees with the suite at line {line}: {message}; the journal was edited or belongs to another run, so its finished cases cannot be trusted: start a new run instead of resuming this one"
        ),
    }
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

/// `json` (already checked to be one JSON value) on one line: plugin
/// output may be pretty-printed, and in JSON text a raw line break can only
/// be whitespace between tokens (inside strings it is escaped).
fn one_line(json: &str) -> std::borrow::Cow<'_, str> {
    if memchr::memchr2(b'\n', b'\r', json.as_bytes()).is_none() {
        return std::borrow::Cow::Borrowed(json);
    }
    std::borrow::Cow::Owned(json.replace(['\n', '\r'], " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation};

    fn finished(index: usize, body: &str) -> Finished {
        Finished {
            index,
            observed: format!("{{\"caseId\":\"c{index}\",\n \"x\": 1}}"),
            verdict: Verdict {
                case_id: format!("c{index}"),
                status: CaseStatus::Failed,
                recommendation: Recommendation::Reject,
                tags: vec!["unstable".into()],
                summary: "why \"quoted\"\nsecond line".into(),
                body: body.into(),
            },
        }
    }

    #[test]
    fn finished_cases_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut writer = JournalWriter::open(&path).unwrap();
        writer.append(&finished(2, r#"{"caseId":"c2"}"#)).unwrap();
        writer.append(&finished(0, r#"{"caseId":"c0"}"#)).unwrap();
        writer.flush().unwrap();
        let mut journal = Journal::load(&path, 4).unwrap();
        assert_eq!(journal.finished(), 2);
        assert!(journal.contains(0) && journal.contains(2));
        assert!(!journal.contains(1) && !journal.contains(3) && !journal.contains(9));
        let back = journal.read(2).unwrap();
        let want = finished(2, r#"{"caseId":"c2"}"#).verdict;
        assert_eq!(
            (
                back.verdict.case_id,
                back.verdict.status,
                back.verdict.recommendation
            ),
            (want.case_id, want.status, want.recommendation)
        );
        assert_eq!(
            (back.verdict.tags, back.verdict.summary, back.verdict.body),
            (want.tags, want.summary, want.body)
        );
        assert_eq!(
            back.observed, r#"{"caseId":"c2",  "x": 1}"#,
            "kept on one line"
        );
    }

    #[test]
    fn a_verdict_that_extends_the_observed_evaluation_keeps_only_what_it_adds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let observed = r#"{"caseId":"c0","x":{"y":"},"}}"#;
        let extends = r#"{"caseId":"c0","x":{"y":"},"},"status":"failed","n":[1]}"#;
        let differs = r#"{"caseId":"c1","x":2,"status":"failed"}"#;
        let mut writer = JournalWriter::open(&path).unwrap();
        for (index, body) in [(0, extends), (1, differs), (2, observed)] {
            let mut case = finished(index, body);
            case.observed = observed.to_string();
            writer.append(&case).unwrap();
        }
        writer.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].ends_with(r#","verdictAfterObserved":{"status":"failed","n":[1]}}"#),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains(r#""verdict":{"caseId":"c1""#),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains(r#""verdict":{"caseId":"c0""#),
            "{}",
            lines[2]
        );
        let mut journal = Journal::load(&path, 3).unwrap();
        for (index, body) in [(0, extends), (1, differs), (2, observed)] {
            assert_eq!(journal.read(index).unwrap().verdict.body, body);
        }
        std::fs::write(
            &path,
            r#"{"case":0,"caseId":"c0","status":"failed","recommendation":"reject","observed":{}}"#
                .to_owned()
                + "\n",
        )
        .unwrap();
        let error = Journal::load(&path, 1).err().unwrap().to_string();
        assert!(error.contains("without its verdict"), "{error}");
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_appending_resumes_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut writer = JournalWriter::open(&path).unwrap();
        writer.append(&finished(0, "{}")).unwrap();
        writer.flush().unwrap();
        drop(writer);
        let good = std::fs::metadata(&path).unwrap().len();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"case":1,"caseId":"c1","sta"#).unwrap();
        drop(file);
        let journal = Journal::load(&path, 3).unwrap();
        assert_eq!(journal.finished(), 1);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
        let mut writer = JournalWriter::open(&path).unwrap();
        writer.append(&finished(1, "{}")).unwrap();
        writer.flush().unwrap();
        assert_eq!(Journal::load(&path, 3).unwrap().finished(), 2);
    }

    #[test]
    fn a_line_that_disagrees_with_the_suite_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let index_of = |id: &str| id.strip_prefix('c').and_then(|n| n.parse().ok());
        let check: Option<&IndexOf<'_>> = Some(&index_of);
        let write = |cases: &[(usize, &str)]| {
            let mut writer = JournalWriter::open(&path).unwrap();
            for &(index, id) in cases {
                let mut case = finished(index, "{}");
                case.verdict.case_id = id.into();
                writer.append(&case).unwrap();
            }
            writer.flush().unwrap();
        };
        write(&[(0, "c0"), (1, "c1")]);
        assert_eq!(
            Journal::load_checked(&path, 3, check).unwrap().finished(),
            2
        );
        for (cases, line, why) in [
            (&[(0, "c0"), (1, "c0")][..], 2, "is the suite's case 0"),
            (
                &[(1, "c1"), (1, "c1")][..],
                2,
                "journaled on an earlier line",
            ),
            (&[(2, "x\n\u{202e}")][..], 1, "no case of the suite"),
            (&[(0, "c0"), (7, "c7")][..], 2, "past the run's 3 cases"),
        ] {
            std::fs::remove_file(&path).unwrap();
            write(cases);
            let before = std::fs::read(&path).unwrap();
            let error = Journal::load_checked(&path, 3, check).err().unwrap();
            assert!(error.is_definition_error());
            let error = error.to_string();
            assert!(
                error.contains(&format!("line {line}")) && error.contains(why),
                "{error}"
            );
            assert!(!error.contains('\n'), "one line: {error}");
            assert_eq!(std::fs::read(&path).unwrap(), before, "nothing cut");
        }
        // Without the suite's ids (an experiment's record, a promotion),
        // a duplicate is still refused.
        std::fs::remove_file(&path).unwrap();
        write(&[(1, "c1"), (1, "c1")]);
        let error = Journal::load(&path, 3).err().unwrap().to_string();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn damage_in_the_middle_and_foreign_journals_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, "not json\n{}\n").unwrap();
        let error = Journal::load(&path, 3).err().unwrap().to_string();
        assert!(error.contains("damaged at line 1"), "{error}");
        let mut writer = JournalWriter::open(&dir.path().join("b.jsonl")).unwrap();
        writer.append(&finished(7, "{}")).unwrap();
        writer.flush().unwrap();
        let error = Journal::load(&dir.path().join("b.jsonl"), 3)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("belongs to another run"), "{error}");
    }
}
