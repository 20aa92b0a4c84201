//! The kind of socket between the bridge and the server it starts.

use serde::{Deserialize, Serialize};

/// `[network.server] transport`: the kind of the connected socket pair the
/// bridge hands to the server it starts. The frames are the same on both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP on 127.0.0.1 with `TCP_NODELAY`.
    #[default]
    Tcp,
    /// A Unix-domain stream socket pair: no TCP/IP stack on the way.
    Unix,
    /// Two byte rings in shared memory with futex wake-ups: no system call
    /// on the way when both sides spin (`spin_wait`).
    Shm,
    /// The best for a server on this machine, which the bridge's own server
    /// always is: Unix.
    Auto,
}

impl Transport {
    /// Whether this is the default (a scenario need not write it).
    pub fn is_default(&self) -> bool {
        *self == Transport::default()
    }

    /// The transport actually used: `Auto` resolved.
    pub fn resolved(self) -> Transport {
        match self {
            Transport::Auto => Transport::Unix,
            other => other,
        }
    }
}
