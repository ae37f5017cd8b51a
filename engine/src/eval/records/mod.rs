//! What a run writes and prints as it goes: `cells.jsonl`, one line per
//! finished case ([`journal`]); `run.json` ([`run_state`]); the run
//! directory and its claim ([`run_dir`]); packets, journal, tally and case
//! lines as a run writes them ([`run_records`]); progress on a terminal
//! ([`progress`]) and the summary at the end ([`terminal_summary`]).

pub mod journal;
#[cfg(test)]
mod journal_fuzz;
pub mod progress;
pub mod run_dir;
pub mod run_records;
pub mod run_state;
pub mod terminal_summary;
