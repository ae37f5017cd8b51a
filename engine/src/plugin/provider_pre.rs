//! A provider component ready to instantiate ([`ProviderPre`]: its
//! `provider-api`, and its optional `provider-needs` and
//! `provider-embed`), and what it says about itself
//! ([`ProviderDescription`]): below both the runtime that loads components
//! and the provider sessions that run them.
//!
//! The declared needs are checked here for shape only (names a variable
//! can have, a URL the host can parse, known generation settings); what a
//! run grants from them is the policy of `eval::provider::setup`.

use wasmtime::Store;
use wasmtime::component::InstancePre;

use super::bindings::provider_api::{self, ProviderInfo};
use super::bindings::provider_embed::{self, Embedder};
use super::bindings::provider_needs::{self, Needs};
use super::bindings::types::PluginInfo;
use super::store_state::StoreState;

/// A provider component ready to instantiate: its `provider-api`, and its
/// `provider-needs` and `provider-embed` when it was built against a
/// contract that has them.
#[derive(Clone)]
pub(crate) struct ProviderPre {
    pre: InstancePre<StoreState>,
    api: provider_api::GuestIndices,
    /// `None`: no `provider-needs` export (a provider built against 0.1.0);
    /// `Some(Err)`: an export this host cannot use (said at `describe`).
    needs: Option<Result<provider_needs::GuestIndices, String>>,
    /// Likewise for `provider-embed` (without it: no embeddings).
    embed: Option<Result<provider_embed::GuestIndices, String>>,
}

/// The interface a provider declares its needs through.
const NEEDS_EXPORT: &str = "cautilus:plugin/provider-needs@0.1.1";

/// The interface a provider gives embeddings through.
const EMBED_EXPORT: &str = "cautilus:plugin/provider-embed@0.1.1";

/// A live provider instance: its `provider-api`, and its `provider-embed`
/// when it has one.
pub(crate) struct ProviderInstance {
    pub(crate) api: provider_api::Guest,
    pub(crate) embed: Option<provider_embed::Guest>,
}

/// What a provider declares besides `describe`, each part checked: a
/// part the host cannot use is an error saying what is wrong with it.
pub(crate) struct Declared {
    pub(crate) needs: Result<Needs, String>,
    pub(crate) embedder: Result<Option<Embedder>, String>,
}

impl ProviderPre {
    pub(crate) fn new(pre: InstancePre<StoreState>) -> wasmtime::Result<Self> {
        let api = provider_api::GuestIndices::new(&pre)?;
        // Absent from providers built against 0.1.0: they declare nothing.
        let needs = pre
            .component()
            .get_export_index(None, NEEDS_EXPORT)
            .map(|_| {
                provider_needs::GuestIndices::new(&pre)
                    .map_err(|e| format!("its `provider-needs` export is unusable: {e:#}"))
            });
        // Absent from providers built against 0.1.0: they have no embeddings.
        let embed = pre
            .component()
            .get_export_index(None, EMBED_EXPORT)
            .map(|_| {
                provider_embed::GuestIndices::new(&pre)
                    .map_err(|e| format!("its `provider-embed` export is unusable: {e:#}"))
            });
        Ok(Self {
            pre,
            api,
            needs,
            embed,
        })
    }

    pub(crate) fn engine(&self) -> &wasmtime::Engine {
        self.pre.engine()
    }

    pub(crate) async fn instantiate_async(
        &self,
        store: &mut Store<StoreState>,
    ) -> wasmtime::Result<ProviderInstance> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        let api = self.api.load(&mut *store, &instance)?;
        let embed = match &self.embed {
            Some(Ok(indices)) => Some(indices.load(&mut *store, &instance)?),
            // Unusable: refused at `describe`, before any session.
            _ => None,
        };
        Ok(ProviderInstance { api, embed })
    }

    /// `describe` and what the provider declares, from one instance. A
    /// trap is the outer error; a declaration the host cannot use is an
    /// inner one (what is wrong with it).
    pub(crate) async fn describe(
        &self,
        store: &mut Store<StoreState>,
    ) -> wasmtime::Result<(ProviderInfo, Declared)> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        let info = self
            .api
            .load(&mut *store, &instance)?
            .call_describe(&mut *store)
            .await?;
        let needs = match &self.needs {
            None => Ok(nothing()),
            Some(Err(why)) => Err(why.clone()),
            Some(Ok(indices)) => match indices.load(&mut *store, &instance) {
                Err(e) => Err(format!(
                    "its `provider-needs` export has the wrong types: {e:#}"
                )),
                Ok(api) => {
                    let needs = api.call_declare(&mut *store).await?;
                    check(&needs).map(|()| needs)
                }
            },
        };
        let embedder = match &self.embed {
            None => Ok(None),
            Some(Err(why)) => Err(why.clone()),
            Some(Ok(indices)) => match indices.load(&mut *store, &instance) {
                Err(e) => Err(format!(
                    "its `provider-embed` export has the wrong types: {e:#}"
                )),
                Ok(api) => Ok(api.call_embeddings(&mut *store).await?),
            },
        };
        Ok((info, Declared { needs, embedder }))
    }
}

