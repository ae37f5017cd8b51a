//! The `http` provider's request template: `${…}` placeholders over the
//! case in the strings of the fixture's `http.body` and `http.url`.
//!
//! The grammar is the step placeholders' (`${steps[0].output.text}`,
//! docs/fixtures.md): `${` a root, then any number of `.key` or `[n]`
//! segments, then `}`; `$${` writes a literal `${`. A string that is
//! exactly one placeholder takes the value with its JSON type; anywhere
//! else the value is interpolated as text (a string as it is, `null` as
//! nothing, anything else JSON-encoded).
//!
//! Roots: `input` (the case's input: JSON when it is JSON, else the text;
//! paths read into it: the case's variables), `messages` (`[{role,
//! content}]`), `message` (the last user message; in a session, the
//! current turn's), `system`, `model`, `caseId`, `settings.<name>` (the
//! generation settings), `session.id` (in a session, the id the first
//! answer gave; `null` before it). A path that reads what the case does
//! not have is an error naming the placeholder; `system`, `model`,
//! `settings.*` and `session.id` are `null` when unset.

use serde_json::{Map, Value};

/// The roots a placeholder may read.
pub const ROOTS: &[&str] = &[
    "input", "messages", "message", "system", "model", "caseId", "settings", "session",
];

/// One segment of a placeholder's path.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// One `${root.path}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Placeholder {
    pub root: String,
    pub path: Vec<Segment>,
    /// As written, for messages.
    pub text: String,
}

/// A piece of a templated string.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Slot(Placeholder),
}

