//! The web app's files, embedded in the binary (`include_str!`): the page,
//! one ES module per view and the shared helpers, the styles. A request
//! names one of them by its name in [`FILES`]; no request ever names a
//! path on disk. No CDN, no framework, no build step: the scripts put
//! every piece of record text into the page with `textContent` (never
//! `innerHTML`), and the page's CSP runs only these files.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("assets/index.html");

/// `(name, content type, text)` of every file under `/assets/`.
const FILES: &[(&str, &str, &str)] = &[
    ("app.css", CSS, include_str!("assets/app.css")),
    ("app.js", JS, include_str!("assets/app.js")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("chart.js", JS, include_str!("assets/chart.js")),
    ("diff.js", JS, include_str!("assets/diff.js")),
    ("suites.js", JS, include_str!("assets/suites.js")),
    ("history.js", JS, include_str!("assets/history.js")),
    ("run.js", JS, include_str!("assets/run.js")),
    ("compare.js", JS, include_str!("assets/compare.js")),
    ("cell.js", JS, include_str!("assets/cell.js")),
    ("live.js", JS, include_str!("assets/live.js")),
];

const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

fn file(content_type: &'static str, text: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        text,
    )
        .into_response()
}

/// `/`: the page.
pub async fn index() -> Response {
    file("text/html; charset=utf-8", INDEX)
}

/// `/assets/<name>`.
pub async fn asset(Path(name): Path<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, text)) => file(content_type, text),
        None => not_found().await,
    }
}

/// Anything else.
pub async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        "not found: this server answers / (the app), /assets/<its own files> and /api/… (docs/serve.md)\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_only_its_own_files_and_never_writes_markup() {
        // Every module the page or a module imports is embedded.
        for (name, _, text) in FILES {
            for import in text.lines().filter_map(|l| l.split("from \"./").nth(1)) {
                let target = import.split('"').next().unwrap();
                assert!(
                    FILES.iter().any(|(n, _, _)| *n == target),
                    "{name} imports {target}, which is not embedded"
                );
            }
            for banned in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
                "new Function",
                "http://",
                "https://",
            ] {
                let allowed = banned == "http://" && text.contains("http://www.w3.org/2000/svg");
                let count = text.matches(banned).count();
                let svg = if allowed {
                    text.matches("http://www.w3.org/2000/svg").count()
                } else {
                    0
                };
                assert_eq!(count, svg, "{name} uses {banned}");
            }
        }
        assert!(INDEX.contains("src=\"/assets/app.js\""));
        assert!(
            !INDEX.contains("<style") && !INDEX.contains("style=") && !INDEX.contains("<script>")
        );
    }
}
