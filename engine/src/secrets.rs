//! Secret values kept out of everything a run records or prints (a leaf:
//! it depends on no other module of the host).
//!
//! The secrets are the values of the environment variables a run grants its
//! provider or judge (an API key, a CLI's login token). The host sends them
//! and a server, a CLI or a plugin may echo them back anywhere: as the
//! answering `model` (`"Bearer sk-…"`), in an error body, a tool call, the
//! harness or the cost source. So redaction is not a list of fields:
//!
//! - where untrusted data enters, every string of an observation that comes
//!   back (`crate::eval::provider::observation_scrub`, which names every field of the type,
//!   so a new field does not compile until it is scrubbed) and every provider or
//!   judge error ([`scrub`]) is scrubbed of the values granted to that call;
//! - and every value the host hands out is also registered process-wide
//!   ([`register`]), so what is written (records, cassettes, reports,
//!   transcripts: [`scrub_granted`], [`scrub_granted_json`]) and printed
//!   (through `crate::term`) is scrubbed once more, whatever path it took.
//!
//! A value is matched whatever the letter case of its ASCII letters (a
//! server that upper-cases what it quotes still quotes the key), also in
//! its JSON-escaped and `{:?}`-escaped forms and in the common escapings a
//! server quotes it in (`\/`, `\u002d`, `%2F`, `&#47;`: [`escaped`]), and
//! becomes `[redacted]`.
//! Values shorter than [`MIN_CHARS`] are not matched (they would redact
//! ordinary words).

mod escaped;

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

use serde_json::Value;

/// What a secret value becomes.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this many characters are not redacted.
pub const MIN_CHARS: usize = 4;

/// Every secret value this process handed to a provider, a judge or a
/// program (see [`register`]).
static GRANTED: RwLock<Option<Arc<Vec<String>>>> = RwLock::new(None);

/// The environment variables this process reads granted secrets from
/// (see [`register_sources`]).
static SOURCES: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Registers the environment variables a run reads its granted secrets
/// from (`--grant-secret NAME=VAR`, `[grants] secrets`): a fixture may not
/// interpolate them (`${{ VAR }}`), whatever their names, or it could send
/// the value wherever it sends its text.
pub fn register_sources<'a>(names: impl IntoIterator<Item = &'a str>) {
    let mut sources = SOURCES.write().unwrap_or_else(|e| e.into_inner());
    for name in names {
        if !sources.iter().any(|s| s == name) {
            sources.push(name.to_string());
        }
    }
}

/// Whether `name` is a variable a granted secret is read from
/// ([`register_sources`]).
pub fn is_source(name: &str) -> bool {
    SOURCES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|s| s == name)
}

/// Registers `values` as secrets of this process: from now on, every record
/// written and every line printed is scrubbed of them.
pub fn register<'a>(values: impl IntoIterator<Item = &'a str>) {
    let mut granted = GRANTED.write().unwrap_or_else(|e| e.into_inner());
    let mut all: Vec<String> = granted.as_deref().cloned().unwrap_or_default();
    let before = all.len();
    for value in values {
        if value.chars().count() >= MIN_CHARS && !all.iter().any(|v| v == value) {
            all.push(value.to_string());
        }
    }
    if all.len() != before {
        // Longest first: a value that contains another goes whole.
        all.sort_by_key(|v| std::cmp::Reverse(v.len()));
        *granted = Some(Arc::new(all));
    }
}

/// The registered secret values (none: an empty list, no allocation).
fn granted() -> Option<Arc<Vec<String>>> {
    GRANTED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `text` scrubbed of every registered secret (borrowed when it holds none).
pub fn scrub_granted(text: &str) -> Cow<'_, str> {
    match granted() {
        Some(secrets) => scrub_cow(text, &secrets),
        None => Cow::Borrowed(text),
    }
}

/// `bytes` (a file about to be written) scrubbed of every registered
/// secret, byte by byte (a file need not be text: nothing else changes).
pub fn scrub_granted_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(secrets) = granted() else {
        return Cow::Borrowed(bytes);
    };
    let mut out = Cow::Borrowed(bytes);
    for secret in secrets.iter() {
        for form in forms(secret) {
            if let Some(clean) = replace_bytes_ignoring_ascii_case(&out, form.as_bytes()) {
                out = Cow::Owned(clean);
            }
        }
    }
    let spans = escaped::secret_spans(&out, &secrets);
    if !spans.is_empty() {
        out = Cow::Owned(escaped::replace_spans(&out, &spans));
    }
    out
}

