//! Secrets quoted in an escaped form a plain search does not see.
//!
//! A server, a CLI or a program may echo a secret however its language
//! escapes text. The common escapings are decoded: JSON's `\/` (PHP) and
//! `\u002d` (Go, or a hostile server escaping every character, surrogate
//! pairs too), `\u{2d}` (Rust), `\x2d`, percent-encoding (a query string
//! quoted back), HTML references (`&#47;`, `&#x2F;`, and the names of the
//! characters keys hold: `&sol;`, `&plus;`, …, a numeric one without its
//! `;`); a backslash escape at any depth (`\\/`, a string escaped again),
//! and any of them applied up to three times (`%252F`, `&amp;#47;`). This
//! module searches a text's *decoded view* — each escape read as the
//! character it stands for, a run of backslashes read as one — for each
//! secret as it is and as the same decoding reads it (a secret may itself
//! hold `%40` or `\n`), and gives the raw spans that decode to one, so the
//! caller replaces exactly those bytes.
//!
//! Decoding is loose on purpose: a sequence that only looks like an escape
//! is decoded too. The cost of that is at most an over-redacted span.
//! Not decoded: an encoding applied four times or more, a named reference
//! without its `;`, and escapes of other notations.

/// One escape token: the decoded bytes it stands for start at `at` in the
/// decoded view and are `len` long; it spans `raw` in the text. Offsets are
/// `u32` (a text the host holds is at most 1 GiB: `--output-mib`), so a
/// text of escapes costs 16 bytes an escape.
#[derive(Debug, Clone, Copy)]
struct Escape {
    at: u32,
    len: u32,
    raw: (u32, u32),
}

impl Escape {
    fn at(&self) -> usize {
        self.at as usize
    }
    fn end(&self) -> usize {
        self.at as usize + self.len as usize
    }
    fn raw(&self) -> (usize, usize) {
        (self.raw.0 as usize, self.raw.1 as usize)
    }
}

/// A text's decoded view, with where each escape came from.
struct Decoded {
    bytes: Vec<u8>,
    escapes: Vec<Escape>,
}

impl Decoded {
    /// The raw span of the decoded bytes `from..to` (`to` exclusive).
    fn raw_span(&self, from: usize, to: usize) -> (usize, usize) {
        (self.raw_start(from), self.raw_end(to - 1))
    }

    fn escape_before(&self, at: usize) -> Option<&Escape> {
        let i = self.escapes.partition_point(|e| e.at() <= at);
        i.checked_sub(1).map(|i| &self.escapes[i])
    }

    /// Where the token holding decoded byte `at` starts in the text.
    fn raw_start(&self, at: usize) -> usize {
        match self.escape_before(at) {
            None => at,
            Some(e) if at < e.end() => e.raw().0,
            Some(e) => e.raw().1 + (at - e.end()),
        }
    }

    /// Where the token holding decoded byte `at` ends in the text.
    fn raw_end(&self, at: usize) -> usize {
        match self.escape_before(at) {
            None => at + 1,
            Some(e) if at < e.end() => e.raw().1,
            Some(e) => e.raw().1 + (at - e.end()) + 1,
        }
    }
}

/// What to look for in a decoded view: each secret (at least
/// [`super::MIN_CHARS`] characters) as it is, and decoded the same way when
/// it holds something that reads as an escape (`p%40ss`, `pw\\n`), so a
/// secret is found whichever way the decoder reads it.
fn needles(secrets: &[String]) -> Vec<Vec<u8>> {
    let mut needles: Vec<Vec<u8>> = Vec::new();
    for secret in secrets
        .iter()
        .filter(|s| s.chars().count() >= super::MIN_CHARS)
    {
        let plain = secret.as_bytes().to_vec();
        if let Some(decoded) = decode(&plain).map(|d| d.bytes)
            && decoded.len() >= super::MIN_CHARS
            && !needles.contains(&decoded)
        {
            needles.push(decoded);
        }
        if !needles.contains(&plain) {
            needles.push(plain);
        }
    }
    needles
}

/// How many times a text is decoded: an encoding applied twice or three
/// times (`%252F`, `&amp;#47;`, `&#37;2F`) is read too.
const PASSES: usize = 3;

