//! Reports people and CI systems read, made from a run's records: a
//! self-contained HTML page ([`html`]), JUnit XML ([`junit`]) and a
//! Markdown summary ([`markdown`]), all from one [`model::Report`]; and
//! two runs compared, verdict by verdict ([`diff`], `eval compare`).

mod case_rows;
pub mod diff;
pub mod html;
pub mod junit;
mod load;
pub mod markdown;
pub mod model;
mod outline;
mod outline_visitors;

use std::path::{Path, PathBuf};

pub use case_rows::safe_join;
pub use load::load;
pub use model::Report;
pub use outline::{CellOutline, Outline, outline, suite_of, typed_outline};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("cannot render the report: {0}")]
    Render(String),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Junit,
    Markdown,
}

/// Renders `report` as `format`.
pub fn render(report: &Report, format: Format) -> Result<String, ReportError> {
    Ok(match format {
        Format::Html => html::render(report)?,
        Format::Junit => junit::render(report),
        Format::Markdown => markdown::render(report),
    })
}

/// Writes `report` as `format` to `path`, atomically.
pub fn write(report: &Report, format: Format, path: &Path) -> Result<(), ReportError> {
    write_text(path, &render(report, format)?)
}

/// Writes a rendered report to `path`, atomically, readable by all.
pub fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    let error = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    crate::eval::files::write_bytes(path, text.as_bytes())
        .map_err(|e| error(std::io::Error::other(e.to_string())))?;
    // A report is for sharing (a CI artifact, a web page): readable by
    // all, unlike the private temporary file it was renamed from.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).map_err(error)?;
    }
    Ok(())
}
