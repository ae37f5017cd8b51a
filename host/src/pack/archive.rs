//! A pack archive: a gzip-compressed tar of the manifest and the files it
//! lists, written so that the same files give the same bytes (entries in
//! path order, zero times and owners, fixed modes, no gzip timestamp), and
//! read defensively (regular files only, paths inside the pack, bounded
//! size and count).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::PackError;
use super::manifest::{MANIFEST, Manifest, valid_relative_path};

/// The largest archive content read (after decompression).
pub const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;
/// The most entries read from an archive.
pub const MAX_ENTRIES: usize = 1024;
/// The media type of a pack archive (an OCI layer).
pub const MEDIA_TYPE: &str = "application/vnd.cautilus.pack.v1.tar+gzip";

/// The files of a pack: its manifest and every file it lists, by path.
#[derive(Debug, Clone, PartialEq)]
pub struct PackFiles {
    pub manifest: Manifest,
    pub files: BTreeMap<String, Vec<u8>>,
}

impl PackFiles {
    /// Reads a pack directory: the manifest and the files it lists.
    pub fn from_dir(dir: &Path) -> Result<Self, PackError> {
        let manifest = Manifest::read(dir)?;
        let mut files = BTreeMap::new();
        for path in manifest.files() {
            let full = dir.join(path);
            let bytes = std::fs::read(&full).map_err(|source| PackError::Io {
                path: full.clone(),
                source,
            })?;
            files.insert(path.to_string(), bytes);
        }
        Ok(Self { manifest, files })
    }

    /// The archive of these files (the same files give the same bytes).
    pub fn to_archive(&self) -> Vec<u8> {
        let mut gzip = flate2::GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(Vec::new(), flate2::Compression::best());
        {
            let mut tar = tar::Builder::new(&mut gzip);
            let manifest = self.manifest.to_toml();
            append(&mut tar, MANIFEST, manifest.as_bytes());
            for (path, bytes) in &self.files {
                append(&mut tar, path, bytes);
            }
            tar.finish().expect("writing to memory");
        }
        gzip.finish().expect("writing to memory")
    }

    /// Reads an archive; `origin` names it in errors. Checks that it holds
    /// exactly the manifest and the files it lists, nothing else.
    pub fn from_archive(bytes: &[u8], origin: &str) -> Result<Self, PackError> {
        let bad = |message: String| PackError::Archive {
            origin: origin.to_string(),
            message,
        };
        let gzip = flate2::read::GzDecoder::new(bytes);
        let mut tar = tar::Archive::new(gzip.take(MAX_UNPACKED_BYTES + 1));
        let mut entries: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut total = 0u64;
        for entry in tar
            .entries()
            .map_err(|e| bad(format!("not a pack archive (gzip-compressed tar): {e}")))?
        {
            let mut entry = entry.map_err(|e| bad(format!("a damaged entry: {e}")))?;
            if entries.len() >= MAX_ENTRIES {
                return Err(bad(format!("more than {MAX_ENTRIES} entries")));
            }
            let path = String::from_utf8(entry.path_bytes().into_owned())
                .map_err(|_| bad("an entry's path is not UTF-8".into()))?;
            if !entry.header().entry_type().is_file() {
                return Err(bad(format!(
                    "`{path}` is not a regular file (links and devices are refused)"
                )));
            }
            if !valid_relative_path(&path) {
                return Err(bad(format!("`{path}` is not a path inside the pack")));
            }
            let mut data = Vec::new();
            entry
                .read_to_end(&mut data)
                .map_err(|e| bad(format!("`{path}`: {e}")))?;
            total += data.len() as u64;
            if total > MAX_UNPACKED_BYTES {
                return Err(bad(format!(
                    "unpacks to more than {} MiB",
                    MAX_UNPACKED_BYTES >> 20
                )));
            }
            if entries.insert(path.clone(), data).is_some() {
                return Err(bad(format!("`{path}` appears twice")));
            }
        }
        // Read to the end, so gzip checks its CRC over everything.
        std::io::copy(&mut tar.into_inner(), &mut std::io::sink())
            .map_err(|e| bad(format!("damaged after its last entry: {e}")))?;
        let manifest_bytes = entries
            .remove(MANIFEST)
            .ok_or_else(|| bad(format!("it has no {MANIFEST}")))?;
        let text = String::from_utf8(manifest_bytes)
            .map_err(|_| bad(format!("{MANIFEST} is not UTF-8")))?;
        let manifest = Manifest::parse(&text, Path::new(&format!("{origin}!/{MANIFEST}")))?;
        for path in manifest.files() {
            if !entries.contains_key(path) {
                return Err(bad(format!("{MANIFEST} lists `{path}`, which it lacks")));
            }
        }
        let listed: Vec<&str> = manifest.files().collect();
        if let Some(extra) = entries.keys().find(|p| !listed.contains(&p.as_str())) {
            return Err(bad(format!("`{extra}` is not listed in {MANIFEST}")));
        }
        Ok(Self {
            manifest,
            files: entries,
        })
    }

