//! `process = "separate"`: a Co-Simulation FMU run in a child process, so
//! that an FMU that crashes (`abort()`, a segmentation fault) or hangs ends
//! in a run error naming the FMU, the call and the simulated time instead of
//! taking netloop down with it.
//!
//! The child is the `netloop-fmu-host` program (found beside the running
//! executable, or at `$NETLOOP_FMU_HOST`), which runs [`serve`]. Parent and
//! child speak over the child's stdin and stdout: each message is a frame of
//! a 4-byte little-endian payload length and a bincode payload, in the
//! protocol crate's bincode layout (little-endian, fixed-width integers,
//! 16 MiB limit). The parent sends one [`Request`], the child makes the same
//! [`Slave`] call an in-process run makes and sends one [`Reply`]: the
//! values are the same bits, so results equal the in-process ones bit for
//! bit. The child moves its own stdout to stderr before loading the FMU,
//! so whatever the FMU prints cannot corrupt the frames.
//!
//! Every reply is awaited at most `timeout` (wall clock); an FMU that does
//! not answer by then is killed, and so is every child whose parent goes
//! away (its stdin closes).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child as Process, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use bincode::config::{Configuration, Fixint, Limit, LittleEndian};
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::fmu::model::FmiVersion;
use crate::fmu::slave::{FmuCallError, Slave};
use crate::fmu::{FmuValue, FmuValues};
use crate::key_path::KeyPath;

/// The largest frame either side accepts (the protocol crate's limit).
const MAX_PAYLOAD: usize = 16 * 1024 * 1024;

const CONFIG: Configuration<LittleEndian, Fixint, Limit<MAX_PAYLOAD>> = bincode::config::standard()
    .with_little_endian()
    .with_fixed_int_encoding()
    .with_limit();

/// The name of the child program.
pub const HOST_PROGRAM: &str = "netloop-fmu-host";

/// What the parent asks of the child: one [`Slave`] call each.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Load the FMU at `path`, set its start values and initialise it at
    /// `start_time` ([`Slave::start`]); `key` is the component's table.
    Start {
        key: KeyPath,
        path: PathBuf,
        instance_name: String,
        parameters: Vec<(String, Value)>,
        start: Vec<(String, Value)>,
        start_time: f64,
    },
    SetReals {
        vrs: Vec<u32>,
        values: Vec<f64>,
    },
    GetReals {
        vrs: Vec<u32>,
    },
    /// `doStep` from `time` over `h`, ending at `t_end`.
    DoStep {
        time: f64,
        h: f64,
        t_end: f64,
    },
    SaveState,
    RestoreState,
}

/// An [`FmuValue`] on the wire: tagged, as bincode needs (the scenario's
/// form is untagged).
#[derive(Debug, Serialize, Deserialize)]
pub enum Value {
    Boolean(bool),
    Integer(i64),
    Real(f64),
    Text(String),
}

fn to_wire(values: &FmuValues) -> Vec<(String, Value)> {
    values
        .iter()
        .map(|(name, v)| {
            let v = match v {
                FmuValue::Boolean(b) => Value::Boolean(*b),
                FmuValue::Integer(i) => Value::Integer(*i),
                FmuValue::Real(x) => Value::Real(*x),
                FmuValue::Text(s) => Value::Text(s.clone()),
            };
            (name.clone(), v)
        })
        .collect()
}

fn from_wire(values: Vec<(String, Value)>) -> FmuValues {
    values
        .into_iter()
        .map(|(name, v)| {
            let v = match v {
                Value::Boolean(b) => FmuValue::Boolean(b),
                Value::Integer(i) => FmuValue::Integer(i),
                Value::Real(x) => FmuValue::Real(x),
                Value::Text(s) => FmuValue::Text(s),
            };
            (name, v)
        })
        .collect()
}

/// The child's answer to one [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    Done,
    Reals(Vec<f64>),
    /// An FMI call failed (the [`FmuCallError`] an in-process run gets).
    Call {
        call: String,
        status: String,
    },
    /// `Start` failed: the [`ConfigError`]'s key and reason.
    Config {
        key: KeyPath,
        reason: String,
    },
}

/// Every FMI function name a [`Reply::Call`] can carry, so that the
/// parent's error keeps `&'static str` names.
const CALLS: &[&str] = &[
    "fmi2SetReal",
    "fmi3SetFloat64",
    "fmi2GetReal",
    "fmi3GetFloat64",
    "fmi2DoStep",
    "fmi3DoStep",
    "fmi2GetFMUstate",
    "fmi3GetFMUState",
    "fmi2SetFMUstate",
    "fmi3SetFMUState",
];

fn static_call(call: &str) -> &'static str {
    CALLS
        .iter()
        .find(|c| **c == call)
        .copied()
        .unwrap_or("an FMI function")
}

