//! Calling the provider for a case: what the built-in providers declare
//! ([`declared`]), what a provider is granted and told
//! ([`setup`], an API provider's endpoint: [`endpoint`], the `exec`
//! provider's program: [`exec`], the `http` provider's service: [`http`]), a run's calls (sessions, cassette, redaction: [`calls`]), the answers
//! a run keeps for `--resume` as its calls finish ([`answers`]), the
//! cassette ([`cassette`], its file [`cassette_file`]), the observation's
//! JSON form and its scrubbing, and prices.

pub mod answers;
pub mod call_key;
pub mod calls;
pub mod cassette;
pub mod cassette_file;
#[cfg(test)]
mod cassette_fuzz;
pub mod declared;
mod endpoint;
pub mod exec;
pub mod http;
pub mod observation_json;
pub mod observation_scrub;
pub mod pricing;
pub mod setup;
