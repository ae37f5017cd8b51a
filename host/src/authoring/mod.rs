//! Tools for plugin authors: the examples file of a scorer project
//! ([`examples`]), how a scorer's outcome compares with an example's
//! expectation ([`outcome`]), and finding and building a scorer project
//! ([`project`]). `cautilus plugin test` and `cautilus pack test` use them.

pub mod examples;
pub mod outcome;
pub mod project;

pub use examples::{Example, ExamplesError, ExamplesFile, Expect, ScoreExpect};
pub use outcome::{Actual, Difference};
pub use project::{Language, Project, ProjectError};
