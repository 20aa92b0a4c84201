//! The command line as a user meets it, through the real `netloop` binary.
//! Everything runs over the builtin network, so no ns-3 is needed, and every
//! scenario is short so that the whole target runs in seconds.

mod support;

mod broken_scenarios;
mod commands;
mod docs;
mod findings;
mod plots;
mod run_dir;
mod sweep_aggregates;
mod sweep_failures;
mod sweep_resume;
mod sweep_shards;
mod user_code;
mod validation;
