//! Calling the provider for a case: what a provider is granted and told
//! ([`setup`], an API provider's endpoint: [`endpoint`]), a run's calls (sessions, cassette, redaction: [`calls`]), the
//! cassette ([`cassette`], its file [`cassette_file`]), the observation's
//! JSON form and its scrubbing, and prices.

pub mod call_key;
pub mod calls;
pub mod cassette;
pub mod cassette_file;
#[cfg(test)]
mod cassette_fuzz;
mod endpoint;
pub mod observation_json;
pub mod observation_scrub;
pub mod pricing;
pub mod setup;