/// What a plugin is handed of a program's output or a server's answer
/// (the `process` and `http` imports): `bytes` scrubbed of every registered
/// secret, so a plugin never holds one, and cannot cut one in two before
/// the host scrubs what it returns. When the host cut the output at its
/// limit (`cut`), a secret's first [`MIN_CHARS`] or more characters at the
/// very end go too (the rest of it was cut off).
pub fn scrub_granted_output(bytes: Vec<u8>, cut: bool) -> Vec<u8> {
    let Some(secrets) = granted() else {
        return bytes;
    };
    let mut out = match scrub_granted_bytes(&bytes) {
        Cow::Owned(clean) => clean,
        Cow::Borrowed(_) => bytes,
    };
    if cut {
        strip_cut_secret(&mut out, &secrets);
    }
    out
}

/// Replaces a beginning of one of `secrets` (in any of its forms, escaped
/// too, at least [`MIN_CHARS`] bytes, ASCII case ignored) that ends
/// `bytes`.
fn strip_cut_secret(bytes: &mut Vec<u8>, secrets: &[String]) {
    let longest = secrets
        .iter()
        .flat_map(|secret| forms(secret).into_iter().map(Cow::into_owned))
        .filter_map(|form| {
            let form = form.as_bytes();
            (MIN_CHARS..form.len()).rev().find(|&k| {
                bytes.len() >= k && bytes[bytes.len() - k..].eq_ignore_ascii_case(&form[..k])
            })
        })
        .max();
    let plain = longest.map(|k| bytes.len() - k);
    // Quoted escaped (`sk-proj\/Ab` cut off): the beginning decodes to one.
    let escaped = escaped::cut_secret_start(bytes, secrets);
    if let Some(start) = plain.into_iter().chain(escaped).min() {
        bytes.truncate(start);
        bytes.extend_from_slice(REDACTED.as_bytes());
    }
}

/// `bytes` with every occurrence of `needle` (ASCII case ignored) replaced
/// by `[redacted]`, or `None` when there is none.
fn replace_bytes_ignoring_ascii_case(bytes: &[u8], needle: &[u8]) -> Option<Vec<u8>> {
    let mut at = find_ignoring_ascii_case(bytes, needle, 0)?;
    let mut out = Vec::with_capacity(bytes.len());
    let mut last = 0;
    loop {
        out.extend_from_slice(&bytes[last..at]);
        out.extend_from_slice(REDACTED.as_bytes());
        last = at + needle.len();
        match find_ignoring_ascii_case(bytes, needle, last) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.extend_from_slice(&bytes[last..]);
    Some(out)
}

/// A JSON text (a record's line) scrubbed of every registered secret:
/// parsed and scrubbed string by string (keys too) when one is in it, so
/// the result stays JSON whatever the secret looks like. Borrowed when it
/// holds none.
pub fn scrub_granted_json(text: &str) -> Cow<'_, str> {
    let Some(secrets) = granted() else {
        return Cow::Borrowed(text);
    };
    let held = |s: &String| forms(s).iter().any(|f| holds_bytes(text.as_bytes(), f));
    if !secrets.iter().any(held) && escaped::secret_spans(text.as_bytes(), &secrets).is_empty() {
        return Cow::Borrowed(text);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            scrub_value(&mut value, &secrets);
            Cow::Owned(value.to_string())
        }
        Err(_) => scrub_cow(text, &secrets),
    }
}

/// `value` scrubbed of every registered secret, or `None` when it holds
/// none (no copy is made while nothing is registered).
pub fn scrubbed_value(value: &Value) -> Option<Value> {
    let secrets = granted()?;
    let mut copy = value.clone();
    scrub_value(&mut copy, &secrets).then_some(copy)
}

/// Scrubs every string and key of `value`; true when something changed.
pub fn scrub_value(value: &mut Value, secrets: &[String]) -> bool {
    match value {
        Value::String(text) => scrub_in_place(text, secrets),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| scrub_value(item, secrets) | changed),
        Value::Object(map) => {
            let mut changed = false;
            if map
                .keys()
                .any(|k| matches!(scrub_cow(k, secrets), Cow::Owned(_)))
            {
                let entries = std::mem::take(map);
                for (key, item) in entries {
                    map.insert(scrub_cow(&key, secrets).into_owned(), item);
                }
                changed = true;
            }
            map.values_mut().fold(changed, |changed, item| {
                scrub_value(item, secrets) | changed
            })
        }
        _ => false,
    }
}

/// `text` with every value of `secrets` replaced by `[redacted]`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    scrub_cow(text, secrets).into_owned()
}

