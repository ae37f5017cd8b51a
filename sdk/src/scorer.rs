//! The scorer trait and the `export_scorers!` macro.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::bindings::scorer_api::{self, Grader, GuestGrader, ScorerInfo};
use crate::types::{ConfigSchema, CostClass, PluginError, PluginInfo, Score, ScoreInput};

/// A scorer: parses its config once into `Self`, then scores many inputs.
pub trait Scorer: Sized + 'static {
    /// The id fixtures use (`type: my-scorer`).
    const ID: &'static str;
    /// One line shown by `cautilus plugin list`/`inspect`.
    const DESCRIPTION: &'static str;
    /// `Model` for judges that spend model calls.
    const COST_CLASS: CostClass = CostClass::Code;
    /// The config, deserialized from the assertion's JSON (host-owned keys
    /// such as `negate` are removed before it gets here).
    type Config: DeserializeOwned;

    /// JSON Schema of the config, for `cautilus plugin inspect`.
    fn config_schema() -> ConfigSchema {
        ConfigSchema::default()
    }

    /// Validates the parsed config (compile patterns, check ranges). A
    /// returned [`PluginError::config`] names the bad field.
    fn new(config: Self::Config) -> Result<Self, PluginError>;

    /// Checks a parsed config without keeping a scorer: the host checks
    /// every config of a suite before anything runs. The default builds the
    /// scorer and drops it; override it when checking is much cheaper than
    /// preparing (parse a pattern without compiling it). It must accept
    /// exactly the configs [`Scorer::new`] accepts.
    fn check(config: Self::Config) -> Result<(), PluginError> {
        Self::new(config).map(drop)
    }

    /// Scores one input.
    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError>;

    /// Scores one input with a config used this once (a case's own
    /// assertion value). The default is `new` then `score`; override it
    /// when a single use can skip work that only pays off over many inputs
    /// (the built-in `regex` builds no DFA). It must answer exactly as
    /// `new(config)?.score(input)` does.
    fn score_once(config: Self::Config, input: &ScoreInput) -> Result<Score, PluginError> {
        Self::new(config)?.score(input)
    }
}

/// Type-erased scorer behind a grader resource.
trait DynScorer {
    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError>;
}

impl<T: Scorer> DynScorer for T {
    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        Scorer::score(self, input)
    }
}

/// One scorer of a pack, as registered by [`export_scorers!`].
pub struct ScorerEntry {
    id: &'static str,
    info: fn() -> ScorerInfo,
    prepare: fn(&str) -> Result<Box<dyn DynScorerHandle>, PluginError>,
    check: fn(&str) -> Result<(), PluginError>,
    once: fn(&str, &ScoreInput) -> Result<Score, PluginError>,
}

#[doc(hidden)]
pub trait DynScorerHandle {
    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError>;
}

impl<T: DynScorer> DynScorerHandle for T {
    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        DynScorer::score(self, input)
    }
}

impl ScorerEntry {
    /// The entry for scorer type `T` (a constant, so the table is static).
    pub const fn of<T: Scorer>() -> Self {
        Self {
            id: T::ID,
            info: info_of::<T>,
            prepare: prepare_of::<T>,
            check: check_of::<T>,
            once: once_of::<T>,
        }
    }
}

fn info_of<T: Scorer>() -> ScorerInfo {
    ScorerInfo {
        id: T::ID.to_string(),
        description: T::DESCRIPTION.to_string(),
        cost_class: T::COST_CLASS,
        config_schema: T::config_schema().0.to_string(),
    }
}

fn prepare_of<T: Scorer>(config: &str) -> Result<Box<dyn DynScorerHandle>, PluginError> {
    let config: T::Config = crate::parse_config(config)?;
    Ok(Box::new(T::new(config)?))
}

fn check_of<T: Scorer>(config: &str) -> Result<(), PluginError> {
    T::check(crate::parse_config(config)?)
}

fn once_of<T: Scorer>(config: &str, input: &ScoreInput) -> Result<Score, PluginError> {
    T::score_once(crate::parse_config(config)?, input)
}

