//! Text printed to a terminal.
//!
//! Much of what the CLI prints is written by others: suite and case ids,
//! display names, summaries and details come from fixtures, servers,
//! graders and plugins; errors quote them, and paths name their files. A
//! terminal acts on control characters in that text: an OSC sequence sets
//! the window title or a hyperlink, `ESC [ 2K` and a carriage return erase
//! a line so the next text forges one, a newline starts a line that looks
//! like a case's `PASS` line, C1 controls act as their `ESC` forms on some
//! terminals, and bidi overrides reorder what is shown. So every such
//! character of a user-controlled string is printed escaped, in the
//! notation of Rust's `{:?}` (`\u{1b}`, `\r`, `\n`) in which answers are
//! already quoted in summaries; a granted secret is scrubbed too
//! ([`crate::secrets`]).
//!
//! - [`inline`]: a string that sits within one line (an id, a name, a
//!   summary, a path): every control, newlines too, is escaped;
//! - [`lines`]: a message whose line breaks are ours: `\n` is kept;
//! - [`shown`]: any `Display` value, escaped as [`inline`] (and padded as
//!   the format asks); [`term_println!`](crate::term_println) and
//!   [`term_eprintln!`](crate::term_eprintln): a whole printed line so;
//! - [`json`]: JSON text for `--json`: serde_json escapes C0 controls, this
//!   escapes what it leaves raw (DEL, C1, bidi controls, line separators)
//!   as `\uXXXX`, so the JSON means the same and shows safely;
//!   [`copy_json`] does so line by line for a record copied to stdout.

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, Write};

/// Characters never printed raw: C0 controls (ESC, BEL, CR, BS, LF, …),
/// DEL, C1 controls (U+0080–U+009F), the bidi marks, embeddings, overrides
/// and isolates (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), the
/// Unicode line and paragraph separators, and the characters that show as
/// nothing (zero-width spaces and joiners, the soft hyphen, word joiners
/// and invisible operators, Hangul fillers, the byte order mark, tags), so
/// two ids that differ only by them never print alike.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` for one line of a terminal: every unsafe character (newlines
/// too) escaped, granted secrets scrubbed. Borrowed when nothing changes.
pub fn inline(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// `text` whose line breaks are ours (an error listing its problems): `\n`
/// is kept, every other unsafe character escaped, secrets scrubbed.
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

fn escaped(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let text = crate::secrets::scrub_granted(text);
    // Printable ASCII needs nothing: the common case costs one scan.
    let clean = |b: &u8| (0x20..0x7f).contains(b) || (keep_newlines && *b == b'\n');
    if text.as_bytes().iter().all(clean)
        || !text
            .chars()
            .any(|c| is_unsafe(c) && !(keep_newlines && c == '\n'))
    {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// An id read from a file (a case id a journal holds), for a message: its
/// first 80 characters, `{:?}`-escaped (on one line), `…` when cut.
pub fn short_id(id: &str) -> String {
    let mut text: String = id
        .chars()
        .take(80)
        .collect::<String>()
        .escape_debug()
        .collect();
    if id.chars().count() > 80 {
        text.push('…');
    }
    text
}

/// A value shown on a terminal: its `Display`, escaped as [`inline`], then
/// padded as the format asks (`{:<16}`).
pub struct Shown<T>(pub T);

/// `value`'s `Display`, escaped as [`inline`] when formatted.
pub fn shown<T: fmt::Display>(value: T) -> Shown<T> {
    Shown(value)
}

impl<T: fmt::Display> fmt::Display for Shown<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        f.pad(&inline(&text))
    }
}

/// JSON text (serde_json's) safe on a terminal: the characters serde_json
/// leaves raw that a terminal would act on become `\uXXXX` escapes (they
/// only occur inside strings, where an escape means the same character),
/// and granted secrets are scrubbed (as JSON, so it stays JSON).
pub fn json(text: &str) -> Cow<'_, str> {
    let text = crate::secrets::scrub_granted_json(text);
    // Raw C0 characters in serde_json's text are whitespace between
    // tokens (it escapes those inside strings): they stay.
    let escape = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t');
    if (text.is_ascii() && !text.as_bytes().contains(&0x7f)) || !text.chars().any(escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `println!` for a line that holds others' text: the whole line is
/// escaped as [`inline`] (it stays one line whatever it quotes).
#[macro_export]
macro_rules! term_println {
    ($($arg:tt)*) => {
        $crate::outln!("{}", $crate::term::inline(&format!($($arg)*)))
    };
}

/// `println!` that never panics: when stdout is closed early (`cautilus
/// eval test … | head`), the line is dropped and the run goes on to write
/// its records, where `println!` would panic with a broken pipe.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::term::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::term::write_line(format_args!($($arg)*))
    };
}

