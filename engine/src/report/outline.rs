//! A run's outline ([`Outline`]): what a one-line summary of it needs (its
//! header, its variants' names, each cell's status, assertion scores,
//! duration and cost), read from the records without building the rest
//! (what was asked, what came back, transcripts): a typed parse that keeps
//! only the members it needs (the others parsed and checked as a
//! `serde_json::Value` would be, but not kept: [`Skip`]),
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
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ReportError;
use super::case_rows::{NOT_AN_OBJECT, cost_of, number_of, target_of, text_of};
use super::load::{
    Tally, experiment_header, group_file, is_experiment, load, locate, plain_header, read_bytes,
};
use super::model::{Header, Report};

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

/// A record's root, `None` when it is not valid JSON. Read from text
/// checked to be UTF-8 first (parsing it then skips that check), every
/// value parsed as `serde_json::Value` parses it (numbers, escapes: what
/// [`load`] refuses, this refuses).
fn parse(bytes: &[u8]) -> Option<Root> {
    serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()
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

/// The members of an evaluation (or an experiment's cell) kept as they
/// are: those a summary reads (`provider`, `model`, `harness`: its
/// target); and `assertions`, read as [`Scores`].
const FACTS: [&str; 9] = [
    "caseId",
    "status",
    "durationMs",
    "costUsd",
    "record",
    "provider",
    "model",
    "harness",
    "assertions",
];
const CASE_ID: usize = 0;
const STATUS: usize = 1;
const DURATION: usize = 2;
const COST: usize = 3;
const RECORD: usize = 4;
const ASSERTIONS: usize = 8;

/// An evaluation or a cell: its kept members (the last of each name, as a
/// JSON object reads), or not an object.
#[derive(Debug, Default)]
struct Facts {
    object: bool,
    members: [Option<Value>; ASSERTIONS],
    /// Its assertions' scores (`assertions_of`, the scores of those that
    /// have one).
    scores: Option<Vec<f64>>,
}

impl Facts {
    fn get(&self, i: usize) -> Option<&Value> {
        self.members[i].as_ref()
    }
}

/// A member's name: its index in `names`, `None` for one not kept.
struct Name(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Name {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|n| *n == v))
    }
}

