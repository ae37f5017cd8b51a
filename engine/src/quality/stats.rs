//! Estimators of the quality engine, each pinned by unit tests against
//! values computed by hand:
//!
//! - [`mean_sem`]: mean and standard error of the mean (sample standard
//!   deviation, n − 1, over √n);
//! - [`pass_at_k`]: the unbiased pass@k of Chen et al. (2021),
//!   1 − C(n−c, k) / C(n, k), computed as a product so it never overflows;
//! - [`pass_hat_k`]: pass^k (all k of k trials pass), C(c, k) / C(n, k);
//! - [`percentile`]: linear interpolation between closest ranks (the
//!   default of NumPy and R's type 7), for latency p50/p95;
//! - [`paired`]: the mean delta of paired cells (candidate − baseline) ±
//!   SEM, with a seeded percentile-bootstrap 95% confidence interval;
//! - [`mcnemar_exact`]: McNemar's exact test on paired pass/fail outcomes
//!   (two-sided binomial test on the discordant pairs).
//!
//! Everything is deterministic: the bootstrap draws from a SplitMix64
//! generator seeded by the caller, so a run and its merged shards agree.

/// Mean ± standard error of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanSem {
    pub n: usize,
    pub mean: f64,
    /// `None` below two values (no spread to estimate).
    pub sem: Option<f64>,
}

/// The mean and its standard error; `None` for no values.
pub fn mean_sem(values: &[f64]) -> Option<MeanSem> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let sem = (n > 1).then(|| {
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (variance / n as f64).sqrt()
    });
    Some(MeanSem { n, mean, sem })
}

/// The unbiased pass@k of `n` trials of which `c` passed: the chance that
/// at least one of k trials drawn without replacement passes. `None` when
/// k is 0, more than n, or c more than n.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    // C(n−c, k) / C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i)
    let miss: f64 = ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product();
    Some(1.0 - miss)
}

/// pass^k: the chance that all of k trials drawn without replacement pass,
/// C(c, k) / C(n, k). `None` as for [`pass_at_k`].
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    Some(
        (0..k)
            .map(|i| (c as f64 - i as f64).max(0.0) / (n - i) as f64)
            .product(),
    )
}

/// The `q`-quantile (0–1) of `sorted` (ascending) by linear interpolation
/// between closest ranks; `None` for no values or a `q` outside 0–1.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let low = h.floor() as usize;
    let high = h.ceil() as usize;
    Some(sorted[low] + (h - low as f64) * (sorted[high] - sorted[low]))
}

/// A paired comparison: candidate − baseline over cells present in both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    pub n: usize,
    pub mean_delta: f64,
    pub sem: Option<f64>,
    /// The 95% confidence interval of the mean delta.
    pub ci_low: f64,
    pub ci_high: f64,
    /// How the interval was computed.
    pub ci_method: CiMethod,
}

/// How a confidence interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiMethod {
    /// Percentile bootstrap, [`BOOTSTRAP_RESAMPLES`] seeded resamples.
    Bootstrap,
    /// mean ± 1.96·SEM: above [`BOOTSTRAP_MAX_PAIRS`] pairs, where the
    /// bootstrap would cost seconds and the normal approximation of the
    /// mean is as good.
    Normal,
}

impl CiMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bootstrap => "bootstrap",
            Self::Normal => "normal",
        }
    }
}

/// Most pairs the bootstrap resamples.
pub const BOOTSTRAP_MAX_PAIRS: usize = 5_000;

/// Bootstrap resamples drawn for a confidence interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The paired comparison of `candidate[i]` with `baseline[i]` (equal
/// lengths: the caller pairs cells by identity); `None` without pairs.
pub fn paired(candidate: &[f64], baseline: &[f64], seed: u64) -> Option<Paired> {
    assert_eq!(candidate.len(), baseline.len(), "cells are paired");
    let deltas: Vec<f64> = candidate.iter().zip(baseline).map(|(c, b)| c - b).collect();
    let summary = mean_sem(&deltas)?;
    let (ci_low, ci_high, ci_method) = if deltas.len() > BOOTSTRAP_MAX_PAIRS {
        let half = 1.96 * summary.sem.unwrap_or(0.0);
        (summary.mean - half, summary.mean + half, CiMethod::Normal)
    } else {
        let (low, high) = bootstrap_ci(&deltas, seed, BOOTSTRAP_RESAMPLES);
        (low, high, CiMethod::Bootstrap)
    };
    Some(Paired {
        n: summary.n,
        mean_delta: summary.mean,
        sem: summary.sem,
        ci_low,
        ci_high,
        ci_method,
    })
}

