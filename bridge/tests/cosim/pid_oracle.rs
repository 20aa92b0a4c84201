//! An independent event-triggered PID, clocked at the arrival times of the
//! measurements it answers: the oracle for `event_time.rs` here and for the
//! ns-3 version in `tests/e2e` (which includes this file). Written from the
//! PID's documented update rules (`controlsim/src/controller/pid.rs`), with
//! no code from netloop.

/// The loop both tests run: a DC servo, sampled every 5 ms without noise,
/// with an event-triggered PID (integral and filtered derivative, no
/// anti-windup, no limits) and a square-wave reference whose edges fall at
/// 2.8 ms past a multiple of 250 ms: between the arrival of a measurement
/// sent on the 5 ms grid with a 2.5 ms or 2.752 ms delay and the next 1 ms
/// boundary, so a controller that reads the reference at the boundary sees
/// the edge one answer early.
pub const SERVO_LOOP: &str = r#"
[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
inertia = 0.01
viscous_friction = 0.1
torque_constant = 0.1
back_emf_constant = 0.1
resistance = 1.0
[loops.sensor]
period = "5ms"
[loops.controller]
kind = "pid"
kp = 20.0
ki = 8.0
kd = 0.5
filter_time_constant = 0.0025
anti_windup = "none"
trigger = "event"
[loops.reference]
kind = "square"
low = 0.0
high = 1.0
period = "500ms"
start = "2.8ms"
"#;

pub const H_NS: u64 = 1_000_000;
pub const SENSOR_PERIOD_NS: u64 = 5_000_000;
const KP: f64 = 20.0;
const KI: f64 = 8.0;
const KD: f64 = 0.5;
const TF: f64 = 0.0025;

/// The square wave of [`SERVO_LOOP`] at `t` ns.
pub fn reference(t: u64) -> f64 {
    let (start, period, high_for) = (2_800_000, 500_000_000, 250_000_000);
    if t >= start && (t - start) % period < high_for {
        1.0
    } else {
        0.0
    }
}

/// What the controller holds after answering a measurement.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub arrival_ns: u64,
    pub u: f64,
    pub integral: f64,
    pub derivative: f64,
}

/// Runs the PID over the measurements `(arrival_ns, y)` in the order they
/// arrive, each computed at its arrival time: `e = r(t) - y`, then
/// `I += dt ki e_prev`, `D = (Tf D + kd (s - s_prev)) / (Tf + dt)` with
/// `s = -y` and `dt` the time since the previous answer, `u = kp e + I + D`.
pub fn answers(measurements: &[(u64, f64)]) -> Vec<Answer> {
    let (mut integral, mut derivative) = (0.0, 0.0);
    let mut previous: Option<(u64, f64, f64)> = None;
    let mut out = Vec::new();
    for &(t, y) in measurements {
        let e = reference(t) - y;
        let s = -y;
        if let Some((t_prev, e_prev, s_prev)) = previous {
            let dt = (t - t_prev) as f64 * 1e-9;
            integral += dt * (KI * e_prev);
            derivative = (TF * derivative + KD * (s - s_prev)) / (TF + dt);
        }
        out.push(Answer {
            arrival_ns: t,
            u: KP * e + integral + derivative,
            integral,
            derivative,
        });
        previous = Some((t, e, s));
    }
    out
}

/// Checks the recorded controller (one row per 1 ms boundary: computed
/// control, integral, derivative) against the oracle fed with the recorded
/// samples `y` (one per boundary) and the accepted uplink packets
/// `(number, arrival_ns)`. A packet acts at the first boundary at or after
/// its arrival, where the row shows the last answer computed there. Returns
/// how many answers were checked and how many read the reference on the
/// other side of an edge than the boundary does.
pub fn check(
    label: &str,
    uplink: &[(u64, u64)],
    y: &[f64],
    uc: &[f64],
    integral: &[f64],
    derivative: &[f64],
) -> (usize, usize) {
    let mut uplink = uplink.to_vec();
    uplink.sort_by_key(|&(number, arrival)| (arrival, number));
    let measurements: Vec<(u64, f64)> = uplink
        .iter()
        .map(|&(number, arrival)| (arrival, y[(number * SENSOR_PERIOD_NS / H_NS) as usize]))
        .collect();
    let expected = answers(&measurements);
    let (mut checked, mut across_an_edge) = (0, 0);
    for (n, a) in expected.iter().enumerate() {
        let row = a.arrival_ns.div_ceil(H_NS);
        let last_at_row = expected
            .get(n + 1)
            .is_none_or(|next| next.arrival_ns.div_ceil(H_NS) != row);
        let row = row as usize;
        if !last_at_row || row >= uc.len() {
            continue;
        }
        let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * (1.0 + want.abs());
        for (what, got, want) in [
            ("u", uc[row], a.u),
            ("integral", integral[row], a.integral),
            ("derivative", derivative[row], a.derivative),
        ] {
            assert!(close(got, want), "{label}: answer to the packet that arrived at {} ns: {what} = {got}, oracle {want}", a.arrival_ns);
        }
        checked += 1;
        if reference(a.arrival_ns) != reference(row as u64 * H_NS) {
            across_an_edge += 1;
        }
    }
    (checked, across_an_edge)
}