/// Scrubs `text` in place; true when something was redacted.
pub fn scrub_in_place(text: &mut String, secrets: &[String]) -> bool {
    match scrub_cow(text, secrets) {
        Cow::Owned(clean) => {
            *text = clean;
            true
        }
        Cow::Borrowed(_) => false,
    }
}

/// `text` scrubbed of `secrets`, borrowed when it holds none of them.
pub fn scrub_cow<'a>(text: &'a str, secrets: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter().filter(|s| s.chars().count() >= MIN_CHARS) {
        for form in forms(secret) {
            if let Some(clean) = replace_ignoring_ascii_case(&out, &form) {
                out = Cow::Owned(clean);
            }
        }
    }
    let spans = escaped::secret_spans(out.as_bytes(), secrets);
    if !spans.is_empty() {
        out = Cow::Owned(whole_text(escaped::replace_spans(out.as_bytes(), &spans)));
    }
    out
}

/// The forms a secret is quoted in: as it is, JSON-escaped and
/// `{:?}`-escaped (when those differ).
fn forms(secret: &str) -> Vec<Cow<'_, str>> {
    let mut forms = vec![Cow::Borrowed(secret)];
    // Most keys are plain ASCII that neither notation escapes: one form,
    // found without building the others (this runs for every string
    // scrubbed, per case).
    let plain = |c: char| (c.is_ascii_graphic() && !matches!(c, '"' | '\\' | '\'')) || c == ' ';
    if secret.chars().all(plain) {
        return forms;
    }
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json
        .strip_prefix('"')
        .and_then(|j| j.strip_suffix('"'))
        .unwrap_or(secret);
    let debug = secret.escape_debug().to_string();
    for form in [json.to_string(), debug] {
        if form != secret && !forms.iter().any(|f| *f == form) {
            forms.push(Cow::Owned(form));
        }
    }
    forms
}

/// Whether `bytes` holds `needle`, whatever the case of its ASCII letters.
fn holds_bytes(bytes: &[u8], needle: &str) -> bool {
    find_ignoring_ascii_case(bytes, needle.as_bytes(), 0).is_some()
}

/// Where `needle` first occurs in `bytes` at or after `from`, whatever the
/// case of its ASCII letters.
fn find_ignoring_ascii_case(bytes: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let &first = needle.first()?;
    let last_start = bytes.len().checked_sub(needle.len())?;
    if from > last_start {
        return None;
    }
    memchr::memchr2_iter(
        first.to_ascii_lowercase(),
        first.to_ascii_uppercase(),
        &bytes[from..=last_start],
    )
    .map(|at| from + at)
    .find(|&at| bytes[at..at + needle.len()].eq_ignore_ascii_case(needle))
}

/// `text` with every occurrence of `needle` (ASCII case ignored) replaced,
/// or `None` when there is none.
fn replace_ignoring_ascii_case(text: &str, needle: &str) -> Option<String> {
    let bytes = replace_bytes_ignoring_ascii_case(text.as_bytes(), needle.as_bytes())?;
    Some(whole_text(bytes))
}

/// A text with spans replaced by `[redacted]`, as text. Whole UTF-8: a
/// match starts where the needle's first byte (ASCII or a lead byte, never
/// a continuation byte) or an escape does, and ends after a whole
/// character or escape; `[redacted]` is ASCII.
fn whole_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Field names that hold credentials (JSON members, HTTP headers), whatever
/// their case or separators (token *counts* such as `inputTokens` are not
/// credentials).
pub fn credential_field(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    !name.ends_with("tokens")
        && [
            "authorization",
            "cookie",
            "password",
            "secret",
            "apikey",
            "token",
        ]
        .iter()
        .any(|f| name.contains(f))
}

/// Whether an environment variable's name says it holds a credential: a
/// `_`-separated part names one (`OPENAI_KEY`, `GITHUB_PAT`, `DB_AUTH`,
/// `SIGNING_PRIVATE`), or it is a credential field name
/// ([`credential_field`]: `CLIENTSECRET`, `API_SECRETS`, `X_APIKEY`); not
/// `MAX_TOKENS`.
pub fn names_a_credential(name: &str) -> bool {
    const PARTS: &[&str] = &[
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "COOKIE",
        "AUTH",
        "PAT",
        "PATS",
        "PRIVATE",
        "PWD",
        "PASS",
        "KEYS",
        "JWT",
        "DSN",
        "WEBHOOK",
        "PW",
        "SEED",
        "SASL",
        "JAAS",
        "OTP",
    ];
    // Whole names that hold credentials without saying so.
    const NAMES: &[&str] = &["DATABASE_URL", "SSHPASS", "PGPASS", "PGPASSWORD"];
    // Run together: `OPENAIKEY`, `MASTERKEY`.
    const JOINED: &[&str] = &[
        "privatekey",
        "masterkey",
        "accesskey",
        "secretkey",
        "openaikey",
        "connectionstring",
        "connstr",
    ];
    let lower = name.to_ascii_lowercase();
    // The shell's working directories, not a password.
    if lower == "pwd" || lower == "oldpwd" {
        return false;
    }
    credential_field(name)
        || NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
        || JOINED
            .iter()
            .any(|j| lower.replace(['_', '-'], "").contains(j))
        || name
            .split('_')
            .any(|part| PARTS.iter().any(|p| part.eq_ignore_ascii_case(p)))
}

