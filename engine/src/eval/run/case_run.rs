//! Running cases: a case's provider invocations (from the preset's case
//! plan, one per sample), the case run the preset collects, and a batch of
//! cases run one after another on the calling thread.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::eval::EvalError;
use crate::eval::cases::origins;
use crate::eval::provider::calls::{CaseSamples, ProviderCalls};
use crate::eval::run::canned::CannedAnswers;
use crate::eval::run::workers::Stop;
use crate::fixture::{CaseOrigin, PathRoot};
use crate::json_members::Members;
use crate::plugin::bindings::preset_api::{CasePlan, CaseRun};
use crate::plugin::bindings::provider_api::Invocation;

/// Most samples the host takes of one case, whatever a preset's case plan
/// asks for (a host limit, not a preset's field).
const MAX_SAMPLES: u32 = 100;

/// What every case run of a suite shares.
pub struct RunContext<'a> {
    /// The provider's id, the fallback identity of a result.
    pub provider: &'a str,
    pub harness: &'a str,
    /// `messaging` or `workspace`, from the taxonomy.
    pub mode: &'a str,
    pub fixture_ref: &'a str,
    /// Canned results keyed by caseId (`--fixture-results`).
    pub canned: Option<&'a CannedAnswers>,
    /// What the provider is told on every call (an API provider's endpoint).
    pub provider_options: &'a Map<String, Value>,
    /// The directory the fixture's paths stay inside (workspace templates).
    pub root: &'a PathRoot,
    /// The suite's generation settings (its variant's overrides applied);
    /// a case's own win key by key.
    pub settings: &'a Map<String, Value>,
    /// Which settings the provider applies (`None`: it does not say).
    pub settings_applied: Option<&'a [String]>,
    /// Settings the cases asked for that the provider does not apply
    /// (each warned about once, then recorded in `run.json`).
    pub settings_not_applied: &'a std::sync::Mutex<std::collections::BTreeSet<String>>,
}

/// The invocation of one sample of a case. A canned list hands out one
/// entry per sample, in order; any other canned value serves every sample.
pub fn invocation(
    plan: &CasePlan,
    context: &RunContext<'_>,
    sample: usize,
    settings: &Map<String, Value>,
) -> Invocation {
    let canned = context
        .canned
        .and_then(|canned| canned.answer(&plan.case_id, sample));
    Invocation {
        case_id: plan.case_id.clone(),
        mode: context.mode.to_string(),
        model: plan.model.clone(),
        system: plan.system.clone(),
        messages: plan.messages.clone(),
        input: plan.input.clone(),
        expected: plan.expected.clone(),
        options: options_text(context.provider_options, canned, settings),
    }
}

/// The `options` of an invocation: the provider's own, the case's canned
/// result (`canned`) when it has one, and its generation settings (under
/// their own names: `temperature`, `maxTokens` …).
fn options_text(
    provider: &Map<String, Value>,
    canned: Option<&RawValue>,
    settings: &Map<String, Value>,
) -> Option<String> {
    if provider.is_empty() && canned.is_none() && settings.is_empty() {
        return None;
    }
    // Written as `provider` with `canned` and the settings set (in place,
    // as a map insert would), without copying any of them; the canned
    // answer as the text it was given in.
    let own = provider
        .iter()
        .filter(|(key, _)| !settings.contains_key(*key))
        .map(|(key, value)| match canned {
            Some(canned) if key == "canned" => (key.as_str(), Member::Text(canned)),
            _ => (key.as_str(), Member::Value(value)),
        });
    let added = canned.filter(|_| !provider.contains_key("canned"));
    let members: Vec<(&str, Member<'_>)> = own
        .chain(added.map(|canned| ("canned", Member::Text(canned))))
        .chain(
            settings
                .iter()
                .map(|(key, value)| (key.as_str(), Member::Value(value))),
        )
        .collect();
    Some(crate::json_text::object_text(
        members.iter().map(|(key, member)| (*key, member)),
    ))
}

/// A member of the options: a value, or JSON text copied as it is.
#[derive(Clone, Copy)]
enum Member<'a> {
    Value(&'a Value),
    Text(&'a RawValue),
}

impl serde::Serialize for Member<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::Text(text) => text.serialize(serializer),
        }
    }
}

