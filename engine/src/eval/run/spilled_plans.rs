//! The preset's plans of a suite too large to keep in memory, set aside on
//! disk by the checking pass and read back in case order by the run pass,
//! so no case is translated twice however large the suite.
//!
//! The file is anonymous (removed by the system when the run ends, however
//! it ends) and lives in the run's own directory: on the disk the records
//! go to, not in a `/tmp` that may be memory. Each plan is its case index
//! and the plan in postcard, behind its length. The run pass reads the
//! cases again in the order the checking pass delivered them and asks for
//! each batch's indices; cases a batch skips (none, in a run that is not
//! resumed) are read past.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::eval::EvalError;
use crate::plugin::bindings::preset_api::CasePlan;

/// Plans being set aside by the checking pass.
pub struct PlanSpill {
    dir: PathBuf,
    out: BufWriter<File>,
    buffer: Vec<u8>,
    count: usize,
}

/// The plans set aside, to be read back in order.
pub struct SpilledPlans {
    dir: PathBuf,
    input: BufReader<File>,
    left: usize,
    buffer: Vec<u8>,
}

fn failed(dir: &Path, source: std::io::Error) -> EvalError {
    EvalError::SetAside {
        path: dir.to_path_buf(),
        source,
    }
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

impl PlanSpill {
    /// An empty, anonymous file in `dir`.
    pub fn create(dir: &Path) -> Result<Self, EvalError> {
        let file = tempfile::tempfile_in(dir).map_err(|e| failed(dir, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            out: BufWriter::with_capacity(256 * 1024, file),
            buffer: Vec::new(),
            count: 0,
        })
    }

    /// Sets aside the plan of case `index` (indices rise from one call to
    /// the next).
    pub fn push(&mut self, index: usize, plan: &CasePlan) -> Result<(), EvalError> {
        self.buffer.clear();
        self.buffer.extend_from_slice(&[0; 4]);
        let written = postcard::to_extend(&(index as u64, plan), std::mem::take(&mut self.buffer))
            .map_err(|e| failed(&self.dir, invalid(format!("a plan does not encode: {e}"))))?;
        self.buffer = written;
        let length = u32::try_from(self.buffer.len() - 4).map_err(|_| {
            failed(
                &self.dir,
                invalid(format!("the plan of cases[{index}] is over 4 GiB")),
            )
        })?;
        self.buffer[..4].copy_from_slice(&length.to_le_bytes());
        self.out
            .write_all(&self.buffer)
            .map_err(|e| failed(&self.dir, e))?;
        self.count += 1;
        Ok(())
    }

    /// Every plan set aside, to be read back from the first.
    pub fn finish(self) -> Result<SpilledPlans, EvalError> {
        let dir = self.dir;
        let mut file = self
            .out
            .into_inner()
            .map_err(|e| failed(&dir, e.into_error()))?;
        file.rewind().map_err(|e| failed(&dir, e))?;
        Ok(SpilledPlans {
            input: BufReader::with_capacity(256 * 1024, file),
            left: self.count,
            buffer: Vec::new(),
            dir,
        })
    }
}

impl SpilledPlans {
    /// The plans of the cases `indices` (rising), reading past the cases
    /// before them that are not asked for.
    pub fn take(&mut self, indices: &[usize]) -> Result<Vec<CasePlan>, EvalError> {
        let mut plans = Vec::with_capacity(indices.len());
        for &wanted in indices {
            loop {
                let (index, plan) = self.next().map_err(|e| failed(&self.dir, e))?;
                if index == wanted {
                    plans.push(plan);
                    break;
                }
                if index > wanted {
                    return Err(failed(
                        &self.dir,
                        invalid(format!(
                            "cases[{wanted}] was not set aside (the next is cases[{index}])"
                        )),
                    ));
                }
            }
        }
        Ok(plans)
    }

    fn next(&mut self) -> std::io::Result<(usize, CasePlan)> {
        if self.left == 0 {
            return Err(invalid("every plan set aside was read".into()));
        }
        let mut length = [0u8; 4];
        self.input.read_exact(&mut length)?;
        let length = u32::from_le_bytes(length) as usize;
        self.buffer.resize(length, 0);
        self.input.read_exact(&mut self.buffer)?;
        self.left -= 1;
        let (index, plan): (u64, CasePlan) = postcard::from_bytes(&self.buffer)
            .map_err(|e| invalid(format!("a plan set aside does not decode: {e}")))?;
        let index = usize::try_from(index).map_err(|_| invalid("a case index overflows".into()))?;
        Ok((index, plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::types::Message;

    fn plan(i: usize) -> CasePlan {
        CasePlan {
            case_id: format!("case-{i} \u{e9}\u{1f600}"),
            body: format!(r#"{{"caseId":"case-{i}"}}"#),
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

    fn shown(plans: &[CasePlan]) -> String {
        format!("{plans:?}")
    }

    #[test]
    fn plans_come_back_as_set_aside_and_skipped_cases_are_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = PlanSpill::create(dir.path()).unwrap();
        for i in 0..1000 {
            spill.push(i, &plan(i)).unwrap();
        }
        let mut plans = spill.finish().unwrap();
        let first: Vec<usize> = (0..10).collect();
        let got = plans.take(&first).unwrap();
        assert_eq!(
            shown(&got),
            shown(&first.iter().map(|&i| plan(i)).collect::<Vec<_>>())
        );
        // A batch with holes (cases a resumed run finished).
        let holes = [12, 13, 20, 500, 999];
        let got = plans.take(&holes).unwrap();
        assert_eq!(
            shown(&got),
            shown(&holes.iter().map(|&i| plan(i)).collect::<Vec<_>>())
        );
        // Nothing is left: asking again says so instead of inventing.
        let error = plans.take(&[1000]).unwrap_err().to_string();
        assert!(error.contains("every plan set aside was read"), "{error}");
        // The file is anonymous: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_case_asked_for_out_of_order_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = PlanSpill::create(dir.path()).unwrap();
        for i in [0, 1, 5] {
            spill.push(i, &plan(i)).unwrap();
        }
        let mut plans = spill.finish().unwrap();
        plans.take(&[1]).unwrap();
        let error = plans.take(&[3]).unwrap_err().to_string();
        assert!(error.contains("cases[3] was not set aside"), "{error}");
    }

    #[test]
    fn a_directory_that_cannot_hold_the_file_is_named() {
        let error = PlanSpill::create(Path::new("/nonexistent/cautilus-spill"))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("/nonexistent/cautilus-spill"), "{error}");
    }
}