/// Writes one line to stdout; an error (a closed pipe) drops it
/// ([`outln!`](crate::outln)).
pub fn write_line(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// `eprintln!` for a line that holds others' text, escaped as
/// [`term_println!`](crate::term_println) escapes it.
#[macro_export]
macro_rules! term_eprintln {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::term::inline(&format!($($arg)*)))
    };
}

/// Copies a JSON record (a packet file) to `out` line by line, each made
/// safe as [`json`] makes it.
pub fn copy_json(from: &mut impl BufRead, out: &mut (impl Write + ?Sized)) -> std::io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if from.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&line);
        out.write_all(json(&text).as_bytes())?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hostile text, one member of the family each.
    const HOSTILE: &[&str] = &[
        "\u{1b}]0;title\u{7}",
        "\u{1b}[2K\rPASS  forged",
        "a\nPASS b",
        "\r\n",
        "\u{8}\u{7f}",
        "\u{9b}2K\u{85}\u{9c}",
        "\u{202e}abc\u{202c}\u{2066}\u{2069}\u{200f}\u{61c}",
        "\u{2028}\u{2029}",
        "\t",
    ];

    #[test]
    fn inline_text_holds_no_control_and_no_line_break() {
        for text in HOSTILE {
            let shown = inline(text);
            assert!(!shown.chars().any(is_unsafe), "{text:?} → {shown:?}");
            assert_eq!(shown.lines().count(), 1, "{shown:?}");
        }
        assert_eq!(
            inline("id\u{1b}]0;t\u{7}\r\nx\u{202e}"),
            "id\\u{1b}]0;t\\u{7}\\r\\nx\\u{202e}"
        );
        // Invisible characters show as their escapes: `a` and `a\u{feff}`
        // never print alike.
        for invisible in [
            '\u{feff}',
            '\u{2060}',
            '\u{ad}',
            '\u{3164}',
            '\u{e0041}',
            '\u{200b}',
        ] {
            let id = format!("a{invisible}");
            assert_ne!(inline(&id), "a", "{invisible:?}");
            assert!(inline(&id).is_ascii(), "{invisible:?}");
        }
    }

    #[test]
    fn plain_text_is_borrowed_and_unchanged() {
        for text in [
            "plain ascii",
            "ünïcödé — ok ✓",
            "",
            "back\\slash \"quoted\"",
        ] {
            assert!(matches!(inline(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn lines_keep_only_their_line_breaks() {
        assert_eq!(
            lines("3 problems:\n  a: x\u{1b}[2K\r\n  b"),
            "3 problems:\n  a: x\\u{1b}[2K\\r\n  b"
        );
    }

    #[test]
    fn shown_values_are_escaped_then_padded() {
        assert_eq!(format!("[{:<6}]", shown("a\u{7}")), "[a\\u{7}]");
        assert_eq!(format!("[{:<6}]", shown("ab")), "[ab    ]");
        assert_eq!(
            format!("{}", shown(std::path::Path::new("/t/\u{1b}x").display())),
            "/t/\\u{1b}x"
        );
    }

    #[test]
    fn json_stays_the_same_json_and_shows_no_control() {
        for text in HOSTILE {
            let value = serde_json::json!({"id": text, text.to_string(): [text]});
            let printed = serde_json::to_string_pretty(&value).unwrap();
            let safe = json(&printed);
            assert!(!safe.chars().any(|c| is_unsafe(c) && c != '\n'), "{safe:?}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back, value, "{text:?}");
        }
    }
}
