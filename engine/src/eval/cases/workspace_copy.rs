//! Fresh copies of a workspace for coding-agent runs, and the content hash
//! that keys their cassette entries.
//!
//! An agent works in a copy, never in the user's tree. The copy holds what
//! the repository holds: files ignored by its `.gitignore` files (build
//! output such as `target/`, dependencies, the run directories of earlier
//! runs) and the `.git` directory are left out, so copying a real project
//! costs its sources, not its build; so is cautilus's own `.cautilus/`
//! (runs and cassettes). Symbolic links are copied as links and
//! never followed. The hash covers every copied path, its kind and its
//! bytes (or link target), in a fixed order: two trees with equal hashes
//! give an agent the same workspace, and any change is a different hash.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Most bytes a copy may hold: past it, the tree is too big to hand each
/// sample its own copy.
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;
/// Most files and directories a copy may hold.
pub const MAX_ENTRIES: u64 = 200_000;

/// cautilus's own directory in a workspace (run records, cassettes): never
/// part of what an agent is given, so recording a cassette does not change
/// the hash its answers are keyed by.
const TOOL_DIR: &str = ".cautilus";

/// A fresh copy of a workspace.
#[derive(Debug)]
pub struct WorkspaceCopy {
    pub dir: tempfile::TempDir,
    /// `sha256:<hex>` of the copied tree.
    pub hash: String,
}

/// Why a workspace could not be copied.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("cannot copy the workspace {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the workspace {} holds more than {what} outside its .gitignore; each agent sample gets its own copy, so ignore build output in .gitignore or give the case a `workspace/` template",
        root.display()
    )]
    TooBig { root: PathBuf, what: String },
    #[error("the copy of the workspace {} was interrupted", root.display())]
    Interrupted { root: PathBuf },
}

/// What a copy leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copying {
    /// A repository: its `.gitignore`d files, `.git` and `.cautilus/`.
    Repository,
    /// A case's `workspace/` template: nothing (but links leading out of
    /// it and special files, as always).
    Whole,
}

