//! Whether a streamed case source may set a host-owned case field
//! (`trials`, `tags`, `skip`, `only`) without parsing it: a case file that
//! never names one as a key is not read for them, so a suite of a million
//! cases is read only by its run.

use memchr::memmem::Finder;

use crate::fixture::CaseSource;
use crate::fixture::case_fields;
use crate::fixture::stream::Format;

/// Whether any case of `source` may set a host-owned field. Conservative:
/// `true` unless a scan of the file shows that none does.
pub fn may_set_case_fields(source: &CaseSource) -> bool {
    let CaseSource::Streamed(streamed) = source else {
        return true;
    };
    let Ok(mut file) = streamed.file() else {
        return true; // the run names the problem
    };
    // In JSON a field name is always quoted (`"only"`) and followed by a
    // colon, so a word in a case's text does not count; a CSV header names
    // its columns bare.
    let json = streamed.format != Format::Csv;
    let needles: Vec<String> = case_fields::KEYS
        .iter()
        .map(|key| {
            if json {
                format!("\"{key}\"")
            } else {
                (*key).to_string()
            }
        })
        .collect();
    // A chunk at a time, each starting with the previous chunk's last few
    // bytes, so a name split across two reads is still found.
    const CHUNK: usize = 1 << 20;
    let overlap = needles.iter().map(String::len).max().unwrap_or(0);
    let finders: Vec<_> = needles.iter().map(Finder::new).collect();
    // A small file gets a buffer of its size (a megabyte zeroed for a
    // 2-case fixture was a twentieth of a run's start-up).
    let size = file
        .metadata()
        .map_or(CHUNK, |meta| usize::try_from(meta.len()).unwrap_or(CHUNK))
        .clamp(1, CHUNK);
    let mut buffer = vec![0u8; size + overlap];
    let mut kept = 0;
    loop {
        let read = match std::io::Read::read(&mut file, &mut buffer[kept..]) {
            Ok(0) => return false,
            Ok(read) => read,
            Err(_) => return true,
        };
        let filled = kept + read;
        if finders
            .iter()
            .any(|finder| names_a_key(&buffer[..filled], finder, json))
        {
            return true;
        }
        kept = overlap.min(filled);
        buffer.copy_within(filled - kept..filled, 0);
        // The file was larger than it said (it grew): full-sized reads.
        if filled == buffer.len() && buffer.len() < CHUNK + overlap {
            buffer.resize(CHUNK + overlap, 0);
        }
    }
}

/// Whether `hay` holds the finder's name; in JSON only as an object key:
/// its opening quote not escaped (`\"tags"` is the end of a string's text)
/// and a `:` next after blanks. A match whose backslashes or colon may lie
/// outside `hay` (the previous or next chunk) counts.
fn names_a_key(hay: &[u8], finder: &Finder<'_>, json: bool) -> bool {
    if !json {
        return finder.find(hay).is_some();
    }
    for at in finder.find_iter(hay) {
        let backslashes = hay[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes == at {
            return true; // they may go on in the previous chunk
        }
        if backslashes % 2 == 1 {
            continue; // an escaped quote: text inside a string
        }
        let after = &hay[at + finder.needle().len()..];
        match after.iter().find(|b| !b.is_ascii_whitespace()) {
            None | Some(b':') => return true,
            Some(_) => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(hay: &str) -> bool {
        names_a_key(hay.as_bytes(), &Finder::new("\"tags\""), true)
    }

    #[test]
    fn only_a_quoted_name_used_as_a_key_counts_in_json() {
        assert!(keyed(r#"[{"id": 1, "tags" : ["a"]}]"#));
        assert!(keyed(r#"[{"id": 1, "x": {"tags":1}}]"#));
        // The end of a string's text, a value, a word.
        assert!(!keyed(r#"[{"input": "{\"id\": 1, \"tags"}]"#));
        assert!(!keyed(r#"[{"input": "tags", "x": ["tags"]}]"#));
        assert!(!keyed(r#"[{"input": "the tags: a"}]"#));
        // An escaped backslash before a real quote is not an escape.
        assert!(keyed(r#"[{"a": "\\\\", "tags": 1}]"#));
    }

    #[test]
    fn a_match_cut_by_a_chunk_edge_counts() {
        assert!(keyed(r#""tags""#)); // nothing after it in this chunk
        assert!(keyed(r#""tags"   "#));
        assert!(!keyed(r#"x\"tags", 1"#));
        assert!(!keyed(r#"x\\\"tags","#));
        // At the start of a chunk its backslashes may be in the previous one.
        assert!(keyed(r#""tags", 1"#));
    }

    #[test]
    fn csv_headers_name_columns_bare() {
        assert!(names_a_key(b"id,tags,input", &Finder::new("tags"), false));
    }

    fn scanned(text: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cases.jsonl");
        std::fs::write(&path, text).unwrap();
        may_set_case_fields(&CaseSource::Streamed(
            crate::fixture::stream::StreamedCases {
                path,
                format: Format::Jsonl,
                key: String::new(),
                contained: None,
            },
        ))
    }

    #[test]
    fn files_of_every_size_are_scanned_whole_and_across_read_edges() {
        assert!(!scanned(""));
        assert!(!scanned("{\"input\": \"a\"}\n"));
        assert!(scanned("{\"input\": \"a\", \"skip\": true}\n"));
        // Past the first megabyte, and cut by its edge at every offset.
        let filler = format!("{{\"input\": \"{}\"}}\n", "x".repeat((1 << 20) - 20));
        assert!(!scanned(&format!("{filler}{filler}")));
        for cut in 0..8 {
            let line = "{\"tags\": [\"a\"]}\n";
            let pad = (1 << 20) - filler.len().min(1 << 20) + cut;
            let text = format!("{filler}{}{line}", " ".repeat(pad));
            assert!(scanned(&text), "cut at {cut}");
        }
    }
}
