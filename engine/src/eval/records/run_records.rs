//! The records of one `eval test` run as they are written: the observed
//! and summary packets (streamed in case order), the journal (one line per
//! finished case, flushed per batch), the tally and the per-case terminal
//! lines. A resumed run merges the cases its journal already holds with
//! the ones it runs now, still in case order. An interrupted run's packets
//! hold every finished case, and its summary says it was interrupted.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};

use crate::eval::EvalError;
use crate::eval::files::PacketWriter;
use crate::eval::records::journal::{Finished, Journal, JournalWriter};
use crate::eval::records::terminal_summary;
use crate::eval::verdict::tally::{CaseLine, Tally};
use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation, Verdict};
use crate::schema::packets::Interrupted;

/// A case this run ran to the end.
pub struct RanCase {
    pub index: usize,
    /// The observed evaluation (JSON text).
    pub observed: String,
    pub verdict: Verdict,
    /// The verdict's body is JSON the host rebuilt from a parsed body
    /// (assertion outcomes folded in): written without a second check.
    pub body_checked: bool,
    /// What later steps read of the case (steps runs only).
    pub output: Option<Value>,
}

/// One batch's results, as delivered in order: its range of cases and
/// those that ran (in order; fewer than the range when the run was
/// interrupted or the journal held the others).
pub struct Delivered {
    pub range: Range<usize>,
    pub ran: Vec<RanCase>,
}

/// What happens to each case's terminal line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseLines {
    /// Printed on stdout as the case is written.
    Print,
    /// Kept in the tally (a steps run prints them per step).
    Keep,
    /// Neither (`--json`).
    Drop,
}

/// The writers of a run.
pub struct RunRecords {
    pub observed: PacketWriter,
    pub summary: PacketWriter,
    journal_out: JournalWriter,
    /// The cases an earlier part of this run finished (`--resume`).
    journal: Option<Journal>,
    tally: Tally,
    lines: CaseLines,
    /// The next case index not yet written.
    next: usize,
    outputs: Vec<Value>,
    /// Lines of written cases not printed yet (printed per batch).
    pending_lines: Vec<CaseLine>,
    /// The user's redaction paths, applied before anything is written.
    redaction: crate::eval::redact::Redaction,
}

impl RunRecords {
    pub fn new(
        observed: PacketWriter,
        summary: PacketWriter,
        journal_path: &Path,
        journal: Option<Journal>,
        tally: Tally,
        lines: CaseLines,
    ) -> Result<Self, EvalError> {
        Ok(Self {
            observed,
            summary,
            journal_out: JournalWriter::open(journal_path)?,
            journal,
            tally,
            lines,
            next: 0,
            outputs: Vec::new(),
            pending_lines: Vec::new(),
            redaction: crate::eval::redact::Redaction::default(),
        })
    }

    /// Redacts `redaction`'s paths in every case this run writes.
    pub fn with_redaction(mut self, redaction: crate::eval::redact::Redaction) -> Self {
        self.redaction = redaction;
        self
    }

    /// Writes a delivered batch: every case of its range the journal holds
    /// or this run ran, in order; new ones are journaled and flushed, and
    /// the batch's case lines printed.
    pub fn deliver(&mut self, delivered: Delivered) -> Result<(), EvalError> {
        let result = self.write_batch(delivered);
        self.print_lines();
        result
    }

