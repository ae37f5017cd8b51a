//! Parsing plugin configs from JSON with errors that name the bad field.

use serde::de::DeserializeOwned;

use crate::PluginError;

/// Parses `json` into `T`, reporting the JSON path of the first problem.
///
/// Use `#[serde(deny_unknown_fields)]` on `T` so a typo (`valeu`) is an error
/// that names the typo instead of a silently ignored key.
///
/// ```
/// #[derive(Debug, serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Config { value: String, #[serde(default)] ignore_case: bool }
///
/// let err = cautilus_sdk::parse_config::<Config>(r#"{"value": 3}"#).unwrap_err();
/// assert_eq!(err.config_path(), Some("value"));
/// let err = cautilus_sdk::parse_config::<Config>(r#"{"value": "a", "ignore_cse": true}"#).unwrap_err();
/// assert_eq!(err.config_path(), Some("ignore_cse"));
/// ```
pub fn parse_config<T: DeserializeOwned>(json: &str) -> Result<T, PluginError> {
    let json = if json.trim().is_empty() { "{}" } else { json };
    // Most configs are valid: parse without tracking paths first, and only
    // retrace a failure to name its field (the outcome is the same).
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(value) => Ok(value),
        Err(error) => {
            let path = error.path().to_string();
            let inner = error.into_inner();
            let message = strip_position(&inner.to_string());
            let path = field_path(&path, &message);
            Err(PluginError::config(path, message))
        }
    }
}

/// serde_json appends " at line 1 column 12"; the path says more.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// A missing field is reported at its parent's path; name the field itself.
/// (An unknown field's path already ends with the field.)
fn field_path(parent: &str, message: &str) -> String {
    let parent = if parent == "." { "" } else { parent };
    for prefix in ["unknown field `", "missing field `"] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some(field) = rest.split('`').next()
        {
            if parent == field || parent.ends_with(&format!(".{field}")) {
                return parent.to_string();
            }
            return if parent.is_empty() {
                field.to_string()
            } else {
                format!("{parent}.{field}")
            };
        }
    }
    parent.to_string()
}