/// What a provider that declares nothing needs: nothing.
pub(crate) fn nothing() -> Needs {
    Needs {
        endpoint: None,
        program: None,
        prices: None,
        settings_applied: None,
        stands_in_for: None,
        setup_hint: None,
        runs_suite_program: false,
        calls_suite_service: false,
    }
}

/// What a provider said about itself: `describe`, its declared needs
/// and its embedder (nothing and none for a provider built against 0.1.0).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ProviderDescription {
    pub plugin: PluginInfo,
    /// Recorded on every result, e.g. `fixture-backend`.
    pub harness: String,
    /// `messaging` and/or `workspace`.
    pub modes: Vec<String>,
    pub needs: Needs,
    /// `None`: it gives no embeddings.
    pub embedder: Option<Embedder>,
}

impl ProviderDescription {
    pub(crate) fn new(info: ProviderInfo, needs: Needs, embedder: Option<Embedder>) -> Self {
        Self {
            plugin: info.plugin,
            harness: info.harness,
            modes: info.modes,
            needs,
            embedder,
        }
    }

    /// Whether its calls may reach outside its sandbox: it declares a
    /// model API or a program. The calls of one that declares neither are
    /// computed in the sandbox (the fixture's stand-in vectors).
    pub fn reaches_out(&self) -> bool {
        self.needs.endpoint.is_some() || self.needs.program.is_some()
    }
}