    fn write_batch(&mut self, delivered: Delivered) -> Result<(), EvalError> {
        let mut ran = delivered.ran.into_iter().peekable();
        for index in delivered.range.clone() {
            if let Some(finished) = self.journaled(index)? {
                self.write(finished.observed, finished.verdict)?;
            } else if ran.peek().is_some_and(|case| case.index == index) {
                let mut case = ran.next().expect("peeked");
                // A case that errored once the run was interrupted may have
                // errored of the interruption itself: the provider's program
                // got the same signal (every process of a Slurm job does
                // when it is requeued or cancelled). It is not kept, so
                // `--resume` runs it again; an answer it got before is in
                // answers.jsonl and is not asked for again.
                if case.verdict.status == CaseStatus::Errored && crate::eval::interrupt::requested()
                {
                    continue;
                }
                self.redaction.apply_case(
                    &mut case.observed,
                    &mut case.verdict.body,
                    &mut case.verdict.summary,
                );
                let finished = Finished {
                    index,
                    observed: case.observed,
                    verdict: case.verdict,
                };
                // The packets check the plugin's JSON first: only a case
                // they took is journaled.
                self.observed.push(&finished.observed)?;
                if case.body_checked {
                    self.summary.push_checked(&finished.verdict.body)?;
                } else {
                    self.summary.push(&finished.verdict.body)?;
                }
                self.journal_out.append(&finished)?;
                if let Some(output) = case.output {
                    self.outputs.push(output);
                }
                self.count(finished.verdict);
            }
        }
        self.next = delivered.range.end;
        self.journal_out.flush()
    }

    fn journaled(&mut self, index: usize) -> Result<Option<Finished>, EvalError> {
        match &mut self.journal {
            Some(journal) if journal.contains(index) => journal.read(index).map(Some),
            _ => Ok(None),
        }
    }

    fn write(&mut self, observed: String, verdict: Verdict) -> Result<(), EvalError> {
        self.observed.push(&observed)?;
        self.summary.push(&verdict.body)?;
        self.count(verdict);
        Ok(())
    }

    /// Tallies a written case and queues its line.
    fn count(&mut self, verdict: Verdict) {
        let cost = self.tally.add(&verdict);
        crate::eval::records::progress::case_done(verdict.status, cost);
        if self.lines == CaseLines::Print {
            self.pending_lines.push(CaseLine {
                case_id: verdict.case_id,
                status: verdict.status,
                summary: verdict.summary,
            });
        }
    }

    /// Prints the lines of the cases written since the last call.
    fn print_lines(&mut self) {
        if self.pending_lines.is_empty() {
            return;
        }
        crate::eval::records::progress::print(|| {
            // Standard output writes each line on its own (it is line
            // buffered): the batch's lines go out together instead, a
            // system call for many cases, flushed before the next batch.
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
            // A closed stdout must not stop the run; the records are on disk.
            let _ = self
                .pending_lines
                .iter()
                .try_for_each(|line| terminal_summary::print_case(&mut out, line))
                .and_then(|()| out.flush());
        });
        self.pending_lines.clear();
    }

    /// Closes the packets. An interrupted run (`interrupted` names the
    /// signal) first writes the journaled cases after the last delivered
    /// batch, then marks its summary: never `accept-now`, and
    /// `interrupted: {signal, finishedCases, totalCases}`.
    pub fn finish(
        mut self,
        total: usize,
        interrupted: Option<&str>,
        evaluated_at: String,
    ) -> Result<(Tally, Vec<Value>), EvalError> {
        if interrupted.is_some() {
            for index in self.next..total {
                if let Some(finished) = self.journaled(index)? {
                    self.write(finished.observed, finished.verdict)?;
                }
            }
        }
        self.print_lines();
        self.journal_out.flush()?;
        if interrupted.is_some() {
            self.tally.at_least(Recommendation::Defer);
        }
        let mut trailer = self.tally.trailer(evaluated_at);
        trailer.interrupted = interrupted.map(|signal| Interrupted {
            signal: signal.to_string(),
            finished_cases: self.summary.len(),
            total_cases: total as u64,
        });
        let trailer = crate::schema::object_of(&trailer);
        self.observed.finish(&Map::new())?;
        self.summary.finish(&trailer)?;
        Ok((self.tally, self.outputs))
    }

    /// Cases written so far.
    pub fn written(&self) -> usize {
        usize::try_from(self.summary.len()).unwrap_or(usize::MAX)
    }
}
