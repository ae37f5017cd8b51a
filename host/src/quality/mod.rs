//! The quality engine (trials, variants, baselines, gates): what a run of
//! many cells concludes, beyond "did each case pass once".
//!
//! So far: [`stats`], the estimators the per-variant aggregates, the paired
//! comparison against a baseline and the gates are computed with.

pub mod stats;