/// Whether `name` can be an environment variable's name the host reads
/// (letters, digits and `_`, not starting with a digit).
fn variable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A plain file or directory name (no separator, not `.` or `..`).
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// Checks the shape of declared needs; the error says which part is wrong.
pub(crate) fn check(needs: &Needs) -> Result<(), String> {
    let bad_variable = |what: &str, name: &str| {
        format!(
            "name `{}` as {what}, which is not a variable name (letters, digits and `_`)",
            crate::term::inline(name)
        )
    };
    if let Some(endpoint) = &needs.endpoint {
        for (what, name) in [
            ("the endpoint's URL variable", &endpoint.url_variable),
            ("the endpoint's key variable", &endpoint.key_variable),
        ]
        .into_iter()
        .chain(
            endpoint
                .stream_variable
                .iter()
                .map(|v| ("the endpoint's stream variable", v)),
        ) {
            if !variable(name) {
                return Err(bad_variable(what, name));
            }
        }
        let url = reqwest::Url::parse(&endpoint.default_url).ok();
        if !url.as_ref().is_some_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some()
                && u.username().is_empty()
        }) {
            return Err(format!(
                "give the default URL `{}`, which is not an http(s) URL with a host",
                crate::term::inline(&endpoint.default_url)
            ));
        }
    }
    if let Some(program) = &needs.program {
        if !plain_name(&program.name) {
            return Err(format!(
                "name the program `{}`, which is not a plain program name (looked up on PATH)",
                crate::term::inline(&program.name)
            ));
        }
        if let Some(name) = program.environment.iter().find(|v| !variable(v)) {
            return Err(bad_variable("a variable the program reads", name));
        }
        if let Some(home) = &program.home {
            if !variable(&home.variable) {
                return Err(bad_variable("the program's home variable", &home.variable));
            }
            let relative = std::path::Path::new(&home.default_dir);
            if home.default_dir.is_empty()
                || !relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
            {
                return Err(format!(
                    "give the home directory `{}`, which is not a directory under HOME",
                    crate::term::inline(&home.default_dir)
                ));
            }
            if let Some(file) = home.files.iter().find(|f| !plain_name(f)) {
                return Err(format!(
                    "keep `{}` in an isolated home, which is not a plain file name",
                    crate::term::inline(file)
                ));
            }
        }
    }
    if let Some(prices) = &needs.prices {
        if !variable(&prices.name) {
            return Err(bad_variable("the price family", &prices.name));
        }
        if let Some(name) = &prices.redirect_variable
            && !variable(name)
        {
            return Err(bad_variable("the price family's redirect variable", name));
        }
        if let Some(setting) = &prices.home_setting
            && (needs.program.as_ref().is_none_or(|p| p.home.is_none())
                || !plain_name(&setting.file))
        {
            return Err(format!(
                "read the price family from `{}` in a program home it does not declare (or not a plain file name)",
                crate::term::inline(&setting.file)
            ));
        }
    }
    if let Some(id) = &needs.stands_in_for
        && (id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(format!(
            "stand in for `{}`, which is not a provider id (letters, digits, `-` and `_`)",
            crate::term::inline(id)
        ));
    }
    if needs
        .setup_hint
        .as_ref()
        .is_some_and(|h| h.trim().is_empty())
    {
        return Err(
            "give an empty setup hint (leave it out to have it said from the endpoint or program)"
                .into(),
        );
    }
    if let Some(name) = needs
        .settings_applied
        .iter()
        .flatten()
        .find(|n| !crate::fixture::settings::NAMES.contains(&n.as_str()))
    {
        return Err(format!(
            "say it applies the generation setting `{}`, which is not one of {}",
            crate::term::inline(name),
            crate::fixture::settings::NAMES.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::provider_needs::{
        Endpoint, HomeSetting, PriceFamily, Program, ProgramHome,
    };

    fn endpoint() -> Endpoint {
        Endpoint {
            url_variable: "ACME_BASE_URL".into(),
            default_url: "https://api.acme.test/v1".into(),
            key_variable: "ACME_API_KEY".into(),
            key_required: true,
            stream_variable: None,
        }
    }

    fn program() -> Program {
        Program {
            name: "acme".into(),
            environment: vec!["HOME".into(), "ACME_TOKEN".into()],
            install_hint: "install acme".into(),
            agent: false,
            home: Some(ProgramHome {
                variable: "ACME_HOME".into(),
                default_dir: ".acme".into(),
                files: vec!["auth.json".into()],
            }),
        }
    }

    fn with(edit: impl FnOnce(&mut Needs)) -> Result<(), String> {
        let mut needs = Needs {
            endpoint: Some(endpoint()),
            program: Some(program()),
            prices: Some(PriceFamily {
                name: "acme".into(),
                redirect_variable: Some("ACME_BASE_URL".into()),
                home_setting: Some(HomeSetting {
                    file: "config.toml".into(),
                    key: "provider".into(),
                }),
            }),
            settings_applied: Some(vec!["temperature".into()]),
            stands_in_for: Some("acme-api".into()),
            setup_hint: Some("install acme".into()),
            runs_suite_program: false,
            calls_suite_service: false,
        };
        edit(&mut needs);
        check(&needs)
    }

    #[test]
    fn well_formed_needs_and_nothing_pass() {
        assert_eq!(with(|_| {}), Ok(()));
        assert_eq!(check(&nothing()), Ok(()));
    }

    #[test]
    fn each_malformed_part_is_refused_naming_it() {
        type Edit = fn(&mut Needs);
        let cases: &[(Edit, &str)] = &[
            (
                |n| n.endpoint.as_mut().unwrap().url_variable = "A-B".into(),
                "URL variable",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().key_variable = "".into(),
                "key variable",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().key_variable = "1KEY".into(),
                "key variable",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().stream_variable = Some("$S".into()),
                "stream variable",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().default_url = "ftp://x".into(),
                "default URL",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().default_url = "https://u:p@x".into(),
                "default URL",
            ),
            (
                |n| n.endpoint.as_mut().unwrap().default_url = "not a url".into(),
                "default URL",
            ),
            (
                |n| n.program.as_mut().unwrap().name = "/bin/sh".into(),
                "program",
            ),
            (
                |n| n.program.as_mut().unwrap().name = "..".into(),
                "program",
            ),
            (
                |n| n.program.as_mut().unwrap().environment.push("A=B".into()),
                "reads",
            ),
            (
                |n| n.program.as_mut().unwrap().home.as_mut().unwrap().variable = "".into(),
                "home variable",
            ),
            (
                |n| {
                    n.program
                        .as_mut()
                        .unwrap()
                        .home
                        .as_mut()
                        .unwrap()
                        .default_dir = "../x".into()
                },
                "under HOME",
            ),
            (
                |n| {
                    n.program
                        .as_mut()
                        .unwrap()
                        .home
                        .as_mut()
                        .unwrap()
                        .default_dir = "/etc".into()
                },
                "under HOME",
            ),
            (
                |n| {
                    n.program
                        .as_mut()
                        .unwrap()
                        .home
                        .as_mut()
                        .unwrap()
                        .files
                        .push("a/b".into())
                },
                "isolated home",
            ),
            (
                |n| n.prices.as_mut().unwrap().name = "a b".into(),
                "price family",
            ),
            (
                |n| n.prices.as_mut().unwrap().redirect_variable = Some("a b".into()),
                "redirect",
            ),
            (|n| n.program.as_mut().unwrap().home = None, "program home"),
            (|n| n.settings_applied = Some(vec!["temp".into()]), "`temp`"),
            (|n| n.stands_in_for = Some("./a.wasm".into()), "stand in"),
            (|n| n.stands_in_for = Some("".into()), "stand in"),
            (|n| n.stands_in_for = Some("acme/api".into()), "stand in"),
            (|n| n.setup_hint = Some(" ".into()), "empty"),
        ];
        for (i, (edit, says)) in cases.iter().enumerate() {
            let refused = with(edit).expect_err(&format!("case {i} ({says}) should be refused"));
            assert!(refused.contains(says), "case {i}: {refused}");
        }
    }
}
