//! `answers.jsonl`: each case's provider answers, kept in the run directory
//! the moment its calls finish. Results reach the journal (`cells.jsonl`)
//! in case order, and only once their batch is scored, so the answers of
//! every case behind a slow one (a hanging service, a long agent session)
//! would otherwise live only in memory: a second interrupt, SIGKILL, an
//! OOM kill or a CI timeout lost them, and `--resume` paid for them again.
//!
//! A line is `{"case": <index>, "caseId", "samples": [{"observation":
//! <as a cassette stores it>} or {"error": <text>}, each with "durationMs"
//! and, when saved, "transcript"], "firstByteMs"}` for a case whose samples
//! all finished, written from the call's task (so in the order calls
//! finish) with one `write_all` under a lock, straight to the kernel. It is
//! redacted as a cassette entry is before it is written (the user's
//! `redact` paths, credential-named fields, the granted secrets), then
//! scrubbed of every secret the process registered.
//!
//! `eval test --resume` reads it ([`Answers::resume`]): a case the journal
//! does not hold but this file does is scored from its kept samples, and
//! the provider is not asked again; an answer served so is not written
//! again. A line's case index must be one of the run's and appear once, and
//! its `caseId` must be the suite's case at that index; a last line cut
//! short by a crash is cut off (its case is asked again); any other damaged
//! line is refused, naming the file and the line. A resumed case is scored
//! from the redacted answer, as a replayed cassette entry is.
//!
//! The journal stays the record of scored cases; this file is a resume aid
//! only: a new run starts it empty, a completed run removes it, a run that
//! was interrupted, failed or killed leaves it for `--resume`.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::eval::EvalError;
use crate::eval::provider::calls::{CaseSamples, TRANSCRIPTS};
use crate::eval::provider::cassette::redact_recorded;
use crate::eval::provider::observation_json::{observation_from, observation_json};
use crate::eval::redact::Redaction;
use crate::plugin::bindings::preset_api::Sample;

/// The file's name in a run directory.
pub const FILE: &str = "answers.jsonl";

/// The suite index of a case id, if it is one of the suite's.
pub type IndexOf<'a> = dyn Fn(&str) -> Option<usize> + 'a;

/// A run's kept answers: those an earlier part of the run kept (served
/// instead of calling the provider again), and the file new ones go to.
pub struct Answers {
    path: PathBuf,
    /// Appends; `None` once a write failed (said once, the run goes on).
    out: Mutex<Option<File>>,
    /// Reads the earlier answers back (a handle of its own, so appending
    /// never moves its position).
    earlier: Mutex<Option<File>>,
    /// Where each earlier answer's line starts, by case index (cases the
    /// journal holds left out).
    offsets: BTreeMap<usize, u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    case: usize,
    case_id: String,
    samples: Vec<KeptSample>,
    #[serde(default)]
    first_byte_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct KeptSample {
    #[serde(default)]
    observation: Option<Value>,
    #[serde(default)]
    error: Option<String>,
    duration_ms: u64,
    #[serde(default)]
    transcript: Option<String>,
}

impl Answers {
    /// A new run's answers: the file started empty.
    pub fn start(path: &Path) -> Result<Self, EvalError> {
        File::create(path).map_err(|source| write_error(path, source))?;
        Self::open(path, BTreeMap::new())
    }

