//! What a provider that answers app cases only (`exec`, `http`: the user's
//! own program or service) reads first of an invocation: that it is a
//! messaging case, and its options as a JSON object.

use cautilus_sdk::PluginError;
use cautilus_sdk::provider::Invocation;
use serde_json::{Map, Value};

/// `request`'s options (an empty object when it has none or they are not
/// one), once it is known to be a messaging case; a repo case is refused
/// with an error starting `name: `.
pub fn options(name: &str, request: &Invocation) -> Result<Map<String, Value>, PluginError> {
    if request.mode != "messaging" {
        return Err(PluginError::failed(format!(
            "{name}: answers messaging (app) cases only; a repo case needs a coding-agent provider (claude-code, codex)"
        )));
    }
    Ok(
        match request
            .options
            .as_deref()
            .map(serde_json::from_str::<Value>)
        {
            Some(Ok(Value::Object(options))) => options,
            _ => Map::new(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invocation(mode: &str, options: Option<&str>) -> Invocation {
        Invocation {
            case_id: "c".into(),
            mode: mode.into(),
            model: None,
            system: None,
            messages: Vec::new(),
            input: None,
            expected: None,
            options: options.map(str::to_string),
        }
    }

    #[test]
    fn a_messaging_case_gives_its_options_and_a_repo_case_is_refused() {
        let given = options("exec", &invocation("messaging", Some(r#"{"a": 1}"#))).unwrap();
        assert_eq!(Value::Object(given), json!({"a": 1}));
        for written in [None, Some("[1]"), Some("not json")] {
            assert!(
                options_of(written).is_empty(),
                "{written:?} gives no options"
            );
        }
        let refused = options("http", &invocation("repo", None)).unwrap_err();
        assert!(
            matches!(&refused, PluginError::Failed(m) if m.starts_with("http: answers messaging (app) cases only")),
            "{refused:?}"
        );
    }

    fn options_of(written: Option<&str>) -> Map<String, Value> {
        options("exec", &invocation("messaging", written)).unwrap()
    }
}
