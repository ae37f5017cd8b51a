//! The typed parse behind [`super::outline`]: visitors that keep only the
//! members a run's summary reads (an evaluation's or a cell's [`Facts`],
//! its assertions' [`Scores`], a record's [`Root`]) and pass over the rest
//! as a `serde_json::Value` would be parsed ([`Skip`]), so a record this
//! refuses is one `load` refuses too.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A record's root, `None` when it is not valid JSON. Read from text
/// checked to be UTF-8 first (parsing it then skips that check), every
/// value parsed as `serde_json::Value` parses it (numbers, escapes: what
/// [`load`] refuses, this refuses).
pub(super) fn parse(bytes: &[u8]) -> Option<Root> {
    serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()
}

/// The members of an evaluation (or an experiment's cell) kept as they
/// are: those a summary reads (`provider`, `model`, `harness`: its
/// target); and `assertions`, read as [`Scores`].
pub(super) const FACTS: [&str; 9] = [
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
pub(super) const CASE_ID: usize = 0;
pub(super) const STATUS: usize = 1;
pub(super) const DURATION: usize = 2;
pub(super) const COST: usize = 3;
pub(super) const RECORD: usize = 4;
const ASSERTIONS: usize = 8;

/// An evaluation or a cell: its kept members (the last of each name, as a
/// JSON object reads), or not an object.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub(super) object: bool,
    pub(super) members: [Option<Value>; ASSERTIONS],
    /// Its assertions' scores (`assertions_of`, the scores of those that
    /// have one).
    pub(super) scores: Option<Vec<f64>>,
}

impl Facts {
    pub(super) fn get(&self, i: usize) -> Option<&Value> {
        self.members[i].as_ref()
    }
}

/// A member's name: its index in `names`, `None` for one not kept.
pub(super) struct Name(pub(super) &'static [&'static str]);

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

pub(super) fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

pub(super) fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<Skip, Skip>()?.is_some() {}
    Ok(())
}

/// A value passed over: parsed as `serde_json::Value` parses it (so it
/// fails where that fails: a number out of range, an escape that is not a
/// character, too deep), nothing kept. (`serde::de::IgnoredAny` checks
/// less.)
pub(super) struct Skip;

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
pub(super) enum Seq<T> {
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
pub(super) enum Keys {
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
pub(super) enum Root {
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