/// The visitor methods of values a visitor does not read: each consumed
/// and answered with `$other`.
macro_rules! otherwise {
    ($other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<Skip, Skip>()?.is_some() {}
    Ok(())
}

/// A value passed over: parsed as `serde_json::Value` parses it (so it
/// fails where that fails: a number out of range, an escape that is not a
/// character, too deep), nothing kept. (`serde::de::IgnoredAny` checks
/// less.)
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    otherwise!(Skip);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Skip, A::Error> {
        skip_seq(seq)?;
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Skip, A::Error> {
        skip_map(map)?;
        Ok(Skip)
    }
}

impl<'de> Deserialize<'de> for Facts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Facts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an evaluation")
            }
            otherwise!(Facts::default());
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Facts, A::Error> {
                skip_seq(seq)?;
                Ok(Facts::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Facts, A::Error> {
                let mut facts = Facts {
                    object: true,
                    ..Facts::default()
                };
                while let Some(name) = map.next_key_seed(Name(&FACTS))? {
                    match name {
                        Some(ASSERTIONS) => facts.scores = Some(map.next_value::<Scores>()?.0),
                        Some(i) => facts.members[i] = Some(map.next_value()?),
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(facts)
            }
        }
        d.deserialize_any(V)
    }
}

/// A case's `assertions` as `assertions_of` reads them, the scores of
/// those that have one; without building them. Each item must be what
/// `assertions_of` reads as an assertion (an object whose members of an
/// assertion's, each given once, have their types): any other is an
/// error, so the run is read by [`load`] instead. Not an array: none.
struct Scores(Vec<f64>);

impl<'de> Deserialize<'de> for Scores {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scores;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("assertions")
            }
            otherwise!(Scores(Vec::new()));
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scores, A::Error> {
                skip_map(map)?;
                Ok(Scores(Vec::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scores, A::Error> {
                let mut scores = Vec::new();
                while let Some(AssertionScore(score)) = seq.next_element()? {
                    scores.extend(score);
                }
                Ok(Scores(scores))
            }
        }
        d.deserialize_any(V)
    }
}

/// The members of [`super::model::Assertion`] (its serde names).
const ASSERTION: [&str; 8] = [
    "name", "status", "passed", "score", "required", "weight", "detail", "label",
];

/// One assertion's score, checked as `serde_json::from_value::<Assertion>`
/// checks it (or an error: see [`Scores`]).
struct AssertionScore(Option<f64>);

/// A string, not kept.
struct Text;

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Text, E> {
                Ok(Text)
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for AssertionScore {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AssertionScore;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an assertion (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AssertionScore, A::Error> {
                let mut seen = [false; ASSERTION.len()];
                let mut score = None;
                while let Some(name) = map.next_key_seed(Name(&ASSERTION))? {
                    let Some(i) = name else {
                        map.next_value::<Skip>()?;
                        continue;
                    };
                    if std::mem::replace(&mut seen[i], true) {
                        return Err(de::Error::duplicate_field(ASSERTION[i]));
                    }
                    match ASSERTION[i] {
                        "name" | "status" => {
                            map.next_value::<Text>()?;
                        }
                        "passed" | "required" => {
                            map.next_value::<Option<bool>>()?;
                        }
                        "score" => score = map.next_value::<Option<f64>>()?,
                        "weight" => {
                            map.next_value::<Option<f64>>()?;
                        }
                        _ => {
                            map.next_value::<Option<Text>>()?;
                        }
                    }
                }
                Ok(AssertionScore(score))
            }
        }
        d.deserialize_map(V)
    }
}

/// An array of `T`, or something else.
enum Seq<T> {
    Items(Vec<T>),
    Other,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Seq<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            otherwise!(Seq::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seq<T>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Seq::Items(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Seq<T>, A::Error> {
                skip_map(map)?;
                Ok(Seq::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// An object's member names in the recorded order (a name given twice
/// keeps its first place), or something else.
enum Keys {
    Names(Vec<String>),
    Other,
}

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            otherwise!(Keys::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Keys, A::Error> {
                skip_seq(seq)?;
                Ok(Keys::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut names: Vec<String> = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    map.next_value::<Skip>()?;
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                Ok(Keys::Names(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// The members of a record's root that a header reads (kept as they
/// are), a plain run's `evaluations`, an experiment's `cells` and its
/// `aggregates`' names.
const ROOT: [&str; 15] = [
    "schemaVersion",
    "suiteId",
    "suiteDisplayName",
    "surface",
    "preset",
    "fixtureRef",
    "recommendation",
    "interrupted",
    "passed",
    "startedAt",
    "finishedAt",
    "status",
    "evaluations",
    "cells",
    "aggregates",
];
const EVALUATIONS: usize = 12;
const CELLS: usize = 13;
const AGGREGATES: usize = 14;

/// A record's root.
enum Root {
    Object {
        members: Map<String, Value>,
        evaluations: Option<Seq<Facts>>,
        cells: Option<Seq<Facts>>,
        aggregates: Option<Keys>,
    },
    Other,
}

impl<'de> Deserialize<'de> for Root {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Root;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a record")
            }
            otherwise!(Root::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Root, A::Error> {
                skip_seq(seq)?;
                Ok(Root::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Root, A::Error> {
                let mut members = Map::new();
                let (mut evaluations, mut cells, mut aggregates) = (None, None, None);
                while let Some(name) = map.next_key_seed(Name(&ROOT))? {
                    match name {
                        Some(EVALUATIONS) => evaluations = Some(map.next_value()?),
                        Some(CELLS) => cells = Some(map.next_value()?),
                        Some(AGGREGATES) => aggregates = Some(map.next_value()?),
                        Some(i) => {
                            members.insert(ROOT[i].to_string(), map.next_value()?);
                        }
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(Root::Object {
                    members,
                    evaluations,
                    cells,
                    aggregates,
                })
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
#[path = "outline_tests.rs"]
mod tests;