/// A component's set of scorers; implemented by [`export_scorers!`].
pub trait ScorerPack: 'static {
    fn plugin_info() -> PluginInfo;
    /// The scorers, in a static table built at compile time.
    const ENTRIES: &'static [ScorerEntry];
}

/// Adapts a [`ScorerPack`] to the generated WIT export trait.
#[doc(hidden)]
pub struct PackExport<P>(PhantomData<P>);

#[doc(hidden)]
pub struct GraderImpl(Box<dyn DynScorerHandle>);

impl GuestGrader for GraderImpl {
    fn score(&self, input: ScoreInput) -> Result<Score, PluginError> {
        self.0.score(&input)
    }

    fn score_batch(&self, inputs: Vec<ScoreInput>) -> Vec<Result<Score, PluginError>> {
        inputs.iter().map(|input| self.0.score(input)).collect()
    }
}

impl<P: ScorerPack> scorer_api::Guest for PackExport<P> {
    type Grader = GraderImpl;

    fn describe() -> scorer_api::ScorerPack {
        scorer_api::ScorerPack {
            plugin: P::plugin_info(),
            scorers: P::ENTRIES.iter().map(|e| (e.info)()).collect(),
        }
    }

    fn prepare(id: String, config: String) -> Result<Grader, PluginError> {
        let entry = entry::<P>(&id)?;
        Ok(Grader::new(GraderImpl((entry.prepare)(&config)?)))
    }

    fn check(id: String, configs: Vec<String>) -> Vec<Result<(), PluginError>> {
        match entry::<P>(&id) {
            Ok(entry) => configs.iter().map(|config| (entry.check)(config)).collect(),
            Err(error) => configs.iter().map(|_| Err(error.clone())).collect(),
        }
    }

    fn score_each(
        inputs: Vec<ScoreInput>,
        items: Vec<scorer_api::OnceItem>,
    ) -> Vec<Result<Score, PluginError>> {
        items
            .iter()
            .map(|item| {
                let entry = entry::<P>(&item.scorer)?;
                let input = usize::try_from(item.input)
                    .ok()
                    .and_then(|i| inputs.get(i))
                    .ok_or_else(|| {
                        PluginError::failed(format!(
                            "item names input {} of {}",
                            item.input,
                            inputs.len()
                        ))
                    })?;
                (entry.once)(&item.config, input)
            })
            .collect()
    }
}

/// The entry of scorer `id` in pack `P`.
fn entry<P: ScorerPack>(id: &str) -> Result<&'static ScorerEntry, PluginError> {
    P::ENTRIES.iter().find(|e| e.id == id).ok_or_else(|| {
        let ids: Vec<&str> = P::ENTRIES.iter().map(|e| e.id).collect();
        PluginError::failed(format!(
            "no scorer `{id}` in this component (it has: {})",
            ids.join(", ")
        ))
    })
}

/// Exports one or more [`Scorer`]s as this component's scorer world.
///
/// The plugin id, version and description come from the crate's
/// `Cargo.toml`. Capabilities are requested after a `;`:
///
/// ```ignore
/// export_scorers!(Exact, Fuzzy);
/// export_scorers!(MyJudge; capabilities = [cautilus_sdk::Capability::Model]);
/// ```
#[macro_export]
macro_rules! export_scorers {
    ($($scorer:ty),+ $(,)? $(; capabilities = [$($capability:expr),* $(,)?])?) => {
        const _: () = {
            struct __CautilusScorerPack;
            impl $crate::ScorerPack for __CautilusScorerPack {
                fn plugin_info() -> $crate::PluginInfo {
                    $crate::PluginInfo {
                        id: env!("CARGO_PKG_NAME").to_string(),
                        version: env!("CARGO_PKG_VERSION").to_string(),
                        description: env!("CARGO_PKG_DESCRIPTION").to_string(),
                        capabilities: vec![$($($capability),*)?],
                    }
                }
                const ENTRIES: &'static [$crate::ScorerEntry] =
                    &[$($crate::ScorerEntry::of::<$scorer>()),+];
            }
            type __CautilusScorerExport = $crate::__private::PackExport<__CautilusScorerPack>;
            $crate::__private::__export_scorer_world!(
                __CautilusScorerExport with_types_in $crate::__private::scorer_bindings
            );
        };
    };
}
