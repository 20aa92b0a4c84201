//! `netloop-fmu-host`: the child process of an FMU with `process =
//! "separate"` (docs/scenario.md, "FMU plants and controllers"). netloop
//! starts it; it answers framed requests on stdin with framed replies on
//! stdout (controlsim::fmu::separate) until stdin closes.

use std::os::fd::FromRawFd;

fn main() {
    // The frames go to a copy of stdout; stdout itself becomes stderr, so
    // that whatever the FMU prints cannot corrupt them.
    // SAFETY: dup and dup2 on the process's own standard descriptors; the
    // new descriptor is owned by the File alone.
    let frames = unsafe {
        let fd = libc::dup(libc::STDOUT_FILENO);
        if fd < 0 || libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            eprintln!("netloop-fmu-host: cannot set up its output");
            std::process::exit(2);
        }
        std::fs::File::from_raw_fd(fd)
    };
    let input = std::io::stdin().lock();
    let code = controlsim::fmu::separate::serve(input, std::io::BufWriter::new(frames));
    std::process::exit(code);
}