/// Splits `text` into literal text and placeholders, or says what is
/// wrong with the first bad one.
pub fn parse(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        if rest[..at].ends_with('$') {
            // `$${` is a literal `${`.
            literal.push_str(&rest[..at - 1]);
            literal.push_str("${");
            rest = &rest[at + 2..];
            continue;
        }
        literal.push_str(&rest[..at]);
        let after = &rest[at..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{}` has no closing `}}`", shown(after)))?;
        let placeholder = placeholder(&after[..=end])?;
        if !literal.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Slot(placeholder));
        rest = &after[end + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    Ok(pieces)
}

fn shown(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Parses `${…}` (the whole of `text`).
fn placeholder(text: &str) -> Result<Placeholder, String> {
    let inner = &text[2..text.len() - 1];
    let bad = |why: &str| format!("invalid placeholder `{}`: {why}", shown(text));
    let root_len = inner.find(['.', '[']).unwrap_or(inner.len());
    let root = &inner[..root_len];
    if !ROOTS.contains(&root) {
        return Err(bad(&format!(
            "`{root}` is not a field of the case; use one of {}",
            ROOTS.join(", ")
        )));
    }
    let mut rest = &inner[root_len..];
    let mut path = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let len = after.find(['.', '[']).unwrap_or(after.len());
            let key = &after[..len];
            if key.is_empty() || key.contains(']') {
                return Err(bad("an empty or malformed key in the path"));
            }
            path.push(Segment::Key(key.to_string()));
            rest = &after[len..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after
                .find(']')
                .ok_or_else(|| bad("an index in the path has no `]`"))?;
            let digits = &after[..close];
            let index = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse().ok())
                .flatten()
                .ok_or_else(|| bad("a path index must be a whole number"))?;
            path.push(Segment::Index(index));
            rest = &after[close + 1..];
        } else {
            return Err(bad("the path continues with `.key` or `[index]`"));
        }
    }
    let plain = |what: &str| -> Result<(), String> {
        if path.is_empty() {
            Ok(())
        } else {
            Err(bad(&format!("`{root}` is {what}; it has no fields")))
        }
    };
    match root {
        "message" | "system" | "model" | "caseId" => plain("text")?,
        "settings" => match path.as_slice() {
            [Segment::Key(name)] if SETTINGS.contains(&name.as_str()) => {}
            _ => {
                return Err(bad(&format!(
                    "read one generation setting: `settings.<name>` with a name of {}",
                    SETTINGS.join(", ")
                )));
            }
        },
        "session" if path != [Segment::Key("id".into())] => {
            return Err(bad("the session gives `session.id` only"));
        }
        _ => {}
    }
    Ok(Placeholder {
        root: root.to_string(),
        path,
        text: text.to_string(),
    })
}

/// The generation settings a template may read.
pub const SETTINGS: &[&str] = &["temperature", "maxTokens", "topP", "seed", "stop"];

/// What placeholders read: the case (and the session so far).
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub input: Option<Value>,
    pub messages: Value,
    pub message: Option<String>,
    pub system: Option<String>,
    pub model: Option<String>,
    pub case_id: String,
    pub settings: Map<String, Value>,
    pub session_id: Option<Value>,
}

impl Context {
    /// The value `placeholder` reads, or why it has none.
    fn value(&self, placeholder: &Placeholder) -> Result<Value, String> {
        let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
        let (mut value, path): (Value, &[Segment]) = match placeholder.root.as_str() {
            "system" => return Ok(text(&self.system)),
            "model" => return Ok(text(&self.model)),
            "caseId" => return Ok(Value::String(self.case_id.clone())),
            "message" => return Ok(text(&self.message)),
            "session" => return Ok(self.session_id.clone().unwrap_or(Value::Null)),
            "settings" => {
                let [Segment::Key(name)] = placeholder.path.as_slice() else {
                    return Ok(Value::Null);
                };
                return Ok(self.settings.get(name).cloned().unwrap_or(Value::Null));
            }
            "input" => (
                self.input.clone().ok_or("the case has no `input`")?,
                &placeholder.path,
            ),
            _ => (self.messages.clone(), &placeholder.path),
        };
        for segment in path {
            let next = match segment {
                Segment::Key(key) => value.get_mut(key.as_str()),
                Segment::Index(i) => value.get_mut(*i),
            };
            value = next
                .map(Value::take)
                .ok_or_else(|| "the case has no such value".to_string())?;
        }
        Ok(value)
    }
}

/// `value` as text inside a longer string.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A template error: where (`http.body.question`) and what.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateError {
    pub at: String,
    pub message: String,
}

/// Renders one templated string; `encode` is applied to each interpolated
/// value (URL components are percent-encoded).
pub fn render_text(
    text: &str,
    context: &Context,
    encode: &dyn Fn(&str) -> String,
) -> Result<Value, String> {
    let pieces = parse(text)?;
    if let [Piece::Slot(slot)] = pieces.as_slice() {
        return context
            .value(slot)
            .map_err(|why| format!("`{}`: {why}", slot.text));
    }
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Slot(slot) => {
                let value = context
                    .value(&slot)
                    .map_err(|why| format!("`{}`: {why}", slot.text))?;
                out.push_str(&encode(&as_text(&value)));
            }
        }
    }
    Ok(Value::String(out))
}

/// Renders every string of `template` (object keys stay as written);
/// `at` is the template's own JSON path (`http.body`).
pub fn render(template: &Value, context: &Context, at: &str) -> Result<Value, TemplateError> {
    match template {
        Value::String(text) if text.contains("${") => {
            render_text(text, context, &|s| s.to_string()).map_err(|message| TemplateError {
                at: at.to_string(),
                message,
            })
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| render(item, context, &format!("{at}[{i}]")))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(members) => members
            .iter()
            .map(|(k, v)| Ok((k.clone(), render(v, context, &format!("{at}.{k}"))?)))
            .collect::<Result<_, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters (a
/// value placed in a URL).
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn context() -> Context {
        let mut settings = Map::new();
        settings.insert("temperature".into(), json!(0.2));
        Context {
            input: Some(json!({"question": "Hi?", "lang": "en", "tags": ["a", "b"]})),
            messages: json!([{"role": "user", "content": "Hi?"}]),
            message: Some("Hi?".into()),
            system: None,
            model: Some("bot".into()),
            case_id: "c1".into(),
            settings,
            session_id: None,
        }
    }

    #[test]
    fn a_whole_placeholder_keeps_its_type_and_text_interpolates() {
        let template = json!({
            "q": "${input.question}", "all": "${input}", "msgs": "${messages}",
            "t": "${settings.temperature}", "top": "${settings.topP}", "sys": "${system}",
            "line": "[${caseId}] ${input.tags[1]} ${input.tags} ${system}!",
            "literal": "$${input}", "n": 3, "list": ["${model}", "${message}"],
            "session": "${session.id}"
        });
        let rendered = render(&template, &context(), "http.body").unwrap();
        assert_eq!(
            rendered,
            json!({
                "q": "Hi?", "all": {"question": "Hi?", "lang": "en", "tags": ["a", "b"]},
                "msgs": [{"role": "user", "content": "Hi?"}], "t": 0.2, "top": null, "sys": null,
                "line": "[c1] b [\"a\",\"b\"] !", "literal": "${input}", "n": 3,
                "list": ["bot", "Hi?"], "session": null
            })
        );
        let url = render_text(
            "http://h/s/${session.id}?q=${message}",
            &Context {
                session_id: Some(json!("a b/c")),
                ..context()
            },
            &percent_encode,
        )
        .unwrap();
        assert_eq!(url, json!("http://h/s/a%20b%2Fc?q=Hi%3F"));
    }

    #[test]
    fn bad_placeholders_and_missing_values_are_named() {
        let rows = [
            ("${inputs}", "`inputs` is not a field of the case"),
            ("${input", "has no closing `}`"),
            ("${input[x]}", "a path index must be a whole number"),
            ("${input..a}", "an empty or malformed key"),
            ("${system.x}", "`system` is text; it has no fields"),
            ("${settings.temp}", "read one generation setting"),
            ("${session.name}", "`session.id` only"),
        ];
        for (text, expected) in rows {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        let error =
            render(&json!({"a": ["${input.missing}"]}), &context(), "http.body").unwrap_err();
        assert_eq!(error.at, "http.body.a[0]");
        assert!(
            error
                .message
                .contains("`${input.missing}`: the case has no such value"),
            "{error:?}"
        );
        let no_input = Context {
            input: None,
            ..context()
        };
        let error = render(&json!("${input}"), &no_input, "http.body").unwrap_err();
        assert!(error.message.contains("the case has no `input`"));
    }
}
