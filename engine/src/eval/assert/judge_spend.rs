//! What judge calls cost ([`Spend`]), gathered per thread: a judge
//! scorer's calls run on the thread that scores the case, so
//! [`take_spend`] after the call is that case's judge spend.

use crate::plugin::bindings::model::GenerateResponse;

/// What judge calls cost, gathered per thread: a judge scorer's calls
/// run on the thread that scores the case (one input per guest call), so
/// [`take_spend`] after the call is that case's judge spend.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    pub calls: u32,
    pub cost_usd: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Spend {
    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    pub(crate) fn add(&mut self, response: &GenerateResponse) {
        self.calls += 1;
        if let Some(usd) = response.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + usd);
        }
        if let Some(usage) = &response.usage {
            self.input_tokens += usage.input_tokens.unwrap_or(0);
            self.output_tokens += usage.output_tokens.unwrap_or(0);
        }
    }

    /// Adds `other` (a case's several judged assertions).
    pub fn plus(self, other: Spend) -> Spend {
        Spend {
            calls: self.calls + other.calls,
            cost_usd: match (self.cost_usd, other.cost_usd) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            },
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

thread_local! {
    pub(crate) static SPEND: std::cell::Cell<Spend> = const { std::cell::Cell::new(Spend { calls: 0, cost_usd: None, input_tokens: 0, output_tokens: 0 }) };
}

/// What this thread's judge calls cost since the last call, and resets it.
pub fn take_spend() -> Spend {
    SPEND.with(|spend| spend.take())
}