    /// A resumed run's answers: the file read and checked line by line
    /// (see the module docs), a torn last line cut off; `journaled` cases
    /// are not served. A missing file has no answers.
    pub fn resume(
        path: &Path,
        total: usize,
        index_of: Option<&IndexOf<'_>>,
        journaled: &dyn Fn(usize) -> bool,
    ) -> Result<Self, EvalError> {
        let Some(file) = crate::regular_file::open(path).map_err(|e| write_error(path, e))? else {
            return Self::start(path);
        };
        let mut reader = BufReader::new(file);
        let (mut offset, mut number, mut line) = (0u64, 0usize, Vec::new());
        let mut seen = BTreeMap::new();
        let mut torn_at = None;
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| write_error(path, e))?;
            if read == 0 {
                break;
            }
            number += 1;
            if !line.ends_with(b"\n") {
                torn_at = Some(offset);
                break;
            }
            let (case, case_id) =
                checked(&line, total).map_err(|why| damaged(path, number, &why))?;
            if let Some((earlier, _)) = seen.insert(case, (number, offset)) {
                let why = format!("case {case} was kept on line {earlier} already");
                return Err(disagrees(path, number, &why));
            }
            if let Some(index_of) = index_of
                && index_of(&case_id) != Some(case)
            {
                let why = match index_of(&case_id) {
                    Some(index) => format!(
                        "its caseId `{}` is the suite's case {index}",
                        crate::term::short_id(&case_id)
                    ),
                    None => format!(
                        "its caseId `{}` is no case of the suite",
                        crate::term::short_id(&case_id)
                    ),
                };
                return Err(disagrees(
                    path,
                    number,
                    &format!("the line is case {case} but {why}"),
                ));
            }
            offset += read as u64;
        }
        drop(reader);
        if let Some(offset) = torn_at {
            let file = OpenOptions::new().write(true).open(path);
            file.and_then(|f| f.set_len(offset))
                .map_err(|e| write_error(path, e))?;
        }
        let offsets = seen
            .into_iter()
            .filter(|&(case, _)| !journaled(case))
            .map(|(case, (_, offset))| (case, offset))
            .collect();
        Self::open(path, offsets)
    }

    fn open(path: &Path, offsets: BTreeMap<usize, u64>) -> Result<Self, EvalError> {
        let out = OpenOptions::new().append(true).open(path);
        let out = out.map_err(|e| write_error(path, e))?;
        let earlier = if offsets.is_empty() {
            None
        } else {
            Some(File::open(path).map_err(|e| write_error(path, e))?)
        };
        Ok(Self {
            path: path.to_path_buf(),
            out: Mutex::new(Some(out)),
            earlier: Mutex::new(earlier),
            offsets,
        })
    }

    /// How many unfinished cases have answers kept earlier.
    pub fn kept(&self) -> usize {
        self.offsets.len()
    }

    /// Case `case`'s samples as an earlier part of the run kept them, if it
    /// kept `samples` of them for `case_id`. One that cannot be read back
    /// any more (the file changed since it was checked) is asked again.
    pub fn earlier(&self, case: usize, case_id: &str, samples: usize) -> Option<CaseSamples> {
        let offset = *self.offsets.get(&case)?;
        let mut file = self.earlier.lock().unwrap_or_else(|p| p.into_inner());
        let mut text = Vec::new();
        let read = file.as_mut().map(|file| {
            file.seek(SeekFrom::Start(offset))?;
            BufReader::new(file).read_until(b'\n', &mut text)
        });
        let kept = match read {
            Some(Ok(_)) => parse(&text).and_then(|line| {
                if line.case_id == case_id {
                    to_samples(line)
                } else {
                    Err(format!(
                        "it is case `{}`'s",
                        crate::term::short_id(&line.case_id)
                    ))
                }
            }),
            Some(Err(error)) => Err(error.to_string()),
            None => Err("the file is not open".into()),
        };
        match kept {
            Ok(kept) if kept.samples.len() == samples => Some(kept),
            Ok(kept) => self.asked_again(
                case_id,
                &format!("{} samples, not {samples}", kept.samples.len()),
            ),
            Err(why) => self.asked_again(case_id, &why),
        }
    }

    fn asked_again(&self, case_id: &str, why: &str) -> Option<CaseSamples> {
        eprintln!(
            "warning: the answer kept for case `{}` in {} cannot be used ({}); the provider is asked again",
            crate::term::inline(case_id),
            crate::term::shown(self.path.display()),
            crate::term::inline(why)
        );
        None
    }

    /// Keeps case `case`'s finished samples (redacted of `redaction`'s
    /// paths and `secrets`, as a cassette is). A write that fails is said
    /// once and the run goes on: the journal is the record.
    pub fn keep(
        &self,
        case: usize,
        case_id: &str,
        taken: &CaseSamples,
        redaction: &Redaction,
        secrets: &[String],
    ) {
        // A sample that failed once the run was interrupted may have failed
        // of the interruption itself (the provider's program got the same
        // signal, as every process of a stopped Slurm job does): not kept,
        // so `--resume` asks again.
        if crate::eval::interrupt::requested() && taken.samples.iter().any(|s| s.outcome.is_err()) {
            return;
        }
        let text = line_text(case, case_id, taken, redaction, secrets);
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = out.as_mut()
            && let Err(error) = file.write_all(text.as_bytes())
        {
            *out = None;
            eprintln!(
                "warning: cannot keep the provider's answers in {} ({}); a killed run's `--resume` asks the provider again for the cases its journal lacks",
                crate::term::shown(self.path.display()),
                crate::term::shown(&error)
            );
        }
    }
}

