//! A run's outline ([`Outline`]): what a one-line summary of it needs (its
//! header, its variants' names, each cell's status, assertion scores,
//! duration and cost), read from the records without building the rest
//! (what was asked, what came back, transcripts): a typed parse that keeps
//! only the members it needs (the others parsed and checked as a
//! `serde_json::Value` would be, but not kept: the visitors of
//! [`super::outline_visitors`]),
//! several times cheaper than [`super::load`] on a large run.
//!
//! It never disagrees with [`super::load`]: the members it keeps are the
//! ones `load` reads, kept as the JSON values they are, and turned into
//! the header and the cells by the same functions (`text_of`, `cost_of`,
//! `assertions_of`, `target_of`, `plain_header`, `experiment_header`,
//! [`Tally`]); any record it cannot read (not JSON, not a summary) is read
//! by `load` instead, whose answer (or error) is the outline's. Debug
//! builds check every outline against `load`'s.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::ReportError;
use super::case_rows::{NOT_AN_OBJECT, cost_of, number_of, target_of, text_of};
use super::load::{
    Tally, experiment_header, group_file, is_experiment, load, locate, plain_header, read_bytes,
};
use super::model::{Header, Report};
use super::outline_visitors::{
    CASE_ID, COST, DURATION, FACTS, Facts, Keys, Name, RECORD, Root, STATUS, Seq, parse,
};

/// What a run's one-line summary needs of its records.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    pub header: Header,
    /// An experiment's variants, in the recorded order.
    pub variants: Vec<String>,
    pub cells: Vec<CellOutline>,
}

/// What a summary needs of one case (one cell of an experiment).
#[derive(Debug, Clone, PartialEq)]
pub struct CellOutline {
    pub status: String,
    /// Its assertions' scores (those that have one).
    pub scores: Vec<f64>,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}

impl Outline {
    /// The outline of a report read whole.
    pub fn of(report: &Report) -> Self {
        Self {
            header: report.header.clone(),
            variants: report.variants.iter().map(|v| v.name.clone()).collect(),
            cells: report
                .cases
                .iter()
                .map(|c| CellOutline {
                    status: c.status.clone(),
                    scores: c.assertions.iter().filter_map(|a| a.score).collect(),
                    duration_ms: c.duration_ms,
                    cost_usd: c.cost_usd,
                })
                .collect(),
        }
    }
}

/// The outline of the run at `path` (as [`super::load`] takes it).
pub fn outline(path: &Path) -> Result<Outline, ReportError> {
    let quick = quick(path);
    #[cfg(debug_assertions)]
    if let Some(quick) = &quick {
        let whole = load(path).map(|r| Outline::of(&r));
        assert!(
            whole.as_ref().is_ok_and(|w| w == quick),
            "the outline of {} is not the one its report gives: {quick:?} against {whole:?}",
            path.display()
        );
    }
    match quick {
        Some(outline) => Ok(outline),
        None => load(path).map(|r| Outline::of(&r)),
    }
}

/// The suite the run at `path` names (its record's `suiteId`, as
/// [`load`] reads it: the last given, empty when not a string), read from
/// its structure alone (the rest is passed over unchecked, so its records
/// may still be unreadable to [`load`]); `None` when it cannot tell. A run
/// of another suite is either that or unreadable: what a suite's series
/// passes over either way, without reading it whole.
pub fn suite_of(path: &Path) -> Option<String> {
    let (_, file) = locate(path).ok()?;
    let bytes = read_bytes(&file).ok()?;
    let SuiteId(id) = serde_json::from_slice(&bytes).ok()?;
    Some(text_of(id))
}

/// A record root's last `suiteId`, the rest passed over unchecked.
struct SuiteId(Option<Value>);

impl<'de> Deserialize<'de> for SuiteId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SuiteId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a record")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SuiteId, A::Error> {
                let mut id = None;
                while let Some(name) = map.next_key_seed(Name(&["suiteId"]))? {
                    match name {
                        Some(_) => id = Some(map.next_value()?),
                        None => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(SuiteId(id))
            }
        }
        d.deserialize_map(V)
    }
}

