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

/// The DC servo of [`DC_SERVO_PLANT`] under a PID, its actuator saturating
/// at ±12 V, as a `[[loops]]` table. The default: "servo" from node 0 to
/// node 1, sampled every 5 ms with a little noise, kp 20, ki 2, kd 0.5,
/// following a unit step at 50 ms. A suite states only what it varies.
#[derive(Clone, Debug)]
pub struct ServoPid<'a> {
    pub name: &'a str,
    /// `(plant_node, controller_node)`; `None` leaves them out.
    pub nodes: Option<(u32, u32)>,
    /// Extra loop keys (uplink, downlink, ...).
    pub extra: &'a str,
    /// The body of `[loops.sensor]`.
    pub sensor: &'a str,
    /// The controller's keys after `kind = "pid"`: gains, trigger, period.
    pub pid: &'a str,
    /// The body of `[loops.reference]`.
    pub reference: &'a str,
}

impl Default for ServoPid<'_> {
    fn default() -> Self {
        ServoPid {
            name: "servo",
            nodes: Some((0, 1)),
            extra: "",
            sensor: "period = \"5ms\"\nnoise_std = 0.001",
            pid: PID_GAINS,
            reference: "kind = \"step\"\nat = \"50ms\"\nfinal = 1.0",
        }
    }
}

/// The default PID gains of [`ServoPid`].
pub const PID_GAINS: &str = "kp = 20.0\nki = 2.0\nkd = 0.5";

impl ServoPid<'_> {
    /// The servo sampled every 10 ms without noise, under a time-triggered
    /// PD (kp 20, kd 0.5) every 10 ms, following a unit step at 0 s.
    pub fn time_triggered_pd() -> Self {
        ServoPid {
            sensor: "period = \"10ms\"",
            pid: "kp = 20.0\nkd = 0.5\ntrigger = \"time\"\nperiod = \"10ms\"",
            reference: "kind = \"step\"\nat = \"0s\"\nfinal = 1.0",
            ..ServoPid::default()
        }
    }

    /// The `[[loops]]` table.
    pub fn toml(&self) -> String {
        let ServoPid {
            name,
            nodes,
            extra,
            sensor,
            pid,
            reference,
        } = self;
        let nodes = match nodes {
            Some((plant, controller)) => {
                format!("plant_node = {plant}\ncontroller_node = {controller}\n")
            }
            None => String::new(),
        };
        format!(
            r#"
[[loops]]
name = "{name}"
{nodes}{extra}
{DC_SERVO_PLANT}[loops.sensor]
{sensor}
[loops.actuator]
min = -12.0
max = 12.0
[loops.controller]
kind = "pid"
{pid}
[loops.reference]
{reference}
"#
        )
    }
}

/// [`ServoPid`]'s default loop named `name` between the given nodes;
/// `controller` holds extra controller keys (trigger, period, ...), `extra`
/// extra loop keys (uplink, downlink, ...).
pub fn servo_loop(
    name: &str,
    plant_node: u32,
    controller_node: u32,
    controller: &str,
    extra: &str,
) -> String {
    ServoPid {
        name,
        nodes: Some((plant_node, controller_node)),
        extra,
        pid: &format!("{PID_GAINS}\n{controller}"),
        ..ServoPid::default()
    }
    .toml()
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

/// The least a loop needs, as a `[[loops]]` table: "servo" between nodes 0
/// and 1, the DC servo with its default parameters sampled every 10 ms, and
/// `controller` as the body of `[loops.controller]`.
pub fn default_servo_loop(controller: &str) -> String {
    format!(
        r#"[[loops]]
name = "servo"
plant_node = 0
controller_node = 1
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
[loops.controller]
{controller}
"#
    )
}

/// [`default_servo_loop`] under a proportional controller (kp 5) over ns-3
/// for `duration`, master-slave every 10 ms. `ns3` is the body of
/// `[network.ns3]`, from line 9; the loop follows it, and tables appended
/// to the text are read as well.
pub fn p_servo_over_ns3(duration: &str, ns3: &str) -> String {
    format!(
        r#"duration = "{duration}"
step = "1ms"
[sync]
scheme = "master_slave"
period = "10ms"
[network]
backend = "ns3"
[network.ns3]
{ns3}
{servo}"#,
        servo = default_servo_loop("kind = \"pid\"\nkp = 5.0")
    )
}
