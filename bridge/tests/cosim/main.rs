//! Co-simulation tests against known answers, over the builtin network:
//! equivalences with controlsim's standalone closed loop, exact event
//! replay, accuracy of the three schemes, rollback, receive policies and
//! determinism. The ns-3 versions of these live in `tests/e2e`.

mod support;

mod accuracy;
mod answer_rules;
mod computation_delay;
mod determinism;
mod event_time;
mod exact_replay;
mod lookahead;
mod malformed_replies;
mod pid_oracle;
mod platoon;
mod policies;
mod rollback;
mod zero_network;
mod zero_on_loss;