/// The outline read by the typed parse alone, `None` when the records
/// are not what it reads (then [`outline`] asks [`load`], which says what
/// they are).
pub fn typed_outline(path: &Path) -> Option<Outline> {
    quick(path)
}

fn quick(path: &Path) -> Option<Outline> {
    let (dir, file) = locate(path).ok()?;
    let bytes = read_bytes(&file).ok()?;
    let root = parse(&bytes)?;
    let Root::Object {
        members,
        evaluations,
        cells,
        aggregates,
    } = root
    else {
        return None;
    };
    let members = Value::Object(members);
    if is_experiment(&members) {
        let cells = match cells {
            Some(Seq::Items(cells)) => cells,
            _ => Vec::new(),
        };
        let mut groups: HashMap<String, HashMap<String, Facts>> = HashMap::new();
        let mut tally = Tally::default();
        let mut outlines = Vec::with_capacity(cells.len());
        for cell in cells {
            let group = text_of(cell.get(RECORD).cloned());
            let evaluations = groups
                .entry(group)
                .or_insert_with_key(|group| group_facts(&dir, group));
            let id = text_of(cell.get(CASE_ID).cloned());
            let (status, target, outline) = match evaluations.remove(&id) {
                Some(evaluation) => cell_outline(evaluation, Some(&cell)),
                None => cell_outline(cell, None),
            };
            tally.add(&status, target, outline.cost_usd);
            outlines.push(outline);
        }
        let variants = match aggregates {
            Some(Keys::Names(names)) => names,
            _ => Vec::new(),
        };
        Some(Outline {
            header: experiment_header(&members, &dir, tally),
            variants,
            cells: outlines,
        })
    } else {
        let Some(Seq::Items(evaluations)) = evaluations else {
            return None;
        };
        let mut tally = Tally::default();
        let mut outlines = Vec::with_capacity(evaluations.len());
        for evaluation in evaluations {
            let (status, target, outline) = cell_outline(evaluation, None);
            tally.add(&status, target, outline.cost_usd);
            outlines.push(outline);
        }
        Some(Outline {
            header: plain_header(&members, &dir, tally),
            variants: Vec::new(),
            cells: outlines,
        })
    }
}

/// One case's status, target and outline, as `case_row` reads them.
fn cell_outline(mut facts: Facts, cell: Option<&Facts>) -> (String, Option<String>, CellOutline) {
    if !facts.object {
        let outline = CellOutline {
            status: NOT_AN_OBJECT.into(),
            scores: Vec::new(),
            duration_ms: None,
            cost_usd: None,
        };
        return (NOT_AN_OBJECT.into(), None, outline);
    }
    let target = target_of(|k| {
        FACTS
            .iter()
            .position(|f| *f == k)
            .and_then(|i| facts.members[i].as_ref())
    });
    let status = text_of(facts.members[STATUS].take());
    let outline = CellOutline {
        status: status.clone(),
        scores: facts.scores.take().unwrap_or_default(),
        duration_ms: number_of(facts.get(DURATION)),
        cost_usd: cost_of(facts.get(COST), cell.and_then(|c| c.get(COST))),
    };
    (status, target, outline)
}

/// The evaluations of one group directory by case id, as `load` reads
/// them (empty when they cannot be read).
fn group_facts(dir: &Path, group: &str) -> HashMap<String, Facts> {
    let Some(file) = group_file(dir, group) else {
        return HashMap::new();
    };
    let Some(Root::Object {
        evaluations: Some(Seq::Items(evaluations)),
        ..
    }) = read_bytes(&file).ok().and_then(|b| parse(&b))
    else {
        return HashMap::new();
    };
    evaluations
        .into_iter()
        .map(|e| (text_of(e.get(CASE_ID).cloned()), e))
        .collect()
}

#[cfg(test)]
#[path = "outline_tests.rs"]
mod tests;
