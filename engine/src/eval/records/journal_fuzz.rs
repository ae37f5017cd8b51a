//! Property tests of resuming from a journal ([`crate::eval::records::journal`]): a
//! `cells.jsonl` built from the lines a run writes, lines that disagree
//! with the suite (an index past the run, a duplicate, a `caseId` of
//! another case or of none), damaged lines and a torn last line, read
//! with the suite's ids. Loading never panics; it accepts exactly the
//! journals whose every complete line is one of the suite's cases at its
//! own index, once, and then holds exactly those cases (each read back
//! under its own id) with the torn line cut off; whatever it refuses is
//! left byte for byte as it was.

use proptest::prelude::*;

use crate::eval::records::journal::{FILE, Finished, Journal, JournalWriter};
use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation, Verdict};

/// One line of a journal as the property test writes it.
#[derive(Debug, Clone)]
enum Line {
    /// A finished case at `index` whose `caseId` is `c<id>`.
    Case { index: usize, id: usize },
    /// Bytes that are no journal line (never JSON: they start with `#`).
    Damaged(String),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        6 => (0usize..8, 0usize..8).prop_map(|(index, id)| Line::Case { index, id }),
        3 => (0usize..8).prop_map(|index| Line::Case { index, id: index }),
        1 => "[^\n]{0,40}".prop_map(|text| Line::Damaged(format!("#{text}"))),
    ]
}

fn finished(index: usize, id: usize) -> Finished {
    Finished {
        index,
        observed: format!("{{\"caseId\":\"c{id}\",\"x\":1}}"),
        verdict: Verdict {
            case_id: format!("c{id}"),
            status: CaseStatus::Passed,
            recommendation: Recommendation::AcceptNow,
            tags: Vec::new(),
            summary: "fine\nsecond \u{1b}[2K line".into(),
            body: format!("{{\"caseId\":\"c{id}\",\"status\":\"passed\"}}"),
        },
    }
}

/// What loading must do: `Some(indices)` to accept (the cases it then
/// holds), `None` to refuse.
fn expected(lines: &[Line], total: usize) -> Option<Vec<usize>> {
    let mut held = Vec::new();
    for line in lines {
        match line {
            Line::Case { index, id } if index == id && *index < total => {
                if held.contains(index) {
                    return None;
                }
                held.push(*index);
            }
            _ => return None,
        }
    }
    held.sort_unstable();
    Some(held)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_journal_is_resumed_only_when_every_line_agrees_with_the_suite(
        lines in proptest::collection::vec(line(), 0..8),
        total in 1usize..7,
        torn in proptest::option::of((line(), 1usize..200)),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut writer = JournalWriter::open(&path).unwrap();
        for line in &lines {
            match line {
                Line::Case { index, id } => writer.append(&finished(*index, *id)).unwrap(),
                Line::Damaged(text) => {
                    writer.flush().unwrap();
                    let mut bytes = std::fs::read(&path).unwrap();
                    bytes.extend_from_slice(text.as_bytes());
                    bytes.push(b'\n');
                    std::fs::write(&path, bytes).unwrap();
                    writer = JournalWriter::open(&path).unwrap();
                }
            }
        }
        writer.flush().unwrap();
        drop(writer);
        let complete = std::fs::read(&path).unwrap();
        // A last line a crash cut short, anywhere before its newline.
        if let Some((line, cut)) = &torn {
            let mut tail = match line {
                Line::Case { index, id } => {
                    let scratch = dir.path().join("scratch.jsonl");
                    let mut writer = JournalWriter::open(&scratch).unwrap();
                    writer.append(&finished(*index, *id)).unwrap();
                    writer.flush().unwrap();
                    std::fs::read(&scratch).unwrap()
                }
                Line::Damaged(text) => format!("{text}\n").into_bytes(),
            };
            // 1 to all but the newline of its bytes (a line holds no other).
            let keep = 1 + cut % (tail.len() - 1);
            tail.truncate(keep);
            let mut bytes = complete.clone();
            bytes.extend_from_slice(&tail);
            std::fs::write(&path, bytes).unwrap();
        }
        let before = std::fs::read(&path).unwrap();

        let index_of = |id: &str| id.strip_prefix('c').and_then(|n| n.parse().ok());
        let outcome = Journal::load_checked(&path, total, Some(&index_of));
        match (expected(&lines, total), outcome) {
            (Some(held), Ok(mut journal)) => {
                prop_assert_eq!(journal.finished(), held.len());
                for index in 0..total + 2 {
                    prop_assert_eq!(journal.contains(index), held.contains(&index));
                }
                for &index in &held {
                    let back = journal.read(index).unwrap();
                    prop_assert_eq!(back.verdict.case_id, format!("c{index}"));
                }
                // The torn line is cut off; the complete lines stay.
                prop_assert_eq!(std::fs::read(&path).unwrap(), complete);
            }
            (None, Err(error)) => {
                let message = error.to_string();
                prop_assert!(message.contains("line "), "{}", message);
                prop_assert!(!message.contains('\u{1b}'), "{}", message);
                prop_assert_eq!(std::fs::read(&path).unwrap(), before, "nothing cut");
            }
            (Some(held), Err(error)) => {
                prop_assert!(false, "refused a journal of cases {:?}: {}", held, error);
            }
            (None, Ok(journal)) => {
                prop_assert!(false, "accepted {} cases of a journal that disagrees: {:?}", journal.finished(), lines);
            }
        }
    }
}