/// A case's line: its samples redacted as a cassette entry is, then the
/// whole line scrubbed of every registered secret.
fn line_text(
    case: usize,
    case_id: &str,
    taken: &CaseSamples,
    redaction: &Redaction,
    secrets: &[String],
) -> String {
    let mut outcomes = Value::Array(
        taken
            .samples
            .iter()
            .map(|sample| match &sample.outcome {
                Ok(observation) => json!({"observation": observation_json(observation)}),
                Err(error) => json!({"error": error}),
            })
            .collect(),
    );
    // Redacted together, so a text redacted in one sample goes from all.
    redact_recorded(&mut outcomes, redaction, secrets);
    let Value::Array(mut samples) = outcomes else {
        unreachable!("redaction keeps an array an array")
    };
    for (entry, sample) in samples.iter_mut().zip(&taken.samples) {
        entry["durationMs"] = json!(sample.duration_ms);
        if let Some(transcript) = &sample.transcript {
            entry["transcript"] = json!(transcript);
        }
    }
    let mut line = json!({"case": case, "caseId": case_id, "samples": samples});
    if let Some(ms) = taken.first_byte_ms {
        line["firstByteMs"] = json!(ms);
    }
    let mut text = crate::secrets::scrub_granted_json(&line.to_string()).into_owned();
    text.push('\n');
    text
}

fn parse(text: &[u8]) -> Result<Line, String> {
    serde_json::from_slice(text).map_err(|e| e.to_string())
}

/// A complete line's case index and id, once its samples read back.
fn checked(text: &[u8], total: usize) -> Result<(usize, String), String> {
    let line = parse(text)?;
    if line.case >= total {
        return Err(format!(
            "case {} is past the run's {total} cases; the file belongs to another run",
            line.case
        ));
    }
    let (case, case_id) = (line.case, line.case_id.clone());
    to_samples(line)?;
    Ok((case, case_id))
}

