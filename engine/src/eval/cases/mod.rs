//! Cases, from the fixture to what a run plans for each: where a case came
//! from (its file, its directory, its workspace) and the copy of the
//! workspace an agent case runs in.

pub mod origins;
pub mod workspace_copy;
