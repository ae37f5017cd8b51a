//! Temporary directories only this user can enter (a leaf: it depends on
//! no other module of the host).
//!
//! What the host puts in a temporary directory is the operator's: a copy
//! of a private repository for an agent, an isolated CLI home holding its
//! login, the empty directory a program answers in (where it may write
//! what it was told). On a machine shared with other users, a directory
//! made with the default mode (0755 under the usual umask) would let them
//! read all of it. Every such directory is made `0700` here.

use std::io;
use std::path::Path;

use tempfile::{Builder, TempDir};

/// A new directory under the system's temporary directory, named
/// `<prefix><random>`, mode `0700`; removed when dropped.
pub fn tempdir(prefix: &str) -> io::Result<TempDir> {
    private(prefix).tempdir()
}

/// A new directory inside `parent`, like [`tempdir`].
pub fn tempdir_in(prefix: &str, parent: &Path) -> io::Result<TempDir> {
    private(prefix).tempdir_in(parent)
}

fn private(prefix: &str) -> Builder<'_, 'static> {
    let mut builder = Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_the_owner_may_enter() {
        let outer = super::tempdir("cautilus-test-").unwrap();
        let inner = super::tempdir_in("run-", outer.path()).unwrap();
        for dir in [outer.path(), inner.path()] {
            let mode = dir.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        assert!(
            outer
                .path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("cautilus-test-")
        );
    }
}