/// The invocations of a case, one per sample (`repeat-count` of them);
/// `own`: the case's generation settings.
pub fn requests(
    plan: &CasePlan,
    context: &RunContext<'_>,
    own: Option<&Map<String, Value>>,
) -> Vec<Invocation> {
    let settings = crate::fixture::settings::merged(context.settings, own);
    if let Some(applied) = context.settings_applied {
        for name in settings.keys().filter(|k| !applied.contains(k)) {
            let mut not_applied = context
                .settings_not_applied
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if not_applied.insert(name.clone()) {
                eprintln!(
                    "warning: provider `{}` does not apply the generation setting `{name}` (case `{}` asks for it); its answers are what it gives without it, and run.json records the setting under settingsNotApplied",
                    crate::term::inline(context.provider),
                    crate::term::inline(&plan.case_id)
                );
            }
        }
    }
    (0..plan.repeat_count.clamp(1, MAX_SAMPLES) as usize)
        .map(|sample| invocation(plan, context, sample, &settings))
        .collect()
}

/// A case run and the time to first byte of its answer ([`case_run`]).
pub type TimedRun = (CaseRun, Option<u64>);

/// The case run the preset collects, from the case's samples, and the time
/// to first byte the host measured (which the host, not the preset, adds to
/// the case's evaluation).
pub fn case_run(plan: &CasePlan, context: &RunContext<'_>, samples: CaseSamples) -> TimedRun {
    let CaseSamples {
        samples,
        first_byte_ms,
    } = samples;
    let run = CaseRun {
        case_id: plan.case_id.clone(),
        fixture_ref: context.fixture_ref.to_string(),
        // The case's declared provider/model identify the result unless the
        // provider reports its own.
        provider: plan
            .provider
            .clone()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| context.provider.to_string()),
        model: plan.model.clone(),
        harness: context.harness.to_string(),
        mode: context.mode.to_string(),
        samples,
    };
    (run, first_byte_ms)
}

/// The field of a case's evaluation that holds the time to first byte of
/// its answer: measured by the host, never taken from a preset.
pub const FIRST_BYTE_FIELD: &str = "firstByteMs";

/// A case's evaluation (the preset's JSON text) with the host's time to
/// first byte beside `durationMs` (or last): set when the host measured one,
/// removed when a preset wrote one itself. Text the host cannot read as an
/// object is left for the records' own checks.
///
/// Runs for every case of an HTTP provider (twice: the observed and the
/// summary evaluation), so only the top level is read and the members are
/// written back as the text they are ([`crate::json_members::Members`]),
/// never built into values.
pub fn with_first_byte(evaluation: String, first_byte_ms: Option<u64>) -> String {
    if first_byte_ms.is_none() && !evaluation.contains(FIRST_BYTE_FIELD) {
        return evaluation;
    }
    let Some(Members(members)) = Members::of(&evaluation) else {
        return evaluation;
    };
    let ms = first_byte_ms.map(|ms| RawValue::from_string(ms.to_string()).expect("a number"));
    let ms = ms.as_deref();
    let beside_duration = members.iter().any(|(key, _)| key == "durationMs");
    let kept = members
        .iter()
        .filter(|(key, _)| key != FIRST_BYTE_FIELD)
        .flat_map(|(key, value)| {
            let then = ms.filter(|_| key == "durationMs");
            std::iter::once((key.as_ref(), *value)).chain(then.map(|ms| (FIRST_BYTE_FIELD, ms)))
        });
    let last = ms
        .filter(|_| !beside_duration)
        .map(|ms| (FIRST_BYTE_FIELD, ms));
    crate::json_text::object_text(kept.chain(last))
}

/// A case's own copy of its directory's workspace template, if it has one
/// (the provider's `process` working directory for that case only).
pub fn case_workspace(
    origin: &CaseOrigin,
    root: &PathRoot,
) -> Result<Option<tempfile::TempDir>, EvalError> {
    let template =
        origins::workspace_template(origin, root).map_err(|message| EvalError::Input {
            path: origin.dir.as_deref().unwrap_or(root.dir()).to_path_buf(),
            message,
        })?;
    template
        .map(|template| {
            origins::fresh_workspace(&template).map_err(|e| EvalError::Input {
                path: template.clone(),
                message: e.to_string(),
            })
        })
        .transpose()
}

