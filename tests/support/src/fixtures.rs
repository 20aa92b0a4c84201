//! Scenario text the suites build on: one DC servo, written once.

/// The DC servo plant, theta/V = 10 / (s (s + 11)): a small motor, 10.9
/// rad/s at full voltage, as the `[loops.plant]` table of a `[[loops]]`
/// entry.
pub const DC_SERVO_PLANT: &str = r#"[loops.plant]
kind = "dc_servo"
inertia = 0.01
viscous_friction = 0.1
torque_constant = 0.1
back_emf_constant = 0.1
resistance = 1.0
"#;

/// A DC servo with a PID (kp 20, ki 2, kd 0.5), sampled every 5 ms with a
/// little noise, following a unit step at 50 ms, as a `[[loops]]` table.
/// `controller` holds extra controller keys (trigger, period, ...), `extra`
/// extra loop keys (uplink, downlink, ...).
pub fn servo_loop(
    name: &str,
    plant_node: u32,
    controller_node: u32,
    controller: &str,
    extra: &str,
) -> String {
    format!(
        r#"
[[loops]]
name = "{name}"
plant_node = {plant_node}
controller_node = {controller_node}
{extra}
{DC_SERVO_PLANT}[loops.sensor]
period = "5ms"
noise_std = 0.001
[loops.actuator]
min = -12.0
max = 12.0
[loops.controller]
kind = "pid"
kp = 20.0
ki = 2.0
kd = 0.5
{controller}
[loops.reference]
kind = "step"
at = "50ms"
final = 1.0
"#
    )
}

/// A complete scenario over the builtin channel with delay `delay` (a TOML
/// value such as `{ kind = "constant", value = "2ms" }`).
pub fn scenario(header: &str, delay: &str, loops: &str) -> String {
    format!(
        r#"
{header}
[network]
backend = "builtin"
[network.builtin]
delay = {delay}
{loops}
"#
    )
}
