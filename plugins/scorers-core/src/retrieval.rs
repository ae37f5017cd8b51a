//! Retrieval scorers: how well the sources an answer retrieved cover the
//! sources the case expects.
//!
//! - `hit-rate@k`: 1 when any of the top k retrieved is relevant;
//! - `recall@k`: the share of expected sources found in the top k;
//! - `precision@k`: the share of the top k (of k slots) that is relevant;
//! - `mrr`: 1 / the rank of the first relevant source (within the top k
//!   when `k` is set), 0 when none is;
//! - `ndcg@k`: binary-relevance nDCG of the top k, log₂ discount.
//!
//! Expected sources are the config's `value`, else the case's
//! `expected.sources`: `[{sourceId, chunkId?}]` or plain source ids. The
//! retrieved list is read from the structured output, else the final text
//! parsed as JSON: the list itself, or the member `select` names (a JSON
//! pointer; default `/retrieved`, then `/sources`). A retrieved source is
//! relevant when its `sourceId` equals an expected one's and, if that one
//! names a `chunkId`, the chunk ids are equal too. Pass: the value reaches
//! `threshold` (default 1 for `hit-rate@k`, 0.5 for the others).

use serde::Deserialize;
use serde_json::Value;

use crate::json::{Parsed, parse};
use crate::{ConfigError, ScoreError, Verdict};

/// Which measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    HitRate,
    Recall,
    Precision,
    Mrr,
    Ndcg,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Self::HitRate => "hit-rate@k",
            Self::Recall => "recall@k",
            Self::Precision => "precision@k",
            Self::Mrr => "mrr",
            Self::Ndcg => "ndcg@k",
        }
    }

    fn default_threshold(self) -> f64 {
        match self {
            Self::HitRate => 1.0,
            _ => 0.5,
        }
    }
}

/// Default `k` of the @k measures.
pub const DEFAULT_K: usize = 10;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Expected sources (default: the case's `expected.sources`).
    pub value: Option<Value>,
    pub k: Option<usize>,
    /// JSON pointer to the retrieved list in the output.
    pub select: Option<String>,
    pub threshold: Option<f64>,
    #[serde(default)]
    pub negate: bool,
}

/// A source: its id and, optionally, the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub source_id: String,
    pub chunk_id: Option<String>,
}

impl Source {
    fn read(value: &Value) -> Option<Self> {
        match value {
            Value::String(id) => Some(Self {
                source_id: id.clone(),
                chunk_id: None,
            }),
            Value::Object(o) => {
                let text = |keys: &[&str]| {
                    keys.iter().find_map(|k| match o.get(*k) {
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(Value::Number(n)) => Some(n.to_string()),
                        _ => None,
                    })
                };
                Some(Self {
                    source_id: text(&["sourceId", "source_id", "id"])?,
                    chunk_id: text(&["chunkId", "chunk_id"]),
                })
            }
            _ => None,
        }
    }

    fn label(&self) -> String {
        match &self.chunk_id {
            Some(chunk) => format!("{}#{chunk}", self.source_id),
            None => self.source_id.clone(),
        }
    }

    /// Whether retrieved `self` satisfies expected `want`.
    fn satisfies(&self, want: &Source) -> bool {
        self.source_id == want.source_id
            && want
                .chunk_id
                .as_ref()
                .is_none_or(|c| self.chunk_id.as_ref() == Some(c))
    }
}

/// Checks a config (the `k`, `threshold` and `select`).
pub fn validate(config: &RetrievalConfig) -> Result<(), ConfigError> {
    if config.k == Some(0) {
        return Err(ConfigError::new("k", "must be at least 1"));
    }
    if let Some(t) = config.threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(ConfigError::new(
            "threshold",
            "must be a number from 0 to 1",
        ));
    }
    if let Some(select) = &config.select
        && !select.is_empty()
        && !select.starts_with('/')
    {
        return Err(ConfigError::new(
            "select",
            format!("must be a JSON pointer such as `/retrieved` (got `{select}`)"),
        ));
    }
    if let Some(value) = &config.value {
        sources(value, "value")?;
    }
    Ok(())
}