/// Copies `source` (honouring its `.gitignore` files, without `.git`) into
/// a new temporary directory.
pub fn fresh_copy(source: &Path, skip: &[PathBuf]) -> Result<WorkspaceCopy, CopyError> {
    let dir = crate::private_temp::tempdir("cautilus-agent-").map_err(|source| CopyError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let hash = copy_into(source, dir.path(), skip, Copying::Repository)?;
    Ok(WorkspaceCopy { dir, hash })
}

/// Copies `source` into the existing directory `target`, leaving out the
/// directories of `skip` that are inside it (the run's records and output
/// directory: recording must not change the hash, and an agent must not
/// read other cases' transcripts) and what `copying` says; returns the
/// hash. Symbolic links are never followed: one that stays inside `source`
/// is copied as a link, one that leads out is left out. Pipes, sockets and
/// devices are left out without being opened (opening a pipe would wait
/// for a writer forever). An interrupted run stops the copy between files.
pub fn copy_into(
    source: &Path,
    target: &Path,
    skip: &[PathBuf],
    copying: Copying,
) -> Result<String, CopyError> {
    let repository = copying == Copying::Repository;
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let source_abs = absolute(source);
    let skip: Vec<PathBuf> = skip
        .iter()
        .filter_map(|dir| {
            absolute(dir)
                .strip_prefix(&source_abs)
                .ok()
                .filter(|r| !r.as_os_str().is_empty())
                .map(|r| source.join(r))
        })
        .collect();
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CopyError::Io { path, source }
    };
    let walk = ignore::WalkBuilder::new(source)
        .hidden(false)
        .git_ignore(repository)
        .git_exclude(repository)
        .git_global(false)
        .ignore(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            !(repository
                && (entry.file_name() == ".git"
                    || (entry.depth() == 1 && entry.file_name() == TOOL_DIR)))
                && !skip.iter().any(|s| s == entry.path())
        })
        .build();
    // Where the source really is: links are followed from here.
    let source_real = source.canonicalize().ok();
    let mut hasher = Sha256::new();
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut buffer = Vec::new();
    for entry in walk {
        if crate::eval::interrupt::requested() {
            return Err(CopyError::Interrupted {
                root: source.to_path_buf(),
            });
        }
        let entry = entry.map_err(|e| CopyError::Io {
            path: source.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let path = entry.path();
        let Ok(relative) = path.strip_prefix(source) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        entries += 1;
        if entries > MAX_ENTRIES {
            return Err(CopyError::TooBig {
                root: source.to_path_buf(),
                what: format!("{MAX_ENTRIES} files"),
            });
        }
        let to = target.join(relative);
        let name = relative.to_string_lossy().replace('\\', "/");
        let kind = entry.file_type().ok_or_else(|| CopyError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("no file type"),
        })?;
        if kind.is_dir() {
            std::fs::create_dir(&to).map_err(io(&to))?;
            hash_entry(&mut hasher, b'd', &name, b"");
        } else if kind.is_symlink() {
            let link = std::fs::read_link(path).map_err(io(path))?;
            // A link out of the workspace would let the agent reach the
            // real tree through its copy, and what it points at would not
            // be in the hash: such links are left out.
            let dir = relative.parent().unwrap_or(Path::new(""));
            if !source_real
                .as_deref()
                .is_some_and(|root| link_stays_inside(root, &root.join(dir), &link))
            {
                continue;
            }
            #[cfg(unix)]
            std::os::unix::fs::symlink(&link, &to).map_err(io(&to))?;
            hash_entry(&mut hasher, b'l', &name, link.to_string_lossy().as_bytes());
        } else if kind.is_file() {
            // Refused before it is read: one huge file must not fill memory.
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            if bytes.saturating_add(size) > MAX_BYTES {
                return Err(CopyError::TooBig {
                    root: source.to_path_buf(),
                    what: format!("{} MiB", MAX_BYTES / (1024 * 1024)),
                });
            }
            buffer.clear();
            let Some(mut file) = open_regular(path).map_err(io(path))? else {
                continue; // replaced by something else since it was listed
            };
            file.read_to_end(&mut buffer).map_err(io(path))?;
            bytes += buffer.len() as u64;
            if bytes > MAX_BYTES {
                return Err(CopyError::TooBig {
                    root: source.to_path_buf(),
                    what: format!("{} MiB", MAX_BYTES / (1024 * 1024)),
                });
            }
            let mut file = std::fs::File::create(&to).map_err(io(&to))?;
            file.write_all(&buffer).map_err(io(&to))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = entry
                    .metadata()
                    .map(|m| m.permissions().mode())
                    .unwrap_or(0o644);
                file.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(io(&to))?;
            }
            hash_entry(&mut hasher, b'f', &name, &buffer);
        }
        // Sockets, pipes and devices are not part of a workspace.
    }
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// Opens `path` for reading if it is a regular file, without following a
/// link and without waiting on a pipe (`None` when it is not a file).
fn open_regular(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOFOLLOW,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(file.metadata()?.is_file().then_some(file))
}

/// Whether a link in directory `dir` of the source tree `root` (both real
/// paths) pointing at `target` stays inside the tree every step of the
/// way, as the kernel walks it: each component that is a link is followed
/// (its own target walked the same way), so `d -> .` then
/// `e -> d/d/../../x` is seen to climb out. An absolute target, a step
/// above `root`, a loop or more than 40 links says no. A component that
/// does not exist is taken as written (the copy can follow it no further
/// than the source).
fn link_stays_inside(root: &Path, dir: &Path, target: &Path) -> bool {
    let mut hops = 40;
    walk_inside(root, dir.to_path_buf(), target, &mut hops).is_some()
}

/// Where `target`, walked from `at`, leads while it stays inside `root`.
fn walk_inside(root: &Path, mut at: PathBuf, target: &Path, hops: &mut u32) -> Option<PathBuf> {
    use std::path::Component;
    for component in target.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if at == root {
                    return None;
                }
                at.pop();
            }
            Component::Normal(name) => {
                let next = at.join(name);
                let is_link =
                    std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
                if !is_link {
                    at = next;
                    continue;
                }
                *hops = hops.checked_sub(1)?;
                let link = std::fs::read_link(&next).ok()?;
                at = walk_inside(root, at, &link, hops)?;
            }
            // An absolute target (or a Windows prefix) leaves the tree.
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(at)
}