/// Whether a value (of an environment variable a fixture reads) holds a
/// credential whatever its variable is named: a URL with a user (and
/// password) in it (`postgres://app:pw@db`, `https://TOKEN@host`,
/// `redis://:pw@cache`), or a `key=value` list naming a password or key
/// (`…;AccountKey=…`, `password="…"`).
pub fn holds_a_credential(value: &str) -> bool {
    const KEYS: &[&str] = &[
        "password",
        "passwd",
        "pwd",
        "pass",
        "accountkey",
        "sharedaccesskey",
        "sharedaccesssignature",
        "sig",
        "secret",
        "clientsecret",
        "token",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
    ];
    let userinfo = value.match_indices("://").any(|(at, _)| {
        let authority = &value[at + 3..];
        let end = authority
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(authority.len());
        authority[..end].contains('@')
    });
    let named = value
        .split(|c: char| matches!(c, ';' | '&' | ',') || c.is_whitespace())
        .filter_map(|pair| pair.split_once('='))
        .any(|(key, secret)| {
            let key: String = key
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase();
            !secret.trim_matches(['"', '\'']).is_empty() && KEYS.contains(&key.as_str())
        });
    userinfo || named
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "sk-Walk-Secret-9090";

    #[test]
    fn a_secret_is_matched_in_any_letter_case_and_escaped_form() {
        let secrets = vec![KEY.to_string(), "pa\"ss\\word".to_string(), "abc".into()];
        for (text, want) in [
            (format!("Bearer {KEY}"), "Bearer [redacted]".to_string()),
            (
                format!("bearer {} and {}", KEY.to_ascii_uppercase(), KEY),
                "bearer [redacted] and [redacted]".into(),
            ),
            (
                r#"{"key": "pa\"ss\\word"}"#.into(),
                r#"{"key": "[redacted]"}"#.into(),
            ),
            ("raw pa\"ss\\word".into(), "raw [redacted]".into()),
            (
                "abc is too short to be redacted".into(),
                "abc is too short to be redacted".into(),
            ),
            (
                "ünïcödé around sk-walk-secret-9090!".into(),
                "ünïcödé around [redacted]!".into(),
            ),
        ] {
            assert_eq!(scrub(&text, &secrets), want, "{text}");
        }
        assert!(matches!(scrub_cow("clean", &secrets), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_json_when_a_secret_is_scrubbed_from_it() {
        let secrets = vec!["true".to_string(), KEY.to_string()];
        let mut value =
            json!({"ok": true, KEY: ["true story", 1], "n": {"x": format!("Bearer {KEY}")}});
        assert!(scrub_value(&mut value, &secrets));
        assert_eq!(
            value,
            json!({"ok": true, "[redacted]": ["[redacted] story", 1], "n": {"x": "Bearer [redacted]"}})
        );
    }

    #[test]
    fn registered_secrets_are_scrubbed_from_what_is_written() {
        let key = "sk-registered-in-this-test-7171";
        assert_eq!(scrub_granted(key), key, "not yet registered");
        register([key, "ab"]);
        assert_eq!(scrub_granted(&format!("Bearer {key}")), "Bearer [redacted]");
        assert_eq!(scrub_granted("ab stays"), "ab stays", "too short");
        let line = json!({"model": format!("Bearer {key}"), "true": true}).to_string();
        let clean: Value = serde_json::from_str(&scrub_granted_json(&line)).unwrap();
        assert_eq!(clean, json!({"model": "Bearer [redacted]", "true": true}));
        assert!(matches!(scrub_granted_json("{\"a\": 1}"), Cow::Borrowed(_)));
        assert_eq!(
            scrub_granted_bytes(format!("<td>{key}</td>").as_bytes()).as_ref(),
            b"<td>[redacted]</td>"
        );
        // Bytes that are not text stay as they are around the match.
        let mut binary = vec![0xff, 0x00, 0x8b];
        binary.extend_from_slice(key.to_ascii_uppercase().as_bytes());
        binary.extend_from_slice(&[0xc3, 0x28]);
        let mut want = vec![0xff, 0x00, 0x8b];
        want.extend_from_slice(b"[redacted]");
        want.extend_from_slice(&[0xc3, 0x28]);
        assert_eq!(scrub_granted_bytes(&binary).as_ref(), want.as_slice());
        assert!(matches!(
            scrub_granted_bytes(&[0xff, 0x00]),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn output_cut_inside_a_secret_keeps_no_part_of_it() {
        let key = "sk-Cut-In-Two-Secret-5151";
        register([key]);
        let text = format!("{}{} tail", "x".repeat(40), key.to_ascii_lowercase());
        for at in 0..=text.len() {
            let out = scrub_granted_output(text.as_bytes()[..at].to_vec(), true);
            let out = String::from_utf8(out).unwrap().to_ascii_lowercase();
            let key = key.to_ascii_lowercase();
            assert!(!out.contains(&key), "cut at {at}: {out}");
            for k in MIN_CHARS..key.len() {
                assert!(!out.ends_with(&key[..k]), "cut at {at}: {out}");
            }
            // Only what is left of the key goes: the text before it stays.
            assert!(out.starts_with(&text[..at.min(40)]), "cut at {at}: {out}");
        }
        // Uncut output keeps a word that only starts like a key.
        let word = b"ask sk-Cut-In".to_vec();
        assert_eq!(scrub_granted_output(word.clone(), false), word);
        assert_eq!(scrub_granted_output(word, true), b"ask [redacted]".to_vec());
    }

    #[test]
    fn values_holding_credentials_are_known_whatever_their_names() {
        for value in [
            "postgres://app:s3cret@db:5432/prod",
            "mongodb+srv://user:pw@cluster0.example.net/db?retryWrites=true",
            "redis://:pw@cache:6379/0",
            "amqp://guest:guest@mq//",
            "http://proxyuser:proxypass@proxy:3128",
            "https://ghp_token@github.com/org/repo.git",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc==;EndpointSuffix=core.windows.net",
            "Server=db;Database=app;User Id=sa;Password=Pa55;",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v=",
        ] {
            assert!(holds_a_credential(value), "{value}");
        }
        for value in [
            "8765",
            "redis://cache:6379/0",
            "http://127.0.0.1:8000/chat",
            "user@example.com",
            "a=b;c=d",
            "password=",
            "https://example.com/path?q=a@b",
            "Hello, world",
        ] {
            assert!(!holds_a_credential(value), "{value}");
        }
    }

    #[test]
    fn credentials_are_named_fields_and_counts_are_not() {
        for name in [
            "authorization",
            "x-api-key",
            "OPENAI_API_KEY",
            "accessToken",
            "client_secret",
            "Set-Cookie",
        ] {
            assert!(credential_field(name), "{name}");
        }
        for name in ["inputTokens", "max_tokens", "model", "content"] {
            assert!(!credential_field(name), "{name}");
        }
    }

    #[test]
    fn variables_named_like_credentials_are_known() {
        for name in [
            "OPENAI_API_KEY",
            "OPENAI_KEY",
            "GITHUB_TOKEN",
            "GITHUB_PAT",
            "DB_PASSWORD",
            "CLIENTSECRET",
            "API_SECRETS",
            "my_auth",
            "SIGNING_PRIVATE",
            "MYSQL_PWD",
            "SSHPASS",
            "DB_PASS",
            "DATABASE_URL",
            "SENTRY_DSN",
            "CI_JOB_JWT",
            "PRIVATEKEY",
            "MASTERKEY",
            "OPENAIKEY",
            "ACCESS_KEYS",
            "GH_PATS",
            "MY_CREDS",
            "PGPASS",
            "SLACK_WEBHOOK",
            "DISCORD_WEBHOOK_URL",
            "DB_PW",
            "LDAP_BIND_PW",
            "OTP_SEED",
            "KAFKA_SASL_JAAS_CONFIG",
            "DB_CONNECTION_STRING",
            "AZURE_STORAGE_CONNECTION_STRING",
        ] {
            assert!(names_a_credential(name), "{name}");
        }
        for name in [
            "MAX_TOKENS",
            "HOME",
            "MODEL",
            "KEYBOARD_LAYOUT",
            "PATH",
            "PASSING_SCORE",
            "OLDPWD_HINT",
            "PWD",
            "OLDPWD",
        ] {
            assert!(!names_a_credential(name), "{name}");
        }
    }
}
