//! Run directories, atomic JSON writes and timestamps.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::EvalError;

/// `.cautilus/runs/<sortable id>/` under `base`.
pub fn new_run_dir(base: &Path) -> PathBuf {
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
    base.join(".cautilus").join("runs").join(id)
}

/// The current time as RFC 3339 (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (date, time) = utc(now.as_secs());
    format!("{date}T{time}.{:03}Z", now.subsec_millis())
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

/// Writes `value` as pretty JSON to `path` atomically (temp file + rename),
/// streaming it through a buffered writer.
pub fn write_json(path: &Path, value: &Value) -> Result<(), EvalError> {
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
    let mut writer = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut writer, value).map_err(|e| error(e.into()))?;
    writer.write_all(b"\n").map_err(error)?;
    let file = writer.into_inner().map_err(|e| error(e.into_error()))?;
    file.persist(path).map_err(|e| error(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(utc(0), ("1970-01-01".into(), "00:00:00".into()));
        assert_eq!(utc(951_782_400), ("2000-02-29".into(), "00:00:00".into()));
        assert_eq!(utc(1_795_351_023), ("2026-11-22".into(), "12:37:03".into()));
    }

    #[test]
    fn run_ids_sort_by_time() {
        let dir = new_run_dir(Path::new("/w"));
        let id = dir.file_name().unwrap().to_str().unwrap();
        assert!(dir.starts_with("/w/.cautilus/runs"));
        assert_eq!(id.len(), "20261122T121412316Z-6603".len(), "{id}");
        assert_eq!(&id[8..9], "T");
        assert_eq!(&id[18..20], "Z-", "{id}");
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