fn write_frame<T: Serialize>(out: &mut impl Write, message: &T) -> std::io::Result<()> {
    let payload = bincode::serde::encode_to_vec(message, CONFIG)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&payload);
    out.write_all(&frame)?;
    out.flush()
}

fn decode<T: for<'de> Deserialize<'de>>(payload: &[u8]) -> std::io::Result<T> {
    let (message, used) = bincode::serde::decode_from_slice(payload, CONFIG)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    if used != payload.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "trailing bytes after the message",
        ));
    }
    Ok(message)
}

/// The child's side: answers requests from `input` on `output` until
/// `input` ends. Returns the process exit code.
pub fn serve(mut input: impl Read, mut output: impl Write) -> i32 {
    let mut slave: Option<Slave> = None;
    loop {
        let mut len = [0u8; 4];
        match input.read_exact(&mut len) {
            Ok(()) => {}
            // The parent is done (or gone): free the FMU and leave.
            Err(_) => return 0,
        }
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_PAYLOAD {
            eprintln!("{HOST_PROGRAM}: a request of {len} bytes exceeds the limit");
            return 2;
        }
        let mut payload = vec![0u8; len];
        if input.read_exact(&mut payload).is_err() {
            return 0;
        }
        let request: Request = match decode(&payload) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{HOST_PROGRAM}: a request does not decode: {e}");
                return 2;
            }
        };
        let reply = answer(&mut slave, request);
        if write_frame(&mut output, &reply).is_err() {
            return 0;
        }
    }
}

fn answer(slave: &mut Option<Slave>, request: Request) -> Reply {
    let call_error = |e: FmuCallError| Reply::Call {
        call: e.call.to_string(),
        status: e.status,
    };
    if let Request::Start {
        key,
        path,
        instance_name,
        parameters,
        start,
        start_time,
    } = request
    {
        let started = crate::fmu::load(&key, &path).and_then(|(unpacked, model)| {
            let values = model.start_values(&key, &from_wire(parameters), &from_wire(start))?;
            Slave::start(&key, &unpacked, &model, &instance_name, &values, start_time)
        });
        return match started {
            Ok(s) => {
                *slave = Some(s);
                Reply::Done
            }
            Err(e) => Reply::Config {
                key: e.key().clone(),
                reason: reason_of(&e),
            },
        };
    }
    let Some(s) = slave.as_mut() else {
        return Reply::Config {
            key: KeyPath::default(),
            reason: "a call before the FMU was started".into(),
        };
    };
    let done = |r: Result<(), FmuCallError>| r.map_or_else(call_error, |()| Reply::Done);
    match request {
        Request::Start { .. } => unreachable!("answered above"),
        Request::SetReals { vrs, values } => done(s.set_reals(&vrs, &values)),
        Request::GetReals { vrs } => {
            let mut values = vec![0.0; vrs.len()];
            s.get_reals(&vrs, &mut values)
                .map_or_else(call_error, |()| Reply::Reals(values))
        }
        Request::DoStep { time, h, t_end } => {
            s.time = time;
            done(s.do_step(h, t_end))
        }
        Request::SaveState => done(s.save_state()),
        Request::RestoreState => done(s.restore_state()),
    }
}

/// A [`ConfigError`]'s text without the key in front.
fn reason_of(e: &ConfigError) -> String {
    let text = e.to_string();
    let key = e.key();
    text.strip_prefix(&format!("`{key}`: "))
        .or_else(|| text.strip_prefix(&format!("`{key}` ")))
        .unwrap_or(&text)
        .to_string()
}

/// Why a child gave no reply.
enum Silence {
    /// It did not answer within the timeout; it was killed.
    Timeout,
    /// Its process ended (the status, as text).
    Died,
    /// It answered something that does not decode.
    Garbled(String),
}

/// The parent's side: one FMU instance in a child process.
pub struct Child {
    process: Process,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    timeout: Duration,
    /// The FMU's file name, for messages.
    name: String,
    version: FmiVersion,
    /// The FMU's current time, seconds (kept here, as [`Slave`] does).
    pub(crate) time: f64,
    /// Set once the child crashed, hung or garbled: every later call fails
    /// with this error.
    dead: Option<FmuCallError>,
    /// The time of the last saved state.
    saved_time: Option<f64>,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("Child")
            .field("fmu", &self.name)
            .field("pid", &self.process.id())
            .field("time", &self.time)
            .finish()
    }
}

/// Where the child program is: `$NETLOOP_FMU_HOST`, else beside the running
/// executable (and, for test binaries in `target/*/deps`, one level up).
fn host_program() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NETLOOP_FMU_HOST").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(HOST_PROGRAM), dir.parent()?.join(HOST_PROGRAM)]
        .into_iter()
        .find(|p| p.is_file())
}

