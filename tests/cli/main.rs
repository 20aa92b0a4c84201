//! The command line as a user meets it, through the real `netloop` binary.
//! Everything runs over the builtin network, so no ns-3 is needed, and every
//! scenario is short so that the whole target runs in seconds.

mod support;

mod blocks;
mod broken_scenarios;
mod commands;
mod config_hashes;
mod data_outputs;
mod docs;
mod equation_controller;
mod equations;
mod figures;
mod findings;
mod fmu;
mod golden_outputs;
mod graph;
mod graph_event_time;
mod graph_flows;
mod graph_fmu_rollback;
mod graph_rollback;
mod graph_sweep;
mod keyed_errors;
mod limits;
mod plot_figures;
mod plot_inputs;
mod plots;
mod read_once;
mod run_dir;
mod run_progress;
mod subsystems;
mod sweep_aggregates;
mod sweep_failures;
mod sweep_resume;
mod sweep_shards;
mod user_code;
mod validation;
