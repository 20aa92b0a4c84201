//! The `.fmu` archive, unpacked once into a cache keyed by its SHA-256.
//!
//! The cache is `$NETLOOP_FMU_CACHE`, else `$XDG_CACHE_HOME/netloop/fmu`,
//! else `~/.cache/netloop/fmu`, else `netloop-fmu` in the temporary
//! directory. An archive is unpacked into a fresh directory beside its final
//! place and renamed there, so a run that stops half-way, or two runs
//! unpacking the same FMU at once, never leave a partial copy behind a
//! complete-looking name. The same bytes at another path share the entry; a
//! changed file gets a new one.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::ConfigError;
use crate::fmu::model::{FmiVersion, Model};
use crate::key_path::KeyPath;

/// An FMU unpacked in the cache.
#[derive(Clone, Debug)]
pub struct Unpacked {
    /// The file as the scenario named it, for messages.
    pub file: PathBuf,
    /// Its unpacked directory in the cache.
    pub dir: PathBuf,
    /// The SHA-256 of the file, hex.
    pub hash: String,
}

impl Unpacked {
    /// Hashes `file` and unpacks it into the cache unless it is there.
    ///
    /// # Errors
    /// [`ConfigError`] at `key` for a file that cannot be read or is not a
    /// ZIP archive, or a cache that cannot be written.
    pub fn open(key: &KeyPath, file: &Path) -> Result<Self, ConfigError> {
        let bytes = crate::input::read_capped(file, crate::limits::MAX_FMU_BYTES, "an FMU")
            .map_err(|e| {
                ConfigError::invalid(key, format!("cannot read the FMU {}: {e}", file.display()))
            })?;
        let hash = hex::encode(Sha256::digest(&bytes));
        let root = cache_root();
        let dir = root.join(&hash);
        if !dir.join("modelDescription.xml").is_file() {
            unpack(key, file, &bytes, &root, &dir)?;
        }
        Ok(Unpacked {
            file: file.to_path_buf(),
            dir,
            hash,
        })
    }

    /// The text of `modelDescription.xml`.
    ///
    /// # Errors
    /// [`ConfigError`] at `key` when the archive has none.
    pub fn model_description(&self, key: &KeyPath) -> Result<String, ConfigError> {
        crate::input::read_text_capped(
            &self.dir.join("modelDescription.xml"),
            crate::limits::MAX_INPUT_BYTES,
            "one file",
        )
        .map_err(|e| {
            ConfigError::invalid(
                key,
                format!(
                    "the FMU {} has no readable modelDescription.xml: {e}",
                    self.file.display()
                ),
            )
        })
    }

    /// The platform folder netloop loads binaries from: `linux64` (FMI 2.0)
    /// or `x86_64-linux` (FMI 3.0).
    pub fn platform_folder(version: FmiVersion) -> &'static str {
        match version {
            FmiVersion::V2 => "linux64",
            FmiVersion::V3 => "x86_64-linux",
        }
    }

    /// The shared library of the Co-Simulation interface.
    pub fn binary(&self, model: &Model) -> PathBuf {
        self.dir
            .join("binaries")
            .join(Self::platform_folder(model.version))
            .join(format!("{}.so", model.model_identifier))
    }

    /// Checks that the FMU has a Linux x86-64 binary for its Co-Simulation
    /// interface.
    ///
    /// # Errors
    /// [`ConfigError`] at `key` naming the missing file.
    pub fn check_binary(&self, key: &KeyPath, model: &Model) -> Result<(), ConfigError> {
        let binary = self.binary(model);
        if binary.is_file() {
            return Ok(());
        }
        let found: Vec<String> = fs::read_dir(self.dir.join("binaries"))
            .map(|entries| {
                let mut v: Vec<String> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                v.sort();
                v
            })
            .unwrap_or_default();
        Err(ConfigError::invalid(
            key,
            format!(
                "the FMU {} has no Linux x86-64 binary: binaries/{}/{}.so is missing (binaries for: {})",
                self.file.display(),
                Self::platform_folder(model.version),
                model.model_identifier,
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            ),
        ))
    }
}

/// Where unpacked FMUs are kept; see the module docs.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("NETLOOP_FMU_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("netloop").join("fmu");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home)
            .join(".cache")
            .join("netloop")
            .join("fmu");
    }
    std::env::temp_dir().join("netloop-fmu")
}

fn unpack(
    key: &KeyPath,
    file: &Path,
    bytes: &[u8],
    root: &Path,
    dir: &Path,
) -> Result<(), ConfigError> {
    let cache_error = |e: std::io::Error| {
        ConfigError::invalid(
            key,
            format!(
                "cannot unpack the FMU into the cache {}: {e}",
                root.display()
            ),
        )
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| {
        ConfigError::invalid(
            key,
            format!("{} is not an FMU (a ZIP archive): {e}", file.display()),
        )
    })?;
    // The archive must hold a model description before anything is written.
    {
        let mut entry = archive.by_name("modelDescription.xml").map_err(|_| {
            ConfigError::invalid(
                key,
                format!("the FMU {} has no modelDescription.xml", file.display()),
            )
        })?;
        // Read to see that it can be; an archive entry may claim any size.
        let mut sink = Vec::new();
        (&mut entry)
            .take(crate::limits::MAX_INPUT_BYTES)
            .read_to_end(&mut sink)
            .map_err(|e| {
                ConfigError::invalid(
                    key,
                    format!(
                        "cannot read modelDescription.xml in {}: {e}",
                        file.display()
                    ),
                )
            })?;
    }
    fs::create_dir_all(root).map_err(cache_error)?;
    let staging = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(root)
        .map_err(cache_error)?;
    archive.extract(staging.path()).map_err(|e| {
        ConfigError::invalid(
            key,
            format!("cannot unpack the FMU {}: {e}", file.display()),
        )
    })?;
    let staged = staging.keep();
    match fs::rename(&staged, dir) {
        Ok(()) => Ok(()),
        // Another run put the same archive there first: same bytes, keep it.
        Err(_) if dir.join("modelDescription.xml").is_file() => {
            let _ = fs::remove_dir_all(&staged);
            Ok(())
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&staged);
            Err(cache_error(e))
        }
    }
}

/// A per-instance view of a cached FMU for the `fmi` crate, which wants to
/// own a temporary directory holding the unpacked archive: a fresh temporary
/// directory whose entries link to the cached copy (nothing is unpacked or
/// copied again).
pub(crate) fn linked_view(unpacked: &Unpacked) -> std::io::Result<tempfile::TempDir> {
    let view = tempfile::Builder::new().prefix("netloop-fmu-").tempdir()?;
    for entry in fs::read_dir(&unpacked.dir)? {
        let entry = entry?;
        std::os::unix::fs::symlink(entry.path(), view.path().join(entry.file_name()))?;
    }
    Ok(view)
}
