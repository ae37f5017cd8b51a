//! The surface/preset taxonomy, owned by the host (DESIGN §4).
//!
//! A constant table of the valid (surface, preset) pairs and their runtime
//! mode. Fixtures naming any other pair are rejected before anything runs,
//! and a preset plugin declaring a pair outside the table is refused at
//! load. Adding a value is a deliberate host change: the table is pinned by
//! a test (the taxonomy-axis checkpoint).

use std::fmt;

/// The runtime a surface needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A coding-agent harness in a workspace.
    Workspace,
    /// System prompt + messages to a model.
    Messaging,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::Messaging => "messaging",
        }
    }
}

/// One valid (surface, preset) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub surface: &'static str,
    pub preset: &'static str,
    pub mode: Mode,
    /// What the preset axis means on this surface.
    pub axis: &'static str,
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.surface, self.preset)
    }
}

/// The taxonomy. Changing it is a host change that must pass the
/// taxonomy-axis checkpoint (and update the test that pins it).
pub const TAXONOMY: &[Pair] = &[
    Pair {
        surface: "repo",
        preset: "whole-repo",
        mode: Mode::Workspace,
        axis: "scope",
    },
    Pair {
        surface: "repo",
        preset: "skill",
        mode: Mode::Workspace,
        axis: "scope",
    },
    Pair {
        surface: "app",
        preset: "chat",
        mode: Mode::Messaging,
        axis: "turn shape",
    },
    Pair {
        surface: "app",
        preset: "prompt",
        mode: Mode::Messaging,
        axis: "turn shape",
    },
];

/// A pair outside the taxonomy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}; valid surface/preset pairs: {}", valid_pairs())]
pub struct TaxonomyError {
    pub problem: String,
}

/// The valid pairs, for messages: `repo/whole-repo, repo/skill, …`.
pub fn valid_pairs() -> String {
    TAXONOMY
        .iter()
        .map(Pair::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The mode of every pair on `surface` (one mode per surface, pinned by a
/// test); `None` for a surface outside the taxonomy.
pub fn surface_mode(surface: &str) -> Option<Mode> {
    TAXONOMY
        .iter()
        .find(|p| p.surface == surface)
        .map(|p| p.mode)
}

/// Whether the run of a suite or packet on `surface` is a coding agent's
/// work in a workspace (which cannot be replayed from its outputs).
pub fn works_in_a_workspace(surface: &str) -> bool {
    surface_mode(surface) == Some(Mode::Workspace)
}

/// Looks up a pair; the error names what is wrong and lists the valid pairs.
pub fn lookup(surface: &str, preset: &str) -> Result<&'static Pair, TaxonomyError> {
    if let Some(pair) = TAXONOMY
        .iter()
        .find(|p| p.surface == surface && p.preset == preset)
    {
        return Ok(pair);
    }
    let surface_known = TAXONOMY.iter().any(|p| p.surface == surface);
    let preset_known = TAXONOMY.iter().any(|p| p.preset == preset);
    let problem = match (surface_known, preset_known) {
        (false, _) => format!(
            "unknown surface `{surface}` (surfaces: {})",
            unique(TAXONOMY.iter().map(|p| p.surface)).join(", ")
        ),
        (true, false) => format!("unknown preset `{preset}` on surface `{surface}`"),
        (true, true) => format!(
            "`{surface}/{preset}` is a cross-axis pair: preset `{preset}` belongs to surface `{}`, not `{surface}`",
            TAXONOMY
                .iter()
                .find(|p| p.preset == preset)
                .map_or("?", |p| p.surface)
        ),
    };
    Err(TaxonomyError { problem })
}

fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The taxonomy-axis checkpoint: this test pins the table. Adding a
    /// surface or preset must be a deliberate change here and in the spec.
    #[test]
    fn the_table_is_pinned() {
        let pairs: Vec<(&str, &str, &str)> = TAXONOMY
            .iter()
            .map(|p| (p.surface, p.preset, p.mode.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("repo", "whole-repo", "workspace"),
                ("repo", "skill", "workspace"),
                ("app", "chat", "messaging"),
                ("app", "prompt", "messaging"),
            ]
        );
    }

    #[test]
    fn every_pair_of_a_surface_has_the_surfaces_mode() {
        for pair in TAXONOMY {
            assert_eq!(surface_mode(pair.surface), Some(pair.mode), "{pair}");
        }
        assert!(works_in_a_workspace("repo"));
        assert!(!works_in_a_workspace("app"));
        assert!(!works_in_a_workspace("nope"));
    }

    #[test]
    fn cross_axis_and_unknown_pairs_are_rejected_with_the_valid_ones() {
        let error = lookup("repo", "chat").unwrap_err().to_string();
        assert!(
            error.contains("`repo/chat` is a cross-axis pair"),
            "{error}"
        );
        assert!(error.contains(
            "valid surface/preset pairs: repo/whole-repo, repo/skill, app/chat, app/prompt"
        ));
        let error = lookup("app", "skill").unwrap_err().to_string();
        assert!(
            error.contains("preset `skill` belongs to surface `repo`"),
            "{error}"
        );
        assert!(
            lookup("dev", "repo")
                .unwrap_err()
                .to_string()
                .contains("unknown surface `dev`")
        );
        assert!(
            lookup("app", "judge")
                .unwrap_err()
                .to_string()
                .contains("unknown preset `judge`")
        );
        assert_eq!(lookup("app", "prompt").unwrap().mode, Mode::Messaging);
    }
}