/// Runs a batch of cases in order on the calling thread (a run whose
/// provider calls are not overlapped: see `run_pass`). A case whose
/// directory has a workspace template runs in a fresh copy of it; the
/// copies are returned so they outlive the case's assertions (code graders
/// run in them). When the run is
/// interrupted, the cases finished so far are returned (a prefix); when
/// another batch failed, the batch stops with [`EvalError::Stopped`].
pub fn run_cases(
    indices: &[usize],
    plans: &[CasePlan],
    origins: &[CaseOrigin],
    settings: &[Map<String, Value>],
    context: &RunContext<'_>,
    calls: &ProviderCalls,
    stop: &Stop<'_>,
) -> Result<(Vec<TimedRun>, Vec<Option<tempfile::TempDir>>), EvalError> {
    let mut runs = Vec::with_capacity(plans.len());
    let mut workspaces = Vec::with_capacity(plans.len());
    // One entry into a runtime for the whole batch, not one per case.
    calls.block_on(async {
        for (i, (plan, origin)) in plans.iter().zip(origins).enumerate() {
            if stop.failed() {
                return Err(EvalError::Stopped);
            }
            if stop.interrupted() {
                break;
            }
            let workspace = case_workspace(origin, context.root)?;
            let samples = calls
                .samples(
                    indices[i],
                    requests(plan, context, settings.get(i)),
                    workspace.as_ref().map(|w| w.path().to_path_buf()),
                )
                .await;
            runs.push(case_run(plan, context, samples));
            workspaces.push(workspace);
        }
        Ok(())
    })?;
    Ok((runs, workspaces))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_time_to_first_byte_is_the_hosts() {
        let keys = |text: &str| -> Vec<String> {
            let value: Value = serde_json::from_str(text).unwrap();
            value.as_object().unwrap().keys().cloned().collect()
        };
        let plain = json!({"caseId": "a", "durationMs": 40, "usage": null}).to_string();
        // Nothing measured, nothing claimed: the text as it was.
        assert_eq!(with_first_byte(plain.clone(), None), plain);
        let timed = with_first_byte(plain.clone(), Some(12));
        assert_eq!(
            keys(&timed),
            ["caseId", "durationMs", "firstByteMs", "usage"]
        );
        assert!(timed.contains("\"firstByteMs\":12"));
        // A preset's own claim is replaced, or removed when the host has none.
        let claimed = json!({"firstByteMs": 1, "caseId": "a", "durationMs": 40}).to_string();
        let replaced: Value =
            serde_json::from_str(&with_first_byte(claimed.clone(), Some(7))).unwrap();
        assert_eq!(replaced["firstByteMs"], 7);
        assert_eq!(
            keys(&with_first_byte(claimed, None)),
            ["caseId", "durationMs"]
        );
        // Without a duration the field goes last; text that is not an
        // object is left for the records' checks.
        let bare = with_first_byte(json!({"caseId": "a"}).to_string(), Some(3));
        assert_eq!(keys(&bare), ["caseId", "firstByteMs"]);
        assert_eq!(with_first_byte("[1]".into(), Some(3)), "[1]");
        assert_eq!(with_first_byte("not json".into(), Some(3)), "not json");
    }

    /// What `options_text` must write: the provider's options with
    /// `canned` inserted as a map insert would.
    fn inserted(provider: &Map<String, Value>, canned: Option<&Value>) -> Option<String> {
        if provider.is_empty() && canned.is_none() {
            return None;
        }
        let mut options = provider.clone();
        if let Some(canned) = canned {
            options.insert("canned".into(), canned.clone());
        }
        Some(Value::Object(options).to_string())
    }

    fn raw(value: &Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    #[test]
    fn options_are_the_providers_with_the_canned_result_set_in_place() {
        let providers = [
            json!({}),
            json!({"baseUrl": "http://127.0.0.1:9", "n": [1, "\"q\""]}),
            json!({"a": 1, "canned": "old", "z": null}),
        ];
        let canned = [
            None,
            Some(json!("an \"answer\"\n")),
            Some(json!({"k": [1]})),
        ];
        for provider in &providers {
            let provider = provider.as_object().unwrap();
            for canned in &canned {
                let text = canned.as_ref().map(raw);
                assert_eq!(
                    options_text(provider, text.as_deref(), &Map::new()),
                    inserted(provider, canned.as_ref()),
                    "{provider:?} {canned:?}"
                );
            }
        }
        let kept = options_text(
            providers[2].as_object().unwrap(),
            Some(&raw(&json!(2))),
            &Map::new(),
        )
        .unwrap();
        assert_eq!(kept, r#"{"a":1,"canned":2,"z":null}"#);
        // Settings go beside them under their own names.
        let settings = json!({"temperature": 0, "stop": ["END"]});
        let with = options_text(
            providers[1].as_object().unwrap(),
            Some(&raw(&json!("a"))),
            settings.as_object().unwrap(),
        )
        .unwrap();
        assert_eq!(
            with,
            r#"{"baseUrl":"http://127.0.0.1:9","n":[1,"\"q\""],"canned":"a","temperature":0,"stop":["END"]}"#
        );
        assert_eq!(
            options_text(&Map::new(), None, settings.as_object().unwrap()).unwrap(),
            r#"{"temperature":0,"stop":["END"]}"#
        );
    }
}
