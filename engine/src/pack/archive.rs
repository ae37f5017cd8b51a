//! A pack archive: a gzip-compressed tar of the manifest and the files it
//! lists, written so that the same files give the same bytes (entries in
//! path order, zero times and owners, fixed modes, no gzip timestamp), and
//! read defensively (regular files only, paths inside the pack, bounded
//! size and count).
//!
//! Sizes are bounded before anything is unpacked ([`Bounds`]): a first
//! pass reads only the tar headers (the data is decompressed and dropped,
//! in small buffers), refusing an entry that declares more than
//! [`MAX_ENTRY_BYTES`], declared sizes that add up past
//! [`MAX_UNPACKED_BYTES`], more than [`MAX_ENTRIES`] entries, or a long
//! name or extended header past [`MAX_HEADER_BYTES`] (which the tar reader
//! would otherwise hold whole); the second pass reads each entry into
//! memory no further than its declared size. Both passes read the gzip
//! stream through a counter that refuses more decompressed bytes than the
//! bounds allow, so a zero bomb after the last entry, or one that lies in
//! its headers, stops there too. A pack in memory is at most the bounds.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use super::PackError;
pub use super::manifest::sha256_hex;
use super::manifest::{MANIFEST, Manifest, valid_relative_path};

/// The largest file a pack may hold (after decompression).
pub const MAX_ENTRY_BYTES: u64 = 128 * 1024 * 1024;
/// The largest archive content read (after decompression).
pub const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;
/// The most entries read from an archive.
pub const MAX_ENTRIES: usize = 1024;
/// The largest GNU long name or PAX extended header.
pub const MAX_HEADER_BYTES: u64 = 64 * 1024;
/// The largest archive file read (compressed).
pub const MAX_ARCHIVE_BYTES: u64 = MAX_UNPACKED_BYTES;

/// What an archive may unpack to.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub entry: u64,
    pub total: u64,
    pub entries: usize,
    pub header: u64,
}

impl Bounds {
    pub const DEFAULT: Self = Self {
        entry: MAX_ENTRY_BYTES,
        total: MAX_UNPACKED_BYTES,
        entries: MAX_ENTRIES,
        header: MAX_HEADER_BYTES,
    };

    /// The most tar bytes the bounded content can take: the data, and per
    /// entry a header, padding and a long name (and the end blocks).
    fn stream(&self) -> u64 {
        let per_entry = 2 * 512 + 512 + self.header;
        self.total
            .saturating_add(per_entry.saturating_mul(self.entries as u64 + 1))
            .saturating_add(1024 + 10 * 1024)
    }
}

/// Reads an archive file, refusing one past [`MAX_ARCHIVE_BYTES`] without
/// reading further (a device or a pipe never ends).
pub fn read_archive_file(path: &Path) -> Result<Vec<u8>, PackError> {
    let io = |source| PackError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_ARCHIVE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
        return Err(PackError::Archive {
            origin: path.display().to_string(),
            message: format!(
                "larger than {} MiB, the most a pack archive may be",
                MAX_ARCHIVE_BYTES >> 20
            ),
        });
    }
    Ok(bytes)
}

/// A reader that fails once more than `left` bytes came through.
struct Capped<R> {
    inner: R,
    left: u64,
    cap: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // At the cap: only the end of the stream is allowed.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(format!(
                    "it decompresses to more than the {} MiB its bounded content can take (a compression bomb?)",
                    self.cap >> 20
                ))),
            };
        }
        let most = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..most])?;
        self.left -= read as u64;
        Ok(read)
    }
}

fn capped<'a>(bytes: &'a [u8], bounds: &Bounds) -> Capped<flate2::read::GzDecoder<&'a [u8]>> {
    Capped {
        inner: flate2::read::GzDecoder::new(bytes),
        left: bounds.stream(),
        cap: bounds.stream(),
    }
}

/// `bytes` for a message: whole MiB, else bytes.
fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{bytes} bytes")
    }
}