/// Whether `text` may hold an escape at all (most texts do not: they are
/// searched no further).
fn may_hold_escape(text: &[u8]) -> bool {
    memchr::memchr3(b'\\', b'%', b'&', text).is_some()
}

/// The raw spans of `text` that decode to one of `secrets` (ASCII letter
/// case ignored), sorted and disjoint; empty when `text` holds no escape.
pub(super) fn secret_spans(text: &[u8], secrets: &[String]) -> Vec<(usize, usize)> {
    if !may_hold_escape(text) {
        return Vec::new();
    }
    let needles = needles(secrets);
    // Each pass decodes what the one before gave (`%252F` → `%2F` → `/`,
    // `&amp;#47;` → `&#47;` → `/`); a match is mapped back through them.
    let mut passes: Vec<Decoded> = Vec::new();
    let mut spans = Vec::new();
    while passes.len() < PASSES {
        let view = passes.last().map_or(text, |d| d.bytes.as_slice());
        if !may_hold_escape(view) {
            break;
        }
        let Some(decoded) = decode(view) else {
            break;
        };
        for needle in &needles {
            let mut from = 0;
            while let Some(at) = super::find_ignoring_ascii_case(&decoded.bytes, needle, from) {
                let span = decoded.raw_span(at, at + needle.len());
                spans.push(
                    passes
                        .iter()
                        .rev()
                        .fold(span, |(start, end), pass| pass.raw_span(start, end)),
                );
                from = at + needle.len();
            }
        }
        passes.push(decoded);
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Where a secret's beginning ([`super::MIN_CHARS`] or more of its
/// decoded bytes, ASCII case ignored) that ends `text` starts in it, once
/// decoded: what is left of a secret quoted escaped in output the host cut
/// off. `None` when no such beginning ends it.
pub(super) fn cut_secret_start(text: &[u8], secrets: &[String]) -> Option<usize> {
    // An escape is at most 12 bytes (`\uXXXX\uXXXX`, `&#x1F600;`); a
    // backslash run can be longer, and is decoded wholly within the window
    // when it starts in it.
    let longest = secrets.iter().map(String::len).max()?;
    let window_start = text.len().saturating_sub(longest.saturating_mul(12));
    let tail = &text[window_start..];
    if !may_hold_escape(tail) {
        return None;
    }
    let decoded = decode(tail)?;
    let bytes = &decoded.bytes;
    needles(secrets)
        .iter()
        .filter_map(|needle| {
            (super::MIN_CHARS..needle.len()).rev().find(|&k| {
                bytes.len() >= k && bytes[bytes.len() - k..].eq_ignore_ascii_case(&needle[..k])
            })
        })
        .max()
        .map(|k| window_start + decoded.raw_start(bytes.len() - k))
}

/// `text` with `spans` (sorted, disjoint) replaced by `[redacted]`.
pub(super) fn replace_spans(text: &[u8], spans: &[(usize, usize)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut last = 0;
    for &(start, end) in spans {
        out.extend_from_slice(&text[last..start]);
        out.extend_from_slice(super::REDACTED.as_bytes());
        last = end;
    }
    out.extend_from_slice(&text[last..]);
    out
}

/// The decoded view of `text`, or `None` when it holds no escape (or is
/// longer than the offsets of its escapes can say: 4 GiB).
fn decode(text: &[u8]) -> Option<Decoded> {
    if u32::try_from(text.len()).is_err() {
        return None;
    }
    let mut bytes = Vec::new();
    let mut escapes = Vec::new();
    let mut plain_from = 0;
    let mut i = 0;
    while i < text.len() {
        let Some((value, end)) = escape_at(text, i) else {
            i += 1;
            continue;
        };
        if escapes.is_empty() {
            bytes.reserve(text.len());
        }
        bytes.extend_from_slice(&text[plain_from..i]);
        let mut utf8 = [0; 4];
        let decoded: &[u8] = match value {
            Unit::Char(c) => c.encode_utf8(&mut utf8).as_bytes(),
            Unit::Byte(b) => {
                utf8[0] = b;
                &utf8[..1]
            }
        };
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        escapes.push(Escape {
            at: offset(bytes.len()),
            len: offset(decoded.len()),
            raw: (offset(i), offset(end)),
        });
        bytes.extend_from_slice(decoded);
        i = end;
        plain_from = end;
    }
    if escapes.is_empty() {
        return None;
    }
    bytes.extend_from_slice(&text[plain_from..]);
    Some(Decoded { bytes, escapes })
}

/// What an escape stands for: a character, or a byte (percent-encoding
/// encodes UTF-8 byte by byte).
enum Unit {
    Char(char),
    Byte(u8),
}

/// The escape starting at `i`, if one does: what it stands for and where
/// it ends.
fn escape_at(text: &[u8], i: usize) -> Option<(Unit, usize)> {
    match text[i] {
        b'\\' => backslash_escape(text, i),
        b'%' => {
            let b = hex_value(text.get(i + 1..i + 3)?)?;
            Some((Unit::Byte(b as u8), i + 3))
        }
        b'&' => html_reference(text, i),
        _ => None,
    }
}

/// A run of backslashes and what follows it: `\/`, `\"`, `\'`, `\n`-style
/// controls, `\uXXXX` (a surrogate pair too), `\u{…}`, or a run of them
/// before anything else (a backslash escaped once or more) read as one `\`.
fn backslash_escape(text: &[u8], i: usize) -> Option<(Unit, usize)> {
    let run = text[i..].iter().take_while(|&&b| b == b'\\').count();
    let k = i + run;
    let unit = |c: char, end: usize| Some((Unit::Char(c), end));
    match text.get(k) {
        Some(b'u') => {
            if let Some((c, end)) = unicode_escape(text, k) {
                return unit(c, end);
            }
        }
        Some(&c @ (b'/' | b'"' | b'\'')) => return unit(c as char, k + 1),
        Some(b'x') => {
            if let Some(b) = text.get(k + 1..k + 3).and_then(hex_value) {
                return Some((Unit::Byte(b as u8), k + 3));
            }
        }
        Some(b'n') => return unit('\n', k + 1),
        Some(b'r') => return unit('\r', k + 1),
        Some(b't') => return unit('\t', k + 1),
        Some(b'b') => return unit('\u{8}', k + 1),
        Some(b'f') => return unit('\u{c}', k + 1),
        _ => {}
    }
    // Only a run of two or more changes anything.
    (run > 1).then_some((Unit::Char('\\'), k))
}

/// `uXXXX` (with a following `\uXXXX` low surrogate when it is a high one)
/// or `u{X…}` at `k`: the character and where the escape ends.
fn unicode_escape(text: &[u8], k: usize) -> Option<(char, usize)> {
    if text.get(k + 1) == Some(&b'{') {
        let window = text.get(k + 2..text.len().min(k + 9))?;
        let close = k + 2 + window.iter().position(|&b| b == b'}')?;
        let code = hex_value(&text[k + 2..close])?;
        return Some((char::from_u32(code)?, close + 1));
    }
    let unit = hex_value(text.get(k + 1..k + 5)?)?;
    if !(0xD800..0xDC00).contains(&unit) {
        return Some((char::from_u32(unit)?, k + 5));
    }
    // A high surrogate: its low half follows, after its own backslashes.
    let next = k + 5;
    let run = text
        .get(next..)?
        .iter()
        .take_while(|&&b| b == b'\\')
        .count();
    let u = next + run;
    if run == 0 || text.get(u) != Some(&b'u') {
        return None;
    }
    let low = hex_value(text.get(u + 1..u + 5)?)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    Some((char::from_u32(code)?, u + 5))
}

/// `&#NN;`, `&#xHH;` or one of the named references of the characters
/// HTML and XML escape, at `i`.
fn html_reference(text: &[u8], i: usize) -> Option<(Unit, usize)> {
    if text.get(i + 1) == Some(&b'#') {
        return numeric_reference(text, i);
    }
    let window = &text[i..text.len().min(i + 12)];
    let end = i + window.iter().position(|&b| b == b';')?;
    let name = &text[i + 1..end];
    let c = match name {
        b"amp" => '&',
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        // HTML5 names of the characters keys hold.
        b"sol" => '/',
        b"plus" => '+',
        b"equals" => '=',
        b"colon" => ':',
        b"period" => '.',
        b"comma" => ',',
        b"lowbar" => '_',
        b"hyphen" | b"dash" => '-',
        b"num" => '#',
        b"percnt" => '%',
        b"commat" => '@',
        b"excl" => '!',
        b"quest" => '?',
        b"ast" => '*',
        b"dollar" => '$',
        b"bsol" => '\\',
        b"Tab" => '\t',
        _ => return None,
    };
    Some((Unit::Char(c), end + 1))
}

/// `&#NN;` or `&#xHH;` at `i`, its `;` optional (browsers read `&#47`):
/// at most 8 digits.
fn numeric_reference(text: &[u8], i: usize) -> Option<(Unit, usize)> {
    let (hex, start) = match text.get(i + 2) {
        Some(b'x' | b'X') => (true, i + 3),
        _ => (false, i + 2),
    };
    let digit = |b: &u8| {
        if hex {
            b.is_ascii_hexdigit()
        } else {
            b.is_ascii_digit()
        }
    };
    let len = text.get(start..)?.iter().take_while(|b| digit(b)).count();
    if len == 0 || len > 8 {
        return None;
    }
    let digits = std::str::from_utf8(&text[start..start + len]).ok()?;
    let code = u32::from_str_radix(digits, if hex { 16 } else { 10 }).ok()?;
    let end = start + len;
    let end = if text.get(end) == Some(&b';') {
        end + 1
    } else {
        end
    };
    Some((Unit::Char(char::from_u32(code)?), end))
}

/// The value of a non-empty run of at most 8 hexadecimal digits.
fn hex_value(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrubbed(text: &str, secret: &str) -> String {
        let spans = secret_spans(text.as_bytes(), &[secret.to_string()]);
        String::from_utf8(replace_spans(text.as_bytes(), &spans)).unwrap()
    }

    /// Every character of `s` as a JSON `\uXXXX` escape.
    fn all_u_escaped(s: &str) -> String {
        s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
    }

    #[test]
    fn a_secret_is_found_in_every_escaping_a_server_may_quote_it_in() {
        let key = "sk-Aq/7+Zr=ü😀-x";
        let forms = [
            // PHP's json_encode.
            r"sk-Aq\/7+Zr=ü😀-x".to_string(),
            // Go's encoder, and a server escaping everything.
            r"sk\u002dAq/7\u002bZr=\u00fc\ud83d\ude00-x".to_string(),
            all_u_escaped(key),
            all_u_escaped(key)
                .to_ascii_uppercase()
                .replace("\\U", "\\u"),
            // Escaped again inside another string, twice.
            r"sk-Aq\\/7+Zr=ü😀-x".to_string(),
            r"sk\\\\u002dAq\\\\/7+Zr=ü\\ud83d\\ude00-x".to_string(),
            // Rust's debug form, percent-encoding, HTML references.
            r"sk-Aq/7+Zr=\u{fc}\u{1f600}-x".to_string(),
            "sk-Aq%2F7%2BZr%3D%C3%BC%F0%9F%98%80-x".to_string(),
            "sk-Aq&#47;7&#x2b;Zr&#61;&#252;&#x1F600;-x".to_string(),
            // Letter case of the ASCII letters.
            r"SK-AQ\/7+ZR=ü😀-X".to_string(),
        ];
        for form in forms {
            let text = format!("{{\"error\": \"bad key {form}!\"}}");
            assert_eq!(
                scrubbed(&text, key),
                "{\"error\": \"bad key [redacted]!\"}",
                "{form}"
            );
        }
    }

    #[test]
    fn text_without_the_secret_is_left_alone() {
        for text in [
            r"C:\\users\\new\\file 100% &amp; done \u00fc \ud800 &#xZZ; %zz \",
            "",
            "%",
            "&#;",
            r"\u{110000} \u{} \uDC00\u0041",
        ] {
            assert!(secret_spans(text.as_bytes(), &["sk-none-here".into()]).is_empty());
        }
    }

    #[test]
    fn spans_of_several_secrets_are_merged() {
        let secrets = vec!["sk-one/two".to_string(), "two-three".to_string()];
        let text = r"x sk-one\/two-three y";
        let spans = secret_spans(text.as_bytes(), &secrets);
        assert_eq!(spans, vec![(2, 19)]);
        assert_eq!(
            String::from_utf8(replace_spans(text.as_bytes(), &spans)).unwrap(),
            "x [redacted] y"
        );
    }

    #[test]
    fn escapes_at_the_very_end_and_in_other_notations_are_decoded() {
        let key = "sk-Aq/7+Zr-x";
        for form in [
            r"sk-Aq/7+Zr\u{2d}x",
            r"sk\x2dAq\x2f7\x2bZr-x",
            "sk-Aq&sol;7&plus;Zr&hyphen;x",
        ] {
            assert_eq!(
                scrubbed(&format!("key {form}"), key),
                "key [redacted]",
                "{form}"
            );
        }
        // The escape is the last thing in the text.
        assert_eq!(
            scrubbed(r"key sk-Aq/7+Zr\u{2d}", "sk-Aq/7+Zr-"),
            "key [redacted]"
        );
    }

    #[test]
    fn an_encoding_applied_twice_or_three_times_is_read() {
        let key = "Zq9/Sec+ret=Val-ue_42";
        for form in [
            "Zq9%252FSec%252Bret%253DVal-ue_42",
            "Zq9%25252FSec+ret=Val-ue_42",
            "Zq9&amp;#47;Sec&amp;#43;ret=Val-ue_42",
            "Zq9&#37;2FSec+ret=Val-ue_42",
            "Zq9&#47Sec&#43ret&#61Val-ue_42",
            "Zq9&sol;Sec&plus;ret&equals;Val-ue_42",
        ] {
            assert_eq!(
                scrubbed(&format!("<{form}>"), key),
                "<[redacted]>",
                "{form}"
            );
        }
    }

    #[test]
    fn a_secret_holding_what_reads_as_an_escape_is_found_escaped_again() {
        // A URL with a percent-encoded password, echoed PHP-style.
        let url = "postgres://app:p%40ss-w0rd@db/prod";
        let echoed = r"error: postgres:\/\/app:p%40ss-w0rd@db\/prod refused";
        assert_eq!(scrubbed(echoed, url), "error: [redacted] refused");
        // A literal backslash-n in a password, escaped twice.
        let password = r"pw\nX-9zz";
        for form in [r"pw\\nX-9zz", r"pw\\\\nX-9zz"] {
            assert_eq!(
                scrubbed(&format!("[{form}]"), password),
                "[[redacted]]",
                "{form}"
            );
        }
    }

    #[test]
    fn values_too_short_to_be_secrets_are_left_in_escaped_text() {
        let spans = secret_spans(b"abc &amp; abc", &["abc".to_string()]);
        assert!(spans.is_empty(), "{spans:?}");
    }

    #[test]
    fn the_escaped_beginning_of_a_cut_secret_is_found() {
        let secrets = vec!["sk-proj/Ab+9=http-5151".to_string()];
        let text = r"error: sk-proj\/Ab+9=ht";
        let start = cut_secret_start(text.as_bytes(), &secrets).unwrap();
        assert_eq!(&text[start..], r"sk-proj\/Ab+9=ht");
        assert_eq!(
            cut_secret_start(b"error: sk-p", &secrets),
            None,
            "too short"
        );
        assert_eq!(cut_secret_start(br"error: \/ plain", &secrets), None);
    }

    #[test]
    fn hostile_escapes_do_not_panic() {
        let secrets = vec!["secret-value".to_string()];
        for text in [
            "\\".repeat(10_000),
            "%".repeat(3) + "%f",
            "&#".to_string() + &"9".repeat(30) + ";",
            "\\u{ffffffff}\\uD83D\\u".into(),
            "\\ud83d".into(),
            "&#x;&#x110000;".into(),
        ] {
            let _ = secret_spans(text.as_bytes(), &secrets);
        }
    }
}
