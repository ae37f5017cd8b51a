//! Run directories, atomic JSON writes (whole values, or packets streamed
//! element by element) and timestamps.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::eval::EvalError;

/// `runs/<sortable id>/` under the records root (`<workspace>/.cautilus`
/// unless the project's config names another).
pub fn new_run_dir(records: &Path) -> PathBuf {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (date, time) = utc(now.as_secs());
    // Sorts by time; the suffix keeps two runs started in the same millisecond apart.
    let id = format!(
        "{}T{}{:03}Z-{:04x}",
        date.replace('-', ""),
        time.replace(':', ""),
        now.subsec_millis(),
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    );
    records.join("runs").join(id)
}

/// The current time as RFC 3339 (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (date, time) = utc(now.as_secs());
    format!("{date}T{time}.{:03}Z", now.subsec_millis())
}

/// Milliseconds since the Unix epoch of a UTC timestamp as
/// [`now_rfc3339`] writes it (`2026-11-26T23:47:10.123Z`, fraction
/// optional); `None` for anything else.
pub fn rfc3339_millis(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let number = |s: &str, len: usize| -> Option<i64> {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut parts = date.split('-');
    let (year, month, day) = (
        number(parts.next()?, 4)?,
        number(parts.next()?, 2)?,
        number(parts.next()?, 2)?,
    );
    let (clock, fraction) = match time.split_once('.') {
        Some((_, "")) => return None,
        Some(split) => split,
        None => (time, ""),
    };
    let mut parts = clock.split(':');
    let (hour, minute, second) = (
        number(parts.next()?, 2)?,
        number(parts.next()?, 2)?,
        number(parts.next()?, 2)?,
    );
    if parts.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let millis = match fraction.len() {
        0 => 0,
        1..=9 if fraction.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{fraction:0<3}")[..3].parse::<i64>().ok()?
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(((days * 86_400 + hour * 3600 + minute * 60 + second) * 1000) + millis)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm),
/// the inverse of [`utc`]'s date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (`YYYY-MM-DD`, `HH:MM:SS`) of a Unix time, proleptic Gregorian, UTC.
fn utc(secs: u64) -> (String, String) {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{:02}:{:02}:{:02}", rem / 3600, (rem % 3600) / 60, rem % 60),
    )
}

/// The directories cautilus makes itself under a records root.
const TOOL_DIRS: &[&str] = &["runs", "cassettes", "baselines"];

/// Refuses a records root, or a directory cautilus makes in it (`runs`,
/// `cassettes`, `baselines`), that is a symbolic link: the default root
/// `.cautilus` lies in the repository, where a pull request can commit a
/// link that would lead the run's records, cassettes and baselines
/// elsewhere (and read cassettes from there). Checked before anything is
/// read or written there.
pub fn refuse_linked_records_root(root: &Path) -> Result<(), EvalError> {
    let is_link =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let linked = std::iter::once(root.to_path_buf())
        .chain(TOOL_DIRS.iter().map(|dir| root.join(dir)))
        .find(|path| is_link(path));
    match linked {
        Some(path) => Err(EvalError::Input {
            message: format!(
                "{} is a symbolic link (to {}); cautilus makes its records directories itself and never writes or reads them through a link: remove the link, or name another records directory in cautilus.toml (`dir`)",
                crate::term::inline(&path.display().to_string()),
                crate::term::inline(
                    &std::fs::read_link(&path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default()
                )
            ),
            path,
        }),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` atomically (temp file in the same directory +
/// rename), creating the directory; scrubbed of the process's secrets
/// ([`crate::secrets`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    write_atomically(path, &crate::secrets::scrub_granted_bytes(bytes))
}

/// Writes `bytes` as they are to `path` atomically, creating the directory.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    write_streamed(path, |out| out.write_all(bytes))
}

/// Writes `path` atomically, creating the directory: `fill` writes the
/// content (buffered) into a temporary file beside it, which replaces
/// `path` only when all of it is written.
pub fn write_streamed(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), EvalError> {
    let error = |source| EvalError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(error)?;
    let file = tempfile::NamedTempFile::new_in(dir).map_err(error)?;
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, file);
    fill(&mut out).map_err(error)?;
    let file = out.into_inner().map_err(|e| error(e.into_error()))?;
    file.persist(path).map_err(|e| error(e.error))?;
    Ok(())
}

/// Writes `value` as pretty JSON to `path` atomically (temp file + rename),
/// streaming it through a buffered writer.
pub fn write_json(path: &Path, value: &Value) -> Result<(), EvalError> {
    // Scrubbed as JSON (string by string), so it stays JSON.
    let scrubbed = crate::secrets::scrubbed_value(value);
    let value = scrubbed.as_ref().unwrap_or(value);
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| EvalError::Write {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    text.push(b'\n');
    // Already scrubbed as JSON: scrubbing its bytes again could break it
    // (a secret that is also a JSON token).
    write_atomically(path, &text)
}

/// A packet written as it is produced: the header fields, then one list
/// element per line as they arrive, then trailer fields. It is written to
/// `<name>.partial` beside its path and appears (atomically, by rename)
/// only when [`PacketWriter::finish`] succeeds, so a failed run never
/// leaves a truncated record; an unfinished writer removes its partial
/// file when dropped (a killed process leaves it for `--resume` to clean).
pub struct PacketWriter {
    path: PathBuf,
    partial: PathBuf,
    out: Option<BufWriter<File>>,
    first: bool,
    elements: u64,
    /// Paths redacted in each element before it is written.
    redaction: crate::eval::redact::Redaction,
}

/// The in-progress file of a record at `path`.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

impl PacketWriter {
    /// Starts `path` with `header`'s fields and opens the list `list_key`.
    pub fn create(
        path: &Path,
        header: &Map<String, Value>,
        list_key: &str,
    ) -> Result<Self, EvalError> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let error = |source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(error)?;
        let partial = partial_path(path);
        let file = File::create(&partial).map_err(error)?;
        let mut writer = Self {
            path: path.to_path_buf(),
            partial,
            out: Some(BufWriter::with_capacity(256 * 1024, file)),
            first: true,
            elements: 0,
            redaction: crate::eval::redact::Redaction::default(),
        };
        writer.write(b"{\n")?;
        for (key, value) in header {
            writer.field(key, value)?;
            writer.write(b",\n")?;
        }
        let key = Value::String(list_key.to_string()).to_string();
        writer.write(format!("  {key}: [").as_bytes())?;
        Ok(writer)
    }

    /// Redacts `redaction`'s paths in every element pushed from now on.
    pub fn with_redaction(mut self, redaction: crate::eval::redact::Redaction) -> Self {
        self.redaction = redaction;
        self
    }

    /// Elements written so far.
    pub fn len(&self) -> u64 {
        self.elements
    }

    pub fn is_empty(&self) -> bool {
        self.elements == 0
    }

    /// Appends one element: `json` must be one JSON value (checked, so a
    /// plugin can never corrupt a record).
    pub fn push(&mut self, json: &str) -> Result<(), EvalError> {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(json) {
            return Err(EvalError::Input {
                path: self.path.clone(),
                message: format!(
                    "a plugin produced an element that is not JSON ({e}); it was not written"
                ),
            });
        }
        self.push_checked(json)
    }

    /// Appends one element the host knows is one JSON value (text it built
    /// from parsed JSON), without checking it again.
    pub(in crate::eval) fn push_checked(&mut self, json: &str) -> Result<(), EvalError> {
        debug_assert!(serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok());
        let redacted = self.redaction.apply_text(json);
        let json = crate::secrets::scrub_granted_json(redacted.as_deref().unwrap_or(json));
        let separator: &[u8] = if self.first { b"\n    " } else { b",\n    " };
        self.first = false;
        self.elements += 1;
        self.write(separator)?;
        self.write(json.as_bytes())
    }

    /// Closes the list, writes `trailer`'s fields and moves the file into place.
    pub fn finish(mut self, trailer: &Map<String, Value>) -> Result<(), EvalError> {
        let close: &[u8] = if self.first { b"]" } else { b"\n  ]" };
        self.write(close)?;
        for (key, value) in trailer {
            self.write(b",\n")?;
            self.field(key, value)?;
        }
        self.write(b"\n}\n")?;
        let error = |path: &Path, source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        };
        let out = self.out.take().expect("open until finished");
        out.into_inner()
            .map_err(|e| error(&self.path, e.into_error()))?;
        std::fs::rename(&self.partial, &self.path).map_err(|e| error(&self.path, e))?;
        Ok(())
    }

    /// `  "key": value`.
    fn field(&mut self, key: &str, value: &Value) -> Result<(), EvalError> {
        let key = Value::String(key.to_string()).to_string();
        let value = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
        let value = crate::secrets::scrub_granted_json(&value);
        let key = crate::secrets::scrub_granted_json(&key);
        self.write(format!("  {key}: {value}").as_bytes())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), EvalError> {
        let out = self.out.as_mut().expect("open until finished");
        out.write_all(bytes).map_err(|source| EvalError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

impl Drop for PacketWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_read_back_to_the_millisecond() {
        use super::rfc3339_millis;
        let now = super::now_rfc3339();
        let millis = rfc3339_millis(&now).expect("our own format parses");
        let expected = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!((expected - millis).abs() < 60_000, "{now} -> {millis}");
        assert_eq!(rfc3339_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_millis("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            rfc3339_millis("2000-03-01T00:00:00.000Z"),
            Some(951_868_800_000)
        );
        assert_eq!(
            rfc3339_millis("2026-11-26T23:47:10.123Z"),
            Some(1_795_736_830_123)
        );
        for bad in [
            "",
            "2026-11-26",
            "2026-11-26T23:47:10",
            "2026-11-26T23:47:10+01:00",
            "2026-13-26T23:47:10Z",
            "2026-11-26T24:00:00Z",
            "2026-11-26T23:47:10.Z",
            "2026-11-26T23:47:10.12a4Z",
            "२०२६-11-26T23:47:10Z",
            "2026-11-26T23:47:10:00Z",
            "+026-11-26T23:47:10Z",
        ] {
            assert_eq!(rfc3339_millis(bad), None, "{bad}");
        }
    }

    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(utc(0), ("1970-01-01".into(), "00:00:00".into()));
        assert_eq!(utc(951_782_400), ("2000-02-29".into(), "00:00:00".into()));
        assert_eq!(utc(1_795_351_023), ("2026-11-22".into(), "12:37:03".into()));
    }

    #[test]
    fn run_ids_sort_by_time() {
        let dir = new_run_dir(Path::new("/w/.cautilus"));
        let id = dir.file_name().unwrap().to_str().unwrap();
        assert!(dir.starts_with("/w/.cautilus/runs"));
        assert_eq!(id.len(), "20261122T121412316Z-6603".len(), "{id}");
        assert_eq!(&id[8..9], "T");
        assert_eq!(&id[18..20], "Z-", "{id}");
    }

    #[test]
    fn packets_stream_to_valid_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("packet.json");
        let mut header = Map::new();
        header.insert("schemaVersion".into(), "x.v1".into());
        let mut writer = PacketWriter::create(&path, &header, "cases").unwrap();
        assert!(!path.exists(), "nothing appears before finish");
        assert!(
            partial_path(&path).exists(),
            "the partial file is where a resume looks"
        );
        writer.push(r#"{"caseId":"a"}"#).unwrap();
        writer.push(r#"{"caseId":"b","n":[1,2]}"#).unwrap();
        assert!(writer.push("{not json").is_err());
        let mut trailer = Map::new();
        trailer.insert("recommendation".into(), "accept-now".into());
        writer.finish(&trailer).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["schemaVersion"], "x.v1");
        assert_eq!(value["cases"][1]["n"][1], 2);
        assert_eq!(value["cases"].as_array().unwrap().len(), 2);
        assert_eq!(value["recommendation"], "accept-now");

        let empty = dir.path().join("empty.json");
        PacketWriter::create(&empty, &Map::new(), "evaluations")
            .unwrap()
            .finish(&Map::new())
            .unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&empty).unwrap()).unwrap();
        assert_eq!(value["evaluations"], serde_json::json!([]));

        let dropped = dir.path().join("dropped.json");
        drop(PacketWriter::create(&dropped, &Map::new(), "evaluations").unwrap());
        assert!(
            !dropped.exists() && !partial_path(&dropped).exists(),
            "nothing is left"
        );
    }

    #[test]
    fn writes_are_atomic_and_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/out.json");
        write_json(&path, &serde_json::json!({"a": 1})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["a"], 1);
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1,
            "no temp files left"
        );
    }
}