/// A list of sources, or `{sources: [...]}`.
fn sources(value: &Value, at: &str) -> Result<Vec<Source>, ConfigError> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(o) if o.get("sources").is_some_and(Value::is_array) => {
            o["sources"].as_array().expect("checked")
        }
        _ => {
            return Err(ConfigError::new(
                at,
                "expected sources are a list of source ids or `{sourceId, chunkId?}` objects (or `expected.sources`)",
            ));
        }
    };
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            Source::read(item).ok_or_else(|| {
                ConfigError::new(
                    &format!("{at}[{i}]"),
                    "a source is an id or `{sourceId, chunkId?}`",
                )
            })
        })
        .collect()
}

/// The retrieved list of an output's document (its structured JSON, else
/// its final text parsed).
fn retrieved(document: &Value, select: Option<&str>) -> Result<Vec<Source>, String> {
    let list = match select {
        Some(pointer) => document.pointer(pointer).ok_or_else(|| {
            format!("the output has nothing at `{pointer}` (the config's `select`)")
        })?,
        None if document.is_array() => document,
        None => document
            .pointer("/retrieved")
            .or_else(|| document.pointer("/sources"))
            .ok_or_else(|| {
                "the output is neither a list of sources nor an object with `retrieved` or `sources`; name the list with `select`".to_string()
            })?,
    };
    let Some(list) = list.as_array() else {
        return Err("the retrieved sources are not a list".into());
    };
    Ok(list.iter().filter_map(Source::read).collect())
}

/// The measure of `retrieved` against `expected` (both non-empty or not).
pub fn measure(metric: Metric, retrieved: &[Source], expected: &[Source], k: Option<usize>) -> f64 {
    let depth = match (metric, k) {
        (Metric::Mrr, None) => retrieved.len(),
        (_, k) => k.unwrap_or(DEFAULT_K),
    };
    let top = &retrieved[..retrieved.len().min(depth)];
    let relevant = |r: &Source| expected.iter().any(|e| r.satisfies(e));
    match metric {
        Metric::HitRate => f64::from(u8::from(top.iter().any(relevant))),
        Metric::Recall => {
            let found = expected
                .iter()
                .filter(|e| top.iter().any(|r| r.satisfies(e)))
                .count();
            found as f64 / expected.len() as f64
        }
        Metric::Precision => top.iter().filter(|r| relevant(r)).count() as f64 / depth as f64,
        Metric::Mrr => top
            .iter()
            .position(relevant)
            .map_or(0.0, |rank| 1.0 / (rank + 1) as f64),
        Metric::Ndcg => {
            let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
            let dcg: f64 = top
                .iter()
                .enumerate()
                .filter(|(_, r)| relevant(r))
                .map(|(i, _)| gain(i))
                .sum();
            let ideal: f64 = (0..expected.len().min(depth)).map(gain).sum();
            (dcg / ideal).min(1.0)
        }
    }
}

