//! netloop's co-simulation core: a control side (controlsim) and a network
//! stepped together under one of the three sync schemes ([`session`],
//! [`sync_scheme`]), the networks it steps (the builtin statistical channel
//! and the ns-3 server's client side), the flows between nodes, the packet
//! [`ledger`] and the nodes plants move ([`mobility`]). It does no file I/O
//! and knows nothing of scenario files: the application (`bridge`) resolves
//! a scenario into the plain types of [`resolved`], passes a reader for the
//! files a scenario names ([`network::ReadFile`]), and writes what the
//! ledger emits (its fate events) to `packets.csv`.
//!
//! # Lifecycle
//! 1. **Resolve** (the application): a scenario becomes a
//!    [`resolved::ResolvedRun`] (the control side's configuration, each
//!    loop's [`resolved::LoopNetwork`], the [`sync_scheme::SyncScheme`] in
//!    steps), the control system is built from it, and each moving node
//!    becomes a [`mobility::NodeMotion`]; every problem is the
//!    application's keyed error before anything runs.
//! 2. **Build a session**: the application starts a [`network::Network`]
//!    (builtin or ns-3) and hands it, the [`ledger::Ledger`] over the
//!    [`flows::FlowTable`] and a [`ledger::FateSink`] to a
//!    `NetworkDriver` (`session/network_driver.rs`), inside a
//!    [`session::graph::GraphSession`] over the built graph (graph
//!    scenarios, and the graphs `[[loops]]` expand into) and its
//!    [`session::graph::GraphPlan`], the control side the scheme drivers
//!    are generic over (`ControlSide`).
//! 3. **Run**: [`session::graph::GraphSession::run`] drives both sides to
//!    the end under the scheme; each step the packets sent are announced to
//!    the ledger, the network is stepped, and every delivery and loss it
//!    reports is settled by the ledger, which emits each packet's fate to
//!    the sink.
//! 4. **Finish**: the driver closes the packets still in flight
//!    ([`session::graph::GraphSession::finish`]) and the
//!    network is finished (its summary); the network, the ledger's counts,
//!    [`delay_stats`] and [`aoi`] statistics go into the run's summary,
//!    which the application writes.

pub mod aoi;
pub mod delay_stats;
pub mod echo;
pub mod flows;
pub mod ledger;
pub mod mobility;
pub mod network;
pub mod resolved;
pub mod session;
pub mod sync_scheme;