/// The samples a line kept.
fn to_samples(line: Line) -> Result<CaseSamples, String> {
    if line.samples.is_empty() {
        return Err("a case without samples".into());
    }
    let samples = line
        .samples
        .into_iter()
        .map(|kept| {
            let outcome = match (kept.observation, kept.error) {
                (Some(observation), None) => Ok(observation_from(&observation)?),
                (None, Some(error)) => Err(error),
                _ => return Err("a sample needs either `observation` or `error`".to_string()),
            };
            if let Some(name) = &kept.transcript
                && !is_transcript_name(name)
            {
                return Err(format!(
                    "`{}` is no transcript of this run",
                    crate::term::short_id(name)
                ));
            }
            Ok(Sample {
                outcome,
                duration_ms: kept.duration_ms,
                transcript: kept.transcript,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(CaseSamples {
        samples,
        first_byte_ms: line.first_byte_ms,
    })
}

/// A name the run gives a saved transcript: a plain file under `transcripts/`.
fn is_transcript_name(name: &str) -> bool {
    name.strip_prefix(TRANSCRIPTS)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|file| {
            !file.is_empty() && !file.starts_with('.') && !file.contains(['/', '\\'])
        })
}

fn write_error(path: &Path, source: std::io::Error) -> EvalError {
    EvalError::Write {
        path: path.to_path_buf(),
        source,
    }
}

const ADVICE: &str = "remove the file to resume without it (the provider is asked again for the cases it held), or start a new run";

fn damaged(path: &Path, line: usize, why: &str) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: format!(
            "the provider answers this run kept are damaged at line {line} ({}); {ADVICE}",
            crate::term::inline(why)
        ),
    }
}

fn disagrees(path: &Path, line: usize, why: &str) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: format!(
            "the provider answers this run kept disagree with the suite at line {line}: {why}; the file was edited or belongs to another run, so its answers cannot be trusted: {ADVICE}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::types::Observation;

    fn answered(text: &str) -> Sample {
        let mut observation = Observation::empty();
        observation.final_text = Some(text.into());
        Sample {
            outcome: Ok(observation),
            duration_ms: 40,
            transcript: None,
        }
    }

    fn taken(samples: Vec<Sample>, first_byte_ms: Option<u64>) -> CaseSamples {
        CaseSamples {
            samples,
            first_byte_ms,
        }
    }

    /// `c<n>` is the suite's case `n`.
    fn index_of(id: &str) -> Option<usize> {
        id.strip_prefix('c').and_then(|n| n.parse().ok())
    }

    #[test]
    fn kept_answers_are_served_to_a_resumed_run_as_they_were_taken() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let answers = Answers::start(&path).unwrap();
        let mut with_transcript = answered("two");
        with_transcript.transcript = Some("transcripts/c2-2.jsonl".into());
        let none = Redaction::default();
        answers.keep(
            2,
            "c2",
            &taken(vec![answered("one"), with_transcript], Some(7)),
            &none,
            &[],
        );
        let failed = Sample {
            outcome: Err("HTTP 500: down".into()),
            duration_ms: 3,
            transcript: None,
        };
        answers.keep(0, "c0", &taken(vec![failed], None), &none, &[]);
        answers.keep(
            1,
            "c1",
            &taken(vec![answered("journaled")], None),
            &none,
            &[],
        );
        drop(answers);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);

        let check: &IndexOf<'_> = &index_of;
        let resumed = Answers::resume(&path, 4, Some(check), &|case| case == 1).unwrap();
        assert_eq!(resumed.kept(), 2, "the journaled case is not served");
        assert!(resumed.earlier(1, "c1", 1).is_none());
        assert!(resumed.earlier(3, "c3", 1).is_none(), "never answered");
        let two = resumed.earlier(2, "c2", 2).unwrap();
        assert_eq!(two.first_byte_ms, Some(7));
        let texts: Vec<_> = two
            .samples
            .iter()
            .map(|s| s.outcome.as_ref().unwrap().final_text.clone().unwrap())
            .collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(two.samples[1].duration_ms, 40);
        assert_eq!(
            two.samples[1].transcript.as_deref(),
            Some("transcripts/c2-2.jsonl")
        );
        let zero = resumed.earlier(0, "c0", 1).unwrap();
        assert_eq!(
            zero.samples[0].outcome.as_ref().unwrap_err(),
            "HTTP 500: down"
        );
        assert_eq!(zero.first_byte_ms, None);
        // Another count of samples, or another case's id: asked again.
        assert!(resumed.earlier(2, "c2", 3).is_none());
        assert!(resumed.earlier(2, "c9", 2).is_none());
        // New answers go after the old ones; a new run starts empty.
        resumed.keep(3, "c3", &taken(vec![answered("three")], None), &none, &[]);
        drop(resumed);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 4);
        drop(Answers::start(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[test]
    fn a_kept_answer_is_redacted_as_a_cassette_entry_is() {
        let key = "sk-kept-Secret-77";
        let mut observation = Observation::empty();
        observation.final_text = Some(format!("the key is {key}; mail ann@example.com"));
        observation.structured =
            Some(json!({"api_key": "plain", "customer": {"email": "ann@example.com"}}).to_string());
        let sample = Sample {
            outcome: Ok(observation),
            duration_ms: 1,
            transcript: None,
        };
        let failed = Sample {
            outcome: Err(format!("401: Bearer {}", key.to_ascii_uppercase())),
            duration_ms: 1,
            transcript: None,
        };
        let redaction = Redaction::parse(&["customer.email".to_string()]).unwrap();
        let text = line_text(
            4,
            "c4",
            &taken(vec![sample, failed], None),
            &redaction,
            &[key.into()],
        );
        for gone in [key, &key.to_ascii_uppercase(), "plain", "ann@example.com"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
        let line: Value = serde_json::from_str(&text).unwrap();
        let kept = &line["samples"][0]["observation"]["structured"];
        assert_eq!(kept["api_key"], "[redacted]");
        assert_eq!(kept["customer"]["email"], "[redacted]");
        assert_eq!(line["samples"][1]["error"], "401: Bearer [redacted]");
        assert_eq!(line["caseId"], "c4", "the line's own fields are the host's");
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_damage_elsewhere_is_refused_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let line = |case: usize, id: &str| {
            line_text(
                case,
                id,
                &taken(vec![answered("a")], None),
                &Redaction::default(),
                &[],
            )
        };
        let check: &IndexOf<'_> = &index_of;
        let resume = || Answers::resume(&path, 3, Some(check), &|_| false);
        // A write cut short by a kill: its case is asked again.
        let good = line(0, "c0");
        std::fs::write(&path, format!("{good}{}", &line(1, "c1")[..20])).unwrap();
        assert_eq!(resume().unwrap().kept(), 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), good);

        let transcript = line(1, "c1").replace(
            "\"durationMs\"",
            "\"transcript\":\"../../etc/passwd\",\"durationMs\"",
        );
        for (second, why) in [
            ("not json\n".to_string(), "damaged at line 2"),
            (line(0, "c0"), "case 0 was kept on line 1"),
            (line(1, "c2"), "the suite's case 2"),
            (line(1, "x\n\u{202e}"), "no case of the suite"),
            (line(7, "c7"), "past the run's 3 cases"),
            (
                line(1, "c1").replace("\"observation\"", "\"x\""),
                "damaged at line 2",
            ),
            (transcript, "no transcript of this run"),
            (
                "{\"case\":1,\"caseId\":\"c1\",\"samples\":[]}\n".into(),
                "without samples",
            ),
        ] {
            let text = format!("{good}{second}{}", line(2, "c2"));
            std::fs::write(&path, &text).unwrap();
            let error = resume().err().expect(why);
            assert!(error.is_definition_error());
            let message = error.to_string();
            assert!(
                message.contains(why) && message.contains("line 2") && message.contains(FILE),
                "{why}: {message}"
            );
            assert!(!message.contains('\n'), "one line: {message}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "nothing cut");
        }
    }
}