impl Child {
    /// Starts the child and the FMU in it (see [`Request::Start`]).
    ///
    /// # Errors
    /// [`ConfigError`] at `key.process` when the child cannot be started, at
    /// the key the child names when the FMU cannot be, and at `key.path`
    /// when the child fails while starting it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        key: &KeyPath,
        path: &Path,
        version: FmiVersion,
        instance_name: &str,
        parameters: &FmuValues,
        start: &FmuValues,
        start_time: f64,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        let name = crate::fmu::slave::file_name(path);
        let program = host_program().ok_or_else(|| {
            ConfigError::invalid(
                key.child("process"),
                format!(
                    "process = \"separate\" runs the FMU in the program {HOST_PROGRAM}, which is \
                     neither beside this executable nor at $NETLOOP_FMU_HOST"
                ),
            )
        })?;
        let mut process = netloop_child_process::die_with_parent(&mut Command::new(&program))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                ConfigError::invalid(
                    key.child("process"),
                    format!("cannot start {}: {e}", program.display()),
                )
            })?;
        let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
            unreachable!("both are piped")
        };
        let mut child = Child {
            process,
            stdin: Some(stdin),
            stdout,
            timeout,
            name,
            version,
            time: start_time,
            dead: None,
            saved_time: None,
        };
        let request = Request::Start {
            key: key.clone(),
            path: path.to_path_buf(),
            instance_name: instance_name.to_string(),
            parameters: to_wire(parameters),
            start: to_wire(start),
            start_time,
        };
        let init = |e: FmuCallError| {
            ConfigError::invalid(key.child("path"), format!("initialisation failed: {e}"))
        };
        match child.ask(&request, "fmi2Instantiate", "fmi3InstantiateCoSimulation") {
            Ok(Reply::Done) => Ok(child),
            Ok(Reply::Config { key, reason }) => Err(ConfigError::invalid(key, reason)),
            Ok(other) => Err(init(
                child.garbled("fmi2Instantiate", format!("the wrong reply {other:?}")),
            )),
            Err(e) => Err(init(e)),
        }
    }

    fn call(&self, v2: &'static str, v3: &'static str) -> &'static str {
        match self.version {
            FmiVersion::V2 => v2,
            FmiVersion::V3 => v3,
        }
    }

    fn error(&self, call: &'static str, status: String) -> FmuCallError {
        FmuCallError {
            fmu: self.name.clone(),
            call,
            status,
            time: self.time,
        }
    }

    fn garbled(&mut self, call: &'static str, what: String) -> FmuCallError {
        let _ = self.process.kill();
        let _ = self.process.wait();
        let e = self.error(call, format!("nothing usable: its process sent {what}"));
        self.dead = Some(e.clone());
        e
    }

    /// Sends `request` and waits for the reply; `v2`/`v3` name the FMI call
    /// it makes, for the error when the child fails.
    fn ask(
        &mut self,
        request: &Request,
        v2: &'static str,
        v3: &'static str,
    ) -> Result<Reply, FmuCallError> {
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        let call = self.call(v2, v3);
        let sent = match self.stdin.as_mut() {
            Some(stdin) => write_frame(stdin, request).is_ok(),
            None => false,
        };
        let reply = if sent {
            self.receive()
        } else {
            Err(Silence::Died)
        };
        match reply {
            Ok(r) => Ok(r),
            Err(silence) => {
                let status = match silence {
                    Silence::Timeout => {
                        let _ = self.process.kill();
                        let _ = self.process.wait();
                        format!(
                            "nothing within the timeout of {}: the FMU hangs, and its process \
                             was killed",
                            show_duration(self.timeout)
                        )
                    }
                    Silence::Died | Silence::Garbled(_) => {
                        // Give a dying child a moment to be reaped.
                        let status = self.wait_briefly();
                        match silence {
                            Silence::Garbled(what) => {
                                format!("nothing usable: its process sent {what}")
                            }
                            _ => format!("nothing: the FMU's process {status}"),
                        }
                    }
                };
                let e = self.error(call, status);
                self.dead = Some(e.clone());
                Err(e)
            }
        }
    }

    /// How the child ended, waiting up to a second for it (then killing it).
    fn wait_briefly(&mut self) -> String {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            match self.process.try_wait() {
                Ok(Some(status)) => return describe_exit(status),
                Ok(None) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                _ => {
                    let _ = self.process.kill();
                    let _ = self.process.wait();
                    return "closed its output and was killed".into();
                }
            }
        }
    }

    fn receive(&mut self) -> Result<Reply, Silence> {
        let deadline = Instant::now() + self.timeout;
        let mut len = [0u8; 4];
        self.read_until(&mut len, deadline)?;
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_PAYLOAD {
            return Err(Silence::Garbled(format!("a frame of {len} bytes")));
        }
        let mut payload = vec![0u8; len];
        self.read_until(&mut payload, deadline)?;
        decode(&payload)
            .map_err(|e| Silence::Garbled(format!("a reply that does not decode ({e})")))
    }

    /// Fills `buf` from the child's stdout, waiting until `deadline` at most.
    fn read_until(&mut self, buf: &mut [u8], deadline: Instant) -> Result<(), Silence> {
        let mut filled = 0;
        while filled < buf.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut fd = libc::pollfd {
                fd: self.stdout.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, for the duration of the call.
            let ready = unsafe { libc::poll(&mut fd, 1, ms) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Silence::Died);
            }
            if ready == 0 {
                return Err(Silence::Timeout);
            }
            match self.stdout.read(&mut buf[filled..]) {
                Ok(0) => return Err(Silence::Died),
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(Silence::Died),
            }
        }
        Ok(())
    }

    fn expect_done(&mut self, reply: Reply, call: &'static str) -> Result<(), FmuCallError> {
        match reply {
            Reply::Done => Ok(()),
            Reply::Call { call, status } => Err(self.error(static_call(&call), status)),
            other => Err(self.garbled(call, format!("the wrong reply {other:?}"))),
        }
    }

    pub(crate) fn set_reals(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuCallError> {
        let request = Request::SetReals {
            vrs: vrs.to_vec(),
            values: values.to_vec(),
        };
        let reply = self.ask(&request, "fmi2SetReal", "fmi3SetFloat64")?;
        self.expect_done(reply, self.call("fmi2SetReal", "fmi3SetFloat64"))
    }

    pub(crate) fn get_reals(
        &mut self,
        vrs: &[u32],
        values: &mut [f64],
    ) -> Result<(), FmuCallError> {
        let call = self.call("fmi2GetReal", "fmi3GetFloat64");
        match self.ask(
            &Request::GetReals { vrs: vrs.to_vec() },
            "fmi2GetReal",
            "fmi3GetFloat64",
        )? {
            Reply::Reals(v) if v.len() == values.len() => {
                values.copy_from_slice(&v);
                Ok(())
            }
            Reply::Call { call, status } => Err(self.error(static_call(&call), status)),
            other => Err(self.garbled(call, format!("the wrong reply {other:?}"))),
        }
    }

    pub(crate) fn do_step(&mut self, h: f64, t_end: f64) -> Result<(), FmuCallError> {
        let request = Request::DoStep {
            time: self.time,
            h,
            t_end,
        };
        let reply = self.ask(&request, "fmi2DoStep", "fmi3DoStep")?;
        self.expect_done(reply, self.call("fmi2DoStep", "fmi3DoStep"))?;
        self.time = t_end;
        Ok(())
    }

    pub(crate) fn save_state(&mut self) -> Result<(), FmuCallError> {
        let reply = self.ask(&Request::SaveState, "fmi2GetFMUstate", "fmi3GetFMUState")?;
        self.expect_done(reply, self.call("fmi2GetFMUstate", "fmi3GetFMUState"))?;
        self.saved_time = Some(self.time);
        Ok(())
    }

    /// Restores the saved state, its time included.
    pub(crate) fn restore_state(&mut self) -> Result<(), FmuCallError> {
        let reply = self.ask(&Request::RestoreState, "fmi2SetFMUstate", "fmi3SetFMUState")?;
        self.expect_done(reply, self.call("fmi2SetFMUstate", "fmi3SetFMUState"))?;
        if let Some(t) = self.saved_time {
            self.time = t;
        }
        Ok(())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Closing stdin ends a healthy child (it frees the FMU and exits).
        drop(self.stdin.take());
        if self.dead.is_none() {
            let _ = self.wait_briefly();
        }
    }
}

/// "killed by signal 6 (SIGABRT)", "exited with status 3".
fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = match signal {
            libc::SIGABRT => " (SIGABRT)",
            libc::SIGSEGV => " (SIGSEGV)",
            libc::SIGBUS => " (SIGBUS)",
            libc::SIGFPE => " (SIGFPE)",
            libc::SIGILL => " (SIGILL)",
            libc::SIGKILL => " (SIGKILL)",
            libc::SIGTERM => " (SIGTERM)",
            _ => "",
        };
        format!("was killed by signal {signal}{name}")
    } else {
        match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "ended".into(),
        }
    }
}

fn show_duration(d: Duration) -> String {
    netloop_time::SimTime(d.as_nanos().min(u128::from(u64::MAX)) as u64).to_string()
}