/// Adds one entry to the tree hash: kind, path and content, each
/// length-prefixed so no two trees hash alike by shifting bytes.
fn hash_entry(hasher: &mut Sha256, kind: u8, name: &str, content: &[u8]) {
    hasher.update([kind]);
    hasher.update((name.len() as u64).to_le_bytes());
    hasher.update(name.as_bytes());
    hasher.update((content.len() as u64).to_le_bytes());
    hasher.update(content);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("AGENTS.md"), "# Start here\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("target/debug/big"), vec![0u8; 4096]).unwrap();
        std::fs::write(root.join("run.log"), "noise").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join(".cautilus/cassettes")).unwrap();
        std::fs::write(root.join(".cautilus/cassettes/s.json"), "{}").unwrap();
        dir
    }

    #[test]
    fn a_copy_holds_the_sources_without_ignored_files_or_git() {
        let source = tree();
        let copy = fresh_copy(source.path(), &[]).unwrap();
        let root = copy.dir.path();
        assert_eq!(
            std::fs::read_to_string(root.join("AGENTS.md")).unwrap(),
            "# Start here\n"
        );
        assert!(root.join("src/main.rs").is_file());
        assert!(root.join(".gitignore").is_file());
        assert!(!root.join("target").exists());
        assert!(!root.join("run.log").exists());
        assert!(!root.join(".git").exists());
        assert!(!root.join(".cautilus").exists());
        // A records root elsewhere in the workspace is left out too.
        std::fs::create_dir_all(source.path().join("records/runs")).unwrap();
        std::fs::write(source.path().join("records/runs/x"), "r").unwrap();
        let copy = fresh_copy(source.path(), &[source.path().join("records")]).unwrap();
        assert!(!copy.dir.path().join("records").exists());
        assert!(copy.dir.path().join("AGENTS.md").exists());
        assert!(copy.hash.starts_with("sha256:"));
    }

    #[test]
    fn the_hash_changes_with_any_content_or_name_and_ignores_ignored_files() {
        let source = tree();
        let hash = || fresh_copy(source.path(), &[]).unwrap().hash;
        let first = hash();
        assert_eq!(first, hash(), "same tree, same hash");
        std::fs::write(source.path().join("target/debug/big"), b"rebuilt").unwrap();
        assert_eq!(first, hash(), "ignored output does not count");
        std::fs::write(source.path().join("src/main.rs"), "fn main() { }\n").unwrap();
        let edited = hash();
        assert_ne!(first, edited);
        std::fs::rename(
            source.path().join("src/main.rs"),
            source.path().join("src/lib.rs"),
        )
        .unwrap();
        assert_ne!(edited, hash());
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_are_copied_as_links_and_links_out_are_left_out() {
        let source = tree();
        let root = source.path();
        std::os::unix::fs::symlink("/etc/passwd", root.join("outside")).unwrap();
        std::os::unix::fs::symlink("../../etc", root.join("src/climbs")).unwrap();
        std::os::unix::fs::symlink("../AGENTS.md", root.join("src/agents")).unwrap();
        // Links that climb out through other links of the tree.
        std::os::unix::fs::symlink(".", root.join("here")).unwrap();
        std::os::unix::fs::symlink("here/here/../../etc/passwd", root.join("through")).unwrap();
        std::os::unix::fs::symlink("..", root.join("src/up")).unwrap();
        std::os::unix::fs::symlink("up/../etc", root.join("src/upup")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        std::os::unix::fs::symlink("here/src/agents", root.join("again")).unwrap();
        let copy = fresh_copy(root, &[]).unwrap();
        let kept = |name: &str| {
            copy.dir
                .path()
                .join(name)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        };
        for name in ["here", "src/up", "again"] {
            assert!(kept(name), "{name} stays inside");
        }
        for name in ["through", "src/upup", "loop"] {
            assert!(!kept(name), "{name} leads out or nowhere");
        }
        let link = copy.dir.path().join("src/agents");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("../AGENTS.md")
        );
        assert!(copy.dir.path().join("outside").symlink_metadata().is_err());
        assert!(
            copy.dir
                .path()
                .join("src/climbs")
                .symlink_metadata()
                .is_err()
        );
    }
}
