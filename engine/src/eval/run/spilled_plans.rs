//! The preset's plans of a suite too large to keep in memory, set aside on
//! disk by the checking pass and read back in case order by the run pass,
//! so no case is translated twice however large the suite.
//!
//! The file is anonymous (removed by the system when the run ends, however
//! it ends) and lives in the run's own directory: on the disk the records
//! go to, not in a `/tmp` that may be memory; it is readable by its owner
//! alone and has no name. Each plan is its case index, a hash of the case's
//! text as the preset saw it, and the plan, in postcard behind its length.
//! The run pass reads the cases again in the order the checking pass
//! delivered them and asks for each batch's indices; cases a batch skips
//! (none, in a run that is not resumed) are read past. A case whose text is
//! not the one checked (the fixture changed during the run) is refused by
//! the run pass, so no case runs with a plan made of other text.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::eval::EvalError;
use crate::plugin::bindings::preset_api::CasePlan;

/// Plans being set aside by the checking pass.
pub struct PlanSpill {
    out: BufWriter<File>,
    buffer: Vec<u8>,
    count: usize,
    dir: PathBuf,
}

/// The plans set aside, to be read back in order.
pub struct SpilledPlans {
    dir: PathBuf,
    input: BufReader<File>,
    left: usize,
    buffer: Vec<u8>,
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// The hash a case's text is known by between the passes (the same in
/// both: one process, a fixed seed).
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = foldhash::fast::FixedState::with_seed(0x6361_7574_696c_7573).build_hasher();
    hasher.write(text.as_bytes());
    hasher.finish()
}

impl PlanSpill {
    /// An empty, anonymous file in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        let file = tempfile::tempfile_in(dir)?;
        Ok(Self {
            out: BufWriter::with_capacity(256 * 1024, file),
            buffer: Vec::new(),
            count: 0,
            dir: dir.to_path_buf(),
        })
    }

    /// Sets aside the plan of case `index` (indices rise from one call to
    /// the next), made of the case's `text`.
    pub fn push(&mut self, index: usize, text: &str, plan: &CasePlan) -> std::io::Result<()> {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        buffer.extend_from_slice(&[0; 4]);
        let record = (index as u64, text_hash(text), plan);
        buffer = postcard::to_extend(&record, buffer)
            .map_err(|e| invalid(format!("the plan of cases[{index}] does not encode: {e}")))?;
        let length = u32::try_from(buffer.len() - 4)
            .map_err(|_| invalid(format!("the plan of cases[{index}] is over 4 GiB")))?;
        buffer[..4].copy_from_slice(&length.to_le_bytes());
        self.out.write_all(&buffer)?;
        self.buffer = buffer;
        self.count += 1;
        Ok(())
    }

    /// The directory the file is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every plan set aside, to be read back from the first.
    pub fn finish(self) -> std::io::Result<SpilledPlans> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        Ok(SpilledPlans {
            dir: self.dir,
            input: BufReader::with_capacity(256 * 1024, file),
            left: self.count,
            buffer: self.buffer,
        })
    }
}

impl SpilledPlans {
    /// The plans of the cases `indices` (rising), each with the hash of
    /// the text it was made of, reading past the cases before them that
    /// are not asked for.
    pub fn take(&mut self, indices: &[usize]) -> Result<Vec<(u64, CasePlan)>, EvalError> {
        let dir = self.dir.clone();
        let failed = |source| EvalError::SetAside { path: dir, source };
        let mut plans = Vec::with_capacity(indices.len());
        for &wanted in indices {
            loop {
                let (index, hash, plan) = match self.next() {
                    Ok(next) => next,
                    Err(error) => return Err(failed(error)),
                };
                if index == wanted {
                    plans.push((hash, plan));
                    break;
                }
                if index > wanted {
                    return Err(failed(invalid(format!(
                        "cases[{wanted}] was not set aside (the next is cases[{index}])"
                    ))));
                }
            }
        }
        Ok(plans)
    }