/// The first pass: every header, no data kept; refuses what is past
/// `bounds` by what the headers declare.
fn check_sizes(
    bytes: &[u8],
    bounds: &Bounds,
    bad: &dyn Fn(String) -> PackError,
) -> Result<(), PackError> {
    let mut tar = tar::Archive::new(capped(bytes, bounds));
    let entries = tar
        .entries()
        .map_err(|e| bad(format!("not a pack archive (gzip-compressed tar): {e}")))?
        .raw(true);
    let (mut count, mut total) = (0usize, 0u64);
    let mut long_name: Option<String> = None;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("a damaged entry: {e}")))?;
        let header = entry.header();
        let size = header
            .entry_size()
            .map_err(|e| bad(format!("a damaged entry header: {e}")))?;
        let kind = header.entry_type();
        let name = long_name
            .take()
            .unwrap_or_else(|| String::from_utf8_lossy(&header.path_bytes()).into_owned());
        if kind.is_gnu_longname()
            || kind.is_gnu_longlink()
            || kind.is_pax_local_extensions()
            || kind.is_pax_global_extensions()
        {
            if size > bounds.header {
                return Err(bad(format!(
                    "an extended header or long name of {size} bytes, more than the {} bytes one may take",
                    bounds.header
                )));
            }
            if kind.is_gnu_longname() {
                let mut text = Vec::new();
                entry
                    .read_to_end(&mut text)
                    .map_err(|e| bad(format!("a damaged long name: {e}")))?;
                let text = String::from_utf8_lossy(&text);
                long_name = Some(text.trim_end_matches('\0').to_string());
            }
            continue;
        }
        count += 1;
        if count > bounds.entries {
            return Err(bad(format!("more than {} entries", bounds.entries)));
        }
        if size > bounds.entry {
            return Err(bad(format!(
                "`{name}` would unpack to {}, more than the {} a pack entry may hold",
                mib(size),
                mib(bounds.entry)
            )));
        }
        total = total.saturating_add(size);
        if total > bounds.total {
            return Err(bad(format!(
                "its entries would unpack to more than {} (at `{name}`)",
                mib(bounds.total)
            )));
        }
    }
    // Read to the end, so a bomb after the last entry is refused.
    std::io::copy(&mut tar.into_inner(), &mut std::io::sink())
        .map_err(|e| bad(format!("damaged after its last entry: {e}")))?;
    Ok(())
}
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
    /// exactly the manifest and the files it lists, nothing else, within
    /// [`Bounds::DEFAULT`].
    pub fn from_archive(bytes: &[u8], origin: &str) -> Result<Self, PackError> {
        Self::from_archive_within(bytes, origin, &Bounds::DEFAULT)
    }

    /// [`Self::from_archive`] within `bounds`.
    pub fn from_archive_within(
        bytes: &[u8],
        origin: &str,
        bounds: &Bounds,
    ) -> Result<Self, PackError> {
        let bad = |message: String| PackError::Archive {
            origin: origin.to_string(),
            message,
        };
        check_sizes(bytes, bounds, &bad)?;
        let mut tar = tar::Archive::new(capped(bytes, bounds));
        let mut entries: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut total = 0u64;
        for entry in tar
            .entries()
            .map_err(|e| bad(format!("not a pack archive (gzip-compressed tar): {e}")))?
        {
            let mut entry = entry.map_err(|e| bad(format!("a damaged entry: {e}")))?;
            if entries.len() >= bounds.entries {
                return Err(bad(format!("more than {} entries", bounds.entries)));
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
            // The size as the entry's headers say (a PAX header may set it).
            let size = entry.size();
            total = total.saturating_add(size);
            if size > bounds.entry || total > bounds.total {
                return Err(bad(format!(
                    "`{path}` would unpack to {} ({} in all so far), more than the {} a pack entry may hold or the {} of a whole pack",
                    mib(size),
                    mib(total),
                    mib(bounds.entry),
                    mib(bounds.total)
                )));
            }
            let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            (&mut entry)
                .take(size)
                .read_to_end(&mut data)
                .map_err(|e| bad(format!("`{path}`: {e}")))?;
            if data.len() as u64 != size {
                return Err(bad(format!(
                    "`{path}` ends after {} of its {size} bytes",
                    data.len()
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

    /// A tar of (path, size) entries, each of zeros, with its end blocks.
    fn zeros_tar(entries: &[(&str, u64)]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, size) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(*size);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, path, std::io::repeat(0).take(*size))
                .unwrap();
        }
        tar.into_inner().unwrap()
    }

    const SMALL: Bounds = Bounds {
        entry: 64 * 1024,
        total: 96 * 1024,
        entries: 4,
        header: 1024,
    };

    #[test]
    fn sizes_past_the_bounds_are_refused_before_they_are_unpacked() {
        let refused = |tar: Vec<u8>| {
            PackFiles::from_archive_within(&gzip(tar), "b.tgz", &SMALL)
                .unwrap_err()
                .to_string()
        };
        let error = refused(zeros_tar(&[
            ("cautilus-pack.toml", 10),
            ("big.wasm", 65 * 1024),
        ]));
        assert!(
            error.contains(
                "`big.wasm` would unpack to 66560 bytes, more than the 65536 bytes a pack entry may hold"
            ),
            "{error}"
        );
        let error = refused(zeros_tar(&[("a", 60 * 1024), ("b", 60 * 1024)]));
        assert!(
            error.contains("would unpack to more than 98304 bytes (at `b`)"),
            "{error}"
        );
        let error = refused(zeros_tar(&[
            ("a", 1),
            ("b", 1),
            ("c", 1),
            ("d", 1),
            ("e", 1),
        ]));
        assert!(error.contains("more than 4 entries"), "{error}");
        // A long name past its bound.
        let long = format!("{}/x", "d".repeat(2000));
        let error = refused(zeros_tar(&[(long.as_str(), 1)]));
        assert!(error.contains("long name of"), "{error}");
        // Zeros after the end of the tar: the stream is capped.
        let mut trailing = zeros_tar(&[("a", 1)]);
        trailing.extend(std::iter::repeat_n(0u8, 4 << 20));
        let error = refused(trailing);
        assert!(error.contains("a compression bomb"), "{error}");
        // Within the bounds, a long path reads back.
        let long = format!("{}/s.wasm", "d".repeat(150));
        let text = format!(
            "[pack]\nname = \"demo\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"{long}\"\nkind = \"scorer\"\nids = [\"s\"]\nsha256 = \"{}\"\n",
            sha256_hex(b"x")
        );
        let files = PackFiles {
            manifest: Manifest::parse(&text, Path::new("m")).unwrap(),
            files: BTreeMap::from([(long.clone(), b"x".to_vec())]),
        };
        let back = PackFiles::from_archive_within(&files.to_archive(), "ok", &SMALL).unwrap();
        assert_eq!(back.files[&long], b"x");
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
