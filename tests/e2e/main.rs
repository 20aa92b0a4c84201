//! End-to-end tests of the whole tool: the real ns-3 server on a real
//! socket, and the real `netloop` binary. One test binary, modules named by
//! behaviour (the server must be built: `scripts/setup.sh`).

mod support;

mod blocks_over_ns3;
mod cosim_ns3;
mod coupling;
mod custom_params;
mod equation_controller;
mod examples;
mod fmu_examples;
mod graph_flows_ns3;
mod graph_mobility_ns3;
mod graph_rollback_ns3;
mod loops_through_graph_ns3;
mod network_check;
mod network_schema;
mod networks;
mod ns3_answer_rules;
mod ns3_bridge_robustness;
mod ns3_event_time;
mod ns3_exact_timing;
mod ns3_fates;
mod ns3_loss;
mod ns3_private_connection;
mod ns3_protocol_violations;
mod ns3_server_robustness;
mod orphans;
mod server_command_line;
mod server_startup;
mod sweep_before_schema;