/// Scores one output.
pub fn score(
    metric: Metric,
    config: &RetrievalConfig,
    output: &str,
    structured: Option<&Value>,
    expected: Option<&Value>,
) -> Result<Verdict, ScoreError> {
    let want = match config.value.as_ref().or(expected) {
        Some(value) => sources(value, "value")?,
        None => {
            return Err(ConfigError::new(
                "value",
                "no expected sources: give `value` or the case's `expected.sources`",
            )
            .into());
        }
    };
    if want.is_empty() {
        return Err(ConfigError::new("value", "the expected sources are empty").into());
    }
    let parsed;
    let document = match structured {
        Some(value) => value,
        None => match parse(output.trim()) {
            Parsed::Value(value) => {
                parsed = value;
                &parsed
            }
            Parsed::NotJson(_) => {
                return Ok(Verdict::fail(
                    "the output is not JSON: a retrieval scorer reads the retrieved sources from structured output or a JSON final text".into(),
                ));
            }
            Parsed::Unparsable(why) => {
                return Err(ScoreError::Unchecked(format!(
                    "the retrieved sources cannot be read from the output: {why}"
                )));
            }
        },
    };
    let got = match retrieved(document, config.select.as_deref()) {
        Ok(got) => got,
        Err(why) => return Ok(Verdict::fail(why)),
    };
    let value = measure(metric, &got, &want, config.k);
    let threshold = config.threshold.unwrap_or(metric.default_threshold());
    let passed = value >= threshold;
    let detail = (!passed).then(|| {
        let depth = config.k.unwrap_or(DEFAULT_K);
        let missing: Vec<String> = want
            .iter()
            .filter(|e| !got.iter().take(depth).any(|r| r.satisfies(e)))
            .map(Source::label)
            .collect();
        let seen: Vec<String> = got.iter().take(depth).map(Source::label).collect();
        format!(
            "{} {value:.3} is below {threshold}: expected {} not in the top {depth} retrieved [{}]",
            metric.name(),
            if missing.is_empty() {
                "sources ranked too low".to_string()
            } else {
                missing.join(", ")
            },
            seen.join(", ")
        )
    });
    Ok(Verdict {
        value: Some(value),
        passed: Some(passed),
        detail,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ids(list: &[&str]) -> Vec<Source> {
        list.iter()
            .map(|id| Source::read(&json!(id)).unwrap())
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn measures_by_hand() {
        let got = ids(&["x", "a", "y", "b", "z"]);
        let want = ids(&["a", "b", "c"]);
        assert!(close(measure(Metric::HitRate, &got, &want, Some(1)), 0.0));
        assert!(close(measure(Metric::HitRate, &got, &want, Some(2)), 1.0));
        assert!(close(
            measure(Metric::Recall, &got, &want, Some(5)),
            2.0 / 3.0
        ));
        assert!(close(
            measure(Metric::Recall, &got, &want, Some(2)),
            1.0 / 3.0
        ));
        assert!(close(measure(Metric::Precision, &got, &want, Some(4)), 0.5));
        assert!(close(
            measure(Metric::Precision, &got, &want, Some(10)),
            0.2
        ));
        assert!(close(measure(Metric::Mrr, &got, &want, None), 0.5));
        assert!(close(measure(Metric::Mrr, &got, &want, Some(1)), 0.0));
        // DCG = 1/log2(3) + 1/log2(5); IDCG (3 relevant) = 1 + 1/log2(3) + 1/2.
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!(close(
            measure(Metric::Ndcg, &got, &want, Some(5)),
            dcg / idcg
        ));
        assert!(close(measure(Metric::Ndcg, &want, &want, Some(5)), 1.0));
    }

    #[test]
    fn chunks_must_match_when_expected_names_one() {
        let got = vec![Source::read(&json!({"sourceId": "doc", "chunkId": "2"})).unwrap()];
        let any_chunk = vec![Source::read(&json!({"sourceId": "doc"})).unwrap()];
        let chunk_1 = vec![Source::read(&json!({"sourceId": "doc", "chunkId": "1"})).unwrap()];
        assert!(close(measure(Metric::HitRate, &got, &any_chunk, None), 1.0));
        assert!(close(measure(Metric::HitRate, &got, &chunk_1, None), 0.0));
    }

    #[test]
    fn outputs_and_configs_are_read_or_explained() {
        let config = RetrievalConfig {
            k: Some(3),
            ..Default::default()
        };
        let expected = json!({"sources": [{"sourceId": "a"}, {"sourceId": "b"}]});
        let v = score(
            Metric::Recall,
            &config,
            r#"{"retrieved": ["a", "x", "b"]}"#,
            None,
            Some(&expected),
        )
        .unwrap();
        assert_eq!((v.value, v.passed), (Some(1.0), Some(true)));
        let v = score(
            Metric::Recall,
            &config,
            r#"["x", "y", "z", "a"]"#,
            None,
            Some(&expected),
        )
        .unwrap();
        assert_eq!(v.passed, Some(false));
        assert!(v.detail.unwrap().contains("expected a, b not in the top 3"));
        let v = score(Metric::HitRate, &config, "not json", None, Some(&expected)).unwrap();
        assert!(v.detail.unwrap().contains("not JSON"));
        let structured = json!({"hits": [{"id": "b"}]});
        let select = RetrievalConfig {
            select: Some("/hits".into()),
            ..Default::default()
        };
        let v = score(
            Metric::HitRate,
            &select,
            "",
            Some(&structured),
            Some(&expected),
        )
        .unwrap();
        assert_eq!(v.passed, Some(true));
        let error = score(Metric::Mrr, &config, "[]", None, None).unwrap_err();
        assert!(matches!(error, ScoreError::Config(e) if e.path == "value"));
        // Sources nested past the parser: unchecked, not failed.
        let deep = format!("{}\"a\"{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            score(Metric::HitRate, &config, &deep, None, Some(&expected)),
            Err(ScoreError::Unchecked(why)) if why.contains("nested 200 levels deep")
        ));
        assert!(
            validate(&RetrievalConfig {
                k: Some(0),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            validate(&RetrievalConfig {
                select: Some("hits".into()),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            validate(&RetrievalConfig {
                value: Some(json!([1.5])),
                ..Default::default()
            })
            .is_err()
        );
    }
}