    /// Checks every component's bytes against the sha256 its manifest
    /// states (which must be there: `pack build` writes it).
    pub fn check_hashes(&self, origin: &str) -> Result<(), PackError> {
        for component in &self.manifest.components {
            let Some(stated) = &component.sha256 else {
                return Err(PackError::Archive {
                    origin: origin.to_string(),
                    message: format!(
                        "{MANIFEST} gives no sha256 for `{}`; build the pack with `cautilus pack build`",
                        component.path
                    ),
                });
            };
            let actual = sha256_hex(&self.files[&component.path]);
            if !actual.eq_ignore_ascii_case(stated) {
                return Err(PackError::HashMismatch {
                    origin: origin.to_string(),
                    path: component.path.clone(),
                    stated: stated.clone(),
                    actual,
                });
            }
        }
        Ok(())
    }
}

fn append<W: std::io::Write>(tar: &mut tar::Builder<W>, path: &str, bytes: &[u8]) {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, path, bytes)
        .expect("writing to memory");
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The digest of an archive as OCI and the lock file write it.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack() -> PackFiles {
        let wasm = b"\0asm fake component".to_vec();
        let text = format!(
            "[pack]\nname = \"demo\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"c/s.wasm\"\nkind = \"scorer\"\nids = [\"s\"]\nsha256 = \"{}\"\n",
            sha256_hex(&wasm)
        );
        PackFiles {
            manifest: Manifest::parse(&text, Path::new("m")).unwrap(),
            files: BTreeMap::from([("c/s.wasm".to_string(), wasm)]),
        }
    }

    #[test]
    fn the_same_files_give_the_same_bytes_and_read_back() {
        let one = pack().to_archive();
        assert_eq!(one, pack().to_archive());
        let back = PackFiles::from_archive(&one, "demo.tgz").unwrap();
        assert_eq!(back, pack());
        back.check_hashes("demo.tgz").unwrap();
    }

    #[test]
    fn a_changed_component_is_refused_by_its_hash() {
        let mut tampered = pack();
        tampered.files.get_mut("c/s.wasm").unwrap()[0] ^= 1;
        let back = PackFiles::from_archive(&tampered.to_archive(), "t.tgz").unwrap();
        let error = back.check_hashes("t.tgz").unwrap_err().to_string();
        assert!(
            error.contains("c/s.wasm") && error.contains("t.tgz"),
            "{error}"
        );
    }

    #[test]
    fn damaged_or_unexpected_archives_are_refused() {
        let bytes = pack().to_archive();
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() / 2);
        assert!(PackFiles::from_archive(&cut, "cut").is_err());
        assert!(PackFiles::from_archive(b"not gzip", "x").is_err());

        let mut extra = pack();
        extra.files.insert("unlisted.txt".into(), b"x".to_vec());
        let error = PackFiles::from_archive(&extra.to_archive(), "e")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`unlisted.txt` is not listed"), "{error}");

        let mut missing = pack();
        missing.files.clear();
        let error = PackFiles::from_archive(&missing.to_archive(), "m")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("lists `c/s.wasm`, which it lacks"),
            "{error}"
        );
    }

    fn gzip(tar: Vec<u8>) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn links_and_escaping_paths_are_refused() {
        let mut link = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        link.append_link(&mut header, "cautilus-pack.toml", "/etc/passwd")
            .unwrap();
        let error = PackFiles::from_archive(&gzip(link.into_inner().unwrap()), "l")
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a regular file"), "{error}");

        let mut escape = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..7].copy_from_slice(b"../evil");
        header.set_size(1);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        escape.append(&header, &b"x"[..]).unwrap();
        let error = PackFiles::from_archive(&gzip(escape.into_inner().unwrap()), "p")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`../evil` is not a path inside the pack"),
            "{error}"
        );
    }
}