    fn next(&mut self) -> std::io::Result<(usize, u64, CasePlan)> {
        if self.left == 0 {
            return Err(invalid("every plan set aside was read".into()));
        }
        let mut length = [0u8; 4];
        self.input.read_exact(&mut length)?;
        let length = u32::from_le_bytes(length) as usize;
        self.buffer.resize(length, 0);
        self.input.read_exact(&mut self.buffer)?;
        self.left -= 1;
        let (index, hash, plan): (u64, u64, CasePlan) = postcard::from_bytes(&self.buffer)
            .map_err(|e| invalid(format!("a plan set aside does not decode: {e}")))?;
        let index = usize::try_from(index).map_err(|_| invalid("a case index overflows".into()))?;
        Ok((index, hash, plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::types::Message;

    fn text(i: usize) -> String {
        format!(r#"{{"caseId":"case-{i}"}}"#)
    }

    fn plan(i: usize) -> CasePlan {
        CasePlan {
            case_id: format!("case-{i} \u{e9}\u{1f600}"),
            body: text(i),
            messages: vec![Message {
                role: "user".into(),
                content: "x".repeat(i * 37 % 5000),
            }],
            system: i.is_multiple_of(2).then(|| "sys".into()),
            provider: None,
            model: i.is_multiple_of(3).then(|| "m".into()),
            input: Some(format!("\"q{i}\"")),
            expected: i.is_multiple_of(5).then(|| "{}".into()),
            reference: None,
            repeat_count: u32::try_from(i % 4 + 1).unwrap(),
        }
    }

    fn spilled(indices: impl IntoIterator<Item = usize>) -> (tempfile::TempDir, SpilledPlans) {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = PlanSpill::create(dir.path()).unwrap();
        for i in indices {
            spill.push(i, &text(i), &plan(i)).unwrap();
        }
        let plans = spill.finish().unwrap();
        (dir, plans)
    }

    /// The plans taken, checked against the hash of the text each was
    /// made of.
    fn taken(plans: &mut SpilledPlans, indices: &[usize]) -> String {
        let taken = plans.take(indices).unwrap();
        assert_eq!(taken.len(), indices.len());
        let plans: Vec<CasePlan> = taken
            .into_iter()
            .zip(indices)
            .map(|((hash, plan), &i)| {
                assert_eq!(hash, text_hash(&text(i)), "cases[{i}]");
                plan
            })
            .collect();
        format!("{plans:?}")
    }

    fn made(indices: &[usize]) -> String {
        let plans: Vec<CasePlan> = indices.iter().map(|&i| plan(i)).collect();
        format!("{plans:?}")
    }

    #[test]
    fn plans_come_back_as_set_aside_and_skipped_cases_are_read_past() {
        let (dir, mut plans) = spilled(0..1000);
        let first: Vec<usize> = (0..10).collect();
        assert_eq!(taken(&mut plans, &first), made(&first));
        // A batch with holes (cases a resumed run finished).
        let holes = [12, 13, 20, 500, 999];
        assert_eq!(taken(&mut plans, &holes), made(&holes));
        // Nothing is left: asking again says so instead of inventing.
        let error = plans.take(&[1000]).unwrap_err().to_string();
        assert!(error.contains("every plan set aside was read"), "{error}");
        assert!(error.contains(&dir.path().display().to_string()), "{error}");
    }

    #[test]
    fn a_case_asked_for_out_of_order_is_an_error() {
        let (_dir, mut plans) = spilled([0, 1, 5]);
        taken(&mut plans, &[1]);
        let error = plans.take(&[3]).unwrap_err().to_string();
        assert!(error.contains("cases[3] was not set aside"), "{error}");
    }

    #[test]
    fn texts_are_told_apart_by_their_hash() {
        assert_eq!(text_hash("a"), text_hash("a"));
        assert_ne!(text_hash(&text(1)), text_hash(&text(2)));
        assert_ne!(text_hash(""), text_hash(" "));
    }

    #[test]
    fn a_directory_that_cannot_hold_the_file_is_an_error() {
        let error = PlanSpill::create(Path::new("/nonexistent/cautilus-spill")).err();
        assert_eq!(error.unwrap().kind(), std::io::ErrorKind::NotFound);
    }
}
