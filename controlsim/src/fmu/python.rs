//! FMUs exported by PythonFMU (a controller written in Python): their
//! Linux binary calls the Python C API but is not linked to libpython (it
//! expects to be loaded by a Python process, as FMPy is), so netloop loads
//! libpython into the process first, with its symbols global, once.
//!
//! Which libpython: `$NETLOOP_LIBPYTHON` (a path), else the one of the
//! Python that `$NETLOOP_PYTHON` names, else of `python3` on the `PATH`
//! (asked through `sysconfig`). The Python code of the FMU then runs in that
//! Python, with its installed packages.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Loads libpython once per process; the error says what to set.
pub(crate) fn load_libpython() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED.get_or_init(load).clone()
}

fn load() -> Result<(), String> {
    let path = match std::env::var_os("NETLOOP_LIBPYTHON").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => ask_python()?,
    };
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("bad libpython path {}", path.display()))?;
    // SAFETY: dlopen of a shared library by path; the handle is never
    // closed, so the symbols stay for the FMUs that use them.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a thread-local C string or null.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "unknown error".to_string()
            } else {
                std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(format!(
            "this PythonFMU export needs libpython, and {} could not be loaded: {why} \
             (set NETLOOP_LIBPYTHON to a libpython3.x.so)",
            path.display()
        ));
    }
    Ok(())
}

fn ask_python() -> Result<PathBuf, String> {
    let python = std::env::var_os("NETLOOP_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into());
    let out = Command::new(&python)
        .args([
            "-c",
            "import os, sysconfig; print(os.path.join(sysconfig.get_config_var('LIBDIR') or '', \
             sysconfig.get_config_var('LDLIBRARY') or ''))",
        ])
        .output()
        .map_err(|e| {
            format!(
                "this PythonFMU export needs libpython: cannot run {} to find it ({e}); \
                 set NETLOOP_LIBPYTHON or NETLOOP_PYTHON",
                python.to_string_lossy()
            )
        })?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // A static build (LDLIBRARY = libpython3.x.a) has no shared library to load.
    if !out.status.success() || !text.ends_with(".so") && !text.contains(".so.") {
        return Err(format!(
            "this PythonFMU export needs a shared libpython, and {} has none ({text:?}); \
             set NETLOOP_LIBPYTHON to a libpython3.x.so",
            python.to_string_lossy()
        ));
    }
    Ok(PathBuf::from(text))
}
