//! The HTML report: one self-contained file (no network, no CDN; it opens
//! from disk) holding the report data as JSON and the script and styles
//! that render it.
//!
//! Cases and outputs are untrusted text. The data is embedded as a JSON
//! `<script type="application/json">` block with every `<`, `>` and `&`
//! escaped, so no record can close the block; the script puts text into
//! the page only through `textContent`; and a Content-Security-Policy
//! allows exactly the report's own script and style (by hash), so even
//! markup that got through could run nothing and load nothing.

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ReportError;
use super::model::Report;

const SCRIPT: &str = include_str!("assets/report.js");
const STYLE: &str = include_str!("assets/report.css");

/// Longest string embedded per field; longer ones are cut with a note
/// (the records keep them whole), so a suite of long transcripts still
/// makes a report a browser opens.
const FIELD_CHARS: usize = 64 * 1024;

/// The HTML document of `report`.
pub fn render(report: &Report) -> Result<String, ReportError> {
    let mut data = serde_json::to_value(report).map_err(|e| ReportError::Render(e.to_string()))?;
    bound_strings(&mut data);
    let json = serde_json::to_string(&data).map_err(|e| ReportError::Render(e.to_string()))?;
    let title = format!("{} — cautilus report", report.header.title);
    let mut out = String::with_capacity(json.len() + SCRIPT.len() + STYLE.len() + 1024);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:\">\n",
        digest(SCRIPT),
        digest(STYLE)
    ));
    out.push_str(&format!("<title>{}</title>\n", escape_html(&title)));
    out.push_str("<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main id=\"app\"></main>\n");
    out.push_str("<noscript><p>This report shows its cases with JavaScript. The records it was made from are in ");
    out.push_str(&escape_html(&report.header.records));
    out.push_str(".</p></noscript>\n<script type=\"application/json\" id=\"report-data\">");
    out.push_str(&escape_json_for_script(&json));
    out.push_str("</script>\n<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    Ok(out)
}

/// The CSP source hash of an inline element's text.
fn digest(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

/// JSON text that cannot end or alter the `<script>` element holding it
/// (and stays valid JavaScript string syntax for U+2028/U+2029).
fn escape_json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            // Controls and bidi marks a terminal or an editor acts on
            // (printed by `cautilus report html` to stdout): escaped.
            c if crate::term::is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if crate::term::is_unsafe(c) => out.push_str(&format!("&#x{:x};", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// Cuts every string longer than [`FIELD_CHARS`] characters.
fn bound_strings(value: &mut Value) {
    match value {
        Value::String(s) if s.len() > FIELD_CHARS => {
            if let Some((cut, _)) = s.char_indices().nth(FIELD_CHARS) {
                let left = s.len() - cut;
                s.truncate(cut);
                s.push_str(&format!("\n… [{left} more bytes in the records]"));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_strings),
        Value::Object(map) => map.values_mut().for_each(bound_strings),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_json_cannot_close_its_script_element() {
        let json =
            serde_json::to_string(&serde_json::json!({"a": "</script><script>alert(1)</script>&"}))
                .unwrap();
        let escaped = escape_json_for_script(&json);
        assert!(!escaped.contains('<') && !escaped.contains('>') && !escaped.contains('&'));
        let back: Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["a"], "</script><script>alert(1)</script>&");
        // Controls and bidi marks are escaped too (the page can be printed).
        let hostile = "\u{1b}]0;t\u{7}\u{9b}\u{202e}\u{2066}\u{7f}";
        let json = serde_json::to_string(&serde_json::json!({ "a": hostile })).unwrap();
        let escaped = escape_json_for_script(&json);
        assert!(!escaped.chars().any(crate::term::is_unsafe), "{escaped}");
        let back: Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["a"], hostile);
        assert_eq!(escape_html("a\u{202e}b\rc"), "a&#x202e;b&#xd;c");
    }

    #[test]
    fn long_strings_are_bounded_on_a_character_boundary() {
        let mut v = serde_json::json!({"t": "é".repeat(FIELD_CHARS + 10)});
        bound_strings(&mut v);
        let t = v["t"].as_str().unwrap();
        assert!(t.starts_with(&"é".repeat(FIELD_CHARS)));
        assert!(t.ends_with("[20 more bytes in the records]"));
    }

    #[test]
    fn a_long_string_of_few_characters_is_not_marked_cut() {
        let text = "é".repeat(FIELD_CHARS - 10);
        let mut v = serde_json::json!(text.clone());
        bound_strings(&mut v);
        assert_eq!(v, serde_json::json!(text));
    }

    #[test]
    fn the_policy_hashes_the_exact_inline_script() {
        // sha256 of the empty string, base64 (`openssl dgst -sha256 -binary | base64`).
        assert_eq!(digest(""), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    }
}
