//! netloop's co-simulation core: the networks a run steps (the builtin
//! statistical channel and the ns-3 server's client side), the flows
//! between nodes, and the packet [`ledger`]. It does no file I/O: the
//! application (`bridge`) resolves a scenario into the plain types of
//! [`resolved`], passes a reader for the files a scenario names
//! ([`network::ReadFile`]), and writes what the ledger emits (its fate
//! events) to `packets.csv`.
//!
//! # Lifecycle
//! 1. The application builds a [`flows::FlowTable`] from the resolved loops
//!    and a [`network::Network`] (builtin or ns-3), and configures the
//!    network with the table's flow specs.
//! 2. A [`ledger::Ledger`] is made over the flow table with a
//!    [`ledger::FateSink`]; each step, the sync scheme announces the
//!    packets it sends to the ledger, steps the network, and hands every
//!    delivery and loss it reports to the ledger, which settles each
//!    packet's fate and emits it to the sink.
//! 3. At the end the in-flight packets are closed, the network is finished
//!    (its summary), and the ledger's counts, [`delay_stats`] and [`aoi`]
//!    statistics go into the run's summary.

pub mod aoi;
pub mod delay_stats;
pub mod echo;
pub mod flows;
pub mod ledger;
pub mod network;
pub mod resolved;