/// The percentile-bootstrap 95% interval of the mean of `values`:
/// `resamples` means of samples drawn with replacement, their 2.5th and
/// 97.5th percentiles.
pub fn bootstrap_ci(values: &[f64], seed: u64, resamples: usize) -> (f64, f64) {
    let n = values.len();
    if n == 0 || resamples == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = SplitMix64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    (
        percentile(&means, 0.025).unwrap_or(f64::NAN),
        percentile(&means, 0.975).unwrap_or(f64::NAN),
    )
}

/// McNemar's exact test on paired pass/fail outcomes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McNemar {
    /// Pairs the baseline passed and the candidate failed.
    pub regressions: u64,
    /// Pairs the baseline failed and the candidate passed.
    pub improvements: u64,
    /// Two-sided p-value of "both are equally likely"; 1 without
    /// discordant pairs.
    pub p_value: f64,
}

/// McNemar's exact test over (baseline passed, candidate passed) pairs.
pub fn mcnemar_exact(pairs: &[(bool, bool)]) -> McNemar {
    let regressions = pairs.iter().filter(|(b, c)| *b && !*c).count() as u64;
    let improvements = pairs.iter().filter(|(b, c)| !*b && *c).count() as u64;
    let n = regressions + improvements;
    let smaller = regressions.min(improvements);
    // P(X ≤ smaller) for X ~ Binomial(n, 1/2), summed in log space.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut tail = 0.0f64;
    for i in 0..=smaller {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    McNemar {
        regressions,
        improvements,
        p_value: if n == 0 { 1.0 } else { (2.0 * tail).min(1.0) },
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small, fast generator whose
/// stream is fixed by its seed on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (Lemire's multiply-shift; the bias is
    /// below 2⁻³² for any n a run has).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn mean_and_standard_error_by_hand() {
        // mean 2.5; deviations ±1.5, ±0.5: variance (2·2.25 + 2·0.25)/3 = 5/3;
        // SEM = √(5/3) / √4 = 0.6454972…
        let s = mean_sem(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert!(close(s.mean, 2.5));
        assert!(close(s.sem.unwrap(), (5.0f64 / 3.0).sqrt() / 2.0));
        assert_eq!(mean_sem(&[7.0]).unwrap().sem, None);
        assert_eq!(mean_sem(&[]), None);
    }

    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        // n = 5 trials, c = 2 passed.
        assert!(close(pass_at_k(5, 2, 1).unwrap(), 0.4));
        // 1 − C(3,2)/C(5,2) = 1 − 3/10
        assert!(close(pass_at_k(5, 2, 2).unwrap(), 0.7));
        // 1 − C(3,3)/C(5,3) = 1 − 1/10
        assert!(close(pass_at_k(5, 2, 3).unwrap(), 0.9));
        // fewer failures than k: some drawn trial always passes
        assert!(close(pass_at_k(5, 2, 4).unwrap(), 1.0));
        assert!(close(pass_at_k(10, 0, 3).unwrap(), 0.0));
        assert!(close(pass_at_k(10, 10, 3).unwrap(), 1.0));
        // 1 − C(97,10)/C(100,10) = 1 − (90·89·88)/(100·99·98)
        let want = 1.0 - (90.0 * 89.0 * 88.0) / (100.0 * 99.0 * 98.0);
        assert!(close(pass_at_k(100, 3, 10).unwrap(), want));
        assert_eq!(pass_at_k(5, 2, 0), None);
        assert_eq!(pass_at_k(5, 2, 6), None);
        assert_eq!(pass_at_k(5, 6, 1), None);
    }

    #[test]
    fn pass_hat_k_needs_every_drawn_trial_to_pass() {
        // C(2,2)/C(5,2) = 1/10
        assert!(close(pass_hat_k(5, 2, 2).unwrap(), 0.1));
        assert!(close(pass_hat_k(5, 2, 1).unwrap(), 0.4));
        assert!(close(pass_hat_k(5, 2, 3).unwrap(), 0.0));
        // C(4,2)/C(5,2) = 6/10
        assert!(close(pass_hat_k(5, 4, 2).unwrap(), 0.6));
        assert!(close(pass_hat_k(3, 3, 3).unwrap(), 1.0));
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        // h = 4·0.95 = 3.8 → 4 + 0.8·(5 − 4)
        assert!(close(percentile(&v, 0.95).unwrap(), 4.8));
        assert!(close(percentile(&v, 0.5).unwrap(), 3.0));
        assert!(close(percentile(&[10.0, 20.0], 0.5).unwrap(), 15.0));
        assert!(close(percentile(&[42.0], 0.95).unwrap(), 42.0));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&v, 1.5), None);
    }

    #[test]
    fn mcnemar_exact_matches_the_binomial_tail() {
        let pairs = |regressions: usize, improvements: usize, same: usize| {
            let mut p = vec![(true, false); regressions];
            p.extend(vec![(false, true); improvements]);
            p.extend(vec![(true, true); same]);
            p
        };
        // b = 1, c = 6: 2·(C(7,0) + C(7,1))/2⁷ = 16/128
        let t = mcnemar_exact(&pairs(1, 6, 10));
        assert_eq!((t.regressions, t.improvements), (1, 6));
        assert!(close(t.p_value, 0.125));
        // b = 0, c = 5: 2/32
        assert!(close(mcnemar_exact(&pairs(0, 5, 0)).p_value, 0.0625));
        // b = c = 3: 2·42/64 > 1 → 1
        assert!(close(mcnemar_exact(&pairs(3, 3, 2)).p_value, 1.0));
        assert!(close(mcnemar_exact(&pairs(0, 0, 4)).p_value, 1.0));
        // b = 10, c = 30 (n = 40): 2·Σ_{i≤10} C(40,i)/2⁴⁰
        // = 2·1_221_246_132/2⁴⁰ (integer sum) = 0.00222143377…
        let big = mcnemar_exact(&pairs(10, 30, 0)).p_value;
        assert!((big - 0.002_221_433_77).abs() < 1e-10, "{big}");
    }

    #[test]
    fn paired_deltas_and_a_reproducible_bootstrap_interval() {
        let candidate = [1.0, 1.0, 0.0, 1.0];
        let baseline = [0.0, 1.0, 0.0, 0.0];
        // deltas 1, 0, 0, 1: mean 0.5, variance (4·0.25)/3, SEM √(1/3)/2
        let p = paired(&candidate, &baseline, 7).unwrap();
        assert_eq!(p.n, 4);
        assert!(close(p.mean_delta, 0.5));
        assert!(close(p.sem.unwrap(), (1.0f64 / 3.0).sqrt() / 2.0));
        assert!(p.ci_low <= p.mean_delta && p.mean_delta <= p.ci_high);
        assert!(p.ci_low >= 0.0 && p.ci_high <= 1.0);
        assert_eq!(
            paired(&candidate, &baseline, 7),
            Some(p),
            "same seed, same interval"
        );
        // No spread: the interval collapses onto the delta.
        let flat = paired(&[0.9; 6], &[0.4; 6], 1).unwrap();
        assert!(close(flat.ci_low, 0.5) && close(flat.ci_high, 0.5));
        assert_eq!(paired(&[], &[], 1), None);
    }

    #[test]
    fn the_bootstrap_interval_covers_a_known_mean() {
        // 200 deltas alternating 0 and 1: mean 0.5, SEM ≈ 0.0354; the 95%
        // interval is about ±0.07 around it.
        let values: Vec<f64> = (0..200).map(|i| f64::from(i % 2)).collect();
        let (low, high) = bootstrap_ci(&values, 42, BOOTSTRAP_RESAMPLES);
        assert!((0.41..0.47).contains(&low), "{low}");
        assert!((0.53..0.59).contains(&high), "{high}");
    }

    #[test]
    fn many_pairs_use_the_normal_interval() {
        // Deltas alternate 0 and 1: mean 0.5, sd ≈ 0.5, SEM = sd/√n.
        let n = BOOTSTRAP_MAX_PAIRS + 1;
        let candidate: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        let baseline = vec![0.0; n];
        let p = paired(&candidate, &baseline, 3).unwrap();
        assert_eq!(p.ci_method, CiMethod::Normal);
        let sem = p.sem.unwrap();
        assert!(close(p.ci_low, p.mean_delta - 1.96 * sem));
        assert!(close(p.ci_high, p.mean_delta + 1.96 * sem));
        let small = paired(&candidate[..10], &baseline[..10], 3).unwrap();
        assert_eq!(small.ci_method, CiMethod::Bootstrap);
    }
}
