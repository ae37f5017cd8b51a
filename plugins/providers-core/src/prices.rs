//! The checked-in price table behind derived costs: `codex exec` reports
//! tokens but no cost, so its cost is computed from them and recorded as
//! `costSource: derived:<TABLE>`. A model not in the table gets no cost
//! (never a guess).

/// Names the table in every cost derived from it (`derived:<TABLE>`).
pub const TABLE: &str = "openai-api-prices@2025-08";

/// USD per million tokens: uncached input, cached input, output (reasoning
/// tokens are billed as output).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub cached_input: f64,
    pub output: f64,
}

/// OpenAI's published API prices (standard tier) as of August 2025.
const PRICES: &[(&str, Price)] = &[
    (
        "gpt-5",
        Price {
            input: 1.25,
            cached_input: 0.125,
            output: 10.0,
        },
    ),
    (
        "gpt-5-codex",
        Price {
            input: 1.25,
            cached_input: 0.125,
            output: 10.0,
        },
    ),
    (
        "gpt-5-mini",
        Price {
            input: 0.25,
            cached_input: 0.025,
            output: 2.0,
        },
    ),
    (
        "gpt-5-nano",
        Price {
            input: 0.05,
            cached_input: 0.005,
            output: 0.4,
        },
    ),
    (
        "gpt-4.1",
        Price {
            input: 2.0,
            cached_input: 0.5,
            output: 8.0,
        },
    ),
    (
        "gpt-4.1-mini",
        Price {
            input: 0.4,
            cached_input: 0.1,
            output: 1.6,
        },
    ),
    (
        "gpt-4.1-nano",
        Price {
            input: 0.1,
            cached_input: 0.025,
            output: 0.4,
        },
    ),
    (
        "gpt-4o",
        Price {
            input: 2.5,
            cached_input: 1.25,
            output: 10.0,
        },
    ),
    (
        "gpt-4o-mini",
        Price {
            input: 0.15,
            cached_input: 0.075,
            output: 0.6,
        },
    ),
    (
        "o3",
        Price {
            input: 2.0,
            cached_input: 0.5,
            output: 8.0,
        },
    ),
    (
        "o4-mini",
        Price {
            input: 1.1,
            cached_input: 0.275,
            output: 4.4,
        },
    ),
];

/// The price of `model` (a dated snapshot such as `gpt-5-2025-08-07` is
/// priced as its model), if the table has it.
pub fn price(model: &str) -> Option<Price> {
    let model = model.trim().to_ascii_lowercase();
    let base = strip_date(&model);
    PRICES.iter().find(|(id, _)| *id == base).map(|(_, p)| *p)
}

/// `gpt-5-2025-08-07` → `gpt-5`.
fn strip_date(model: &str) -> &str {
    let bytes = model.as_bytes();
    if bytes.len() > 11 {
        let (head, tail) = model.split_at(model.len() - 11);
        let t = tail.as_bytes();
        let digits = |r: std::ops::Range<usize>| t[r].iter().all(u8::is_ascii_digit);
        if t[0] == b'-'
            && digits(1..5)
            && t[5] == b'-'
            && digits(6..8)
            && t[8] == b'-'
            && digits(9..11)
        {
            return head;
        }
    }
    model
}

/// The cost in USD of `input` tokens (of which `cached` were cached) and
/// `output` tokens with `model`, if it is priced.
pub fn cost(model: &str, input: u64, cached: u64, output: u64) -> Option<f64> {
    let p = price(model)?;
    let cached = cached.min(input);
    let usd = (input - cached) as f64 * p.input
        + cached as f64 * p.cached_input
        + output as f64 * p.output;
    Some(usd / 1_000_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_table_and_unknown_models_get_none() {
        // 1M uncached input + 1M cached + 1M output on gpt-5.
        let usd = cost("gpt-5", 2_000_000, 1_000_000, 1_000_000).unwrap();
        assert!((usd - (1.25 + 0.125 + 10.0)).abs() < 1e-9, "{usd}");
        assert_eq!(price("GPT-5-2025-08-07"), price("gpt-5"));
        assert_eq!(price("gpt-5-mini").unwrap().output, 2.0);
        assert_eq!(cost("my-local-model", 10, 0, 10), None);
        assert_eq!(strip_date("o3"), "o3");
    }
}
