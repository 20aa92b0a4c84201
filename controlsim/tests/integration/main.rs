//! controlsim's integration tests, one binary with modules named by
//! behaviour. Every numerical test compares against a known answer written
//! next to its model, and every test can fail.

mod anti_windup;
mod closed_loop;
mod common;
mod config;
mod controllers;
mod convergence;
mod custom;
mod delay_margin;
mod equation_backlash;
mod equation_controller;
mod equations;
mod events;
mod graph;
mod graph_step;
mod linear;
#[path = "../support/linear4.rs"]
mod linear4;
mod linear_forms;
mod loop_view;
mod plants;
mod record;
mod snapshot;
