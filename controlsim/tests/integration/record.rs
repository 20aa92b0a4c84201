//! The streaming CSV recorder.

use controlsim::{ClosedLoop, Delays, Recorder, Response};
use std::num::NonZeroU64;

use crate::common::build;

const TWO: &str = r#"
step = "2500us"
[[loops]]
name = "pi"
[loops.plant]
kind = "transfer_function"
num = [1.0]
den = [1.0, 1.0]
[loops.sensor]
period = "5ms"
[loops.controller]
kind = "transfer_function"
num = [1.0, 2.0]
den = [1.0, 0.0]
[loops.reference]
kind = "step"
final = 1.0
[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
[loops.actuator]
max = 0.5
[loops.controller]
kind = "pid"
kp = 10.0
ki = 1.0
# Above the actuator's limit (the default), so computed and applied differ.
u_max = 100.0
[loops.reference]
kind = "constant"
value = 1.0
"#;

/// Header layout, rows every 4th step plus the final boundary, exact time
/// column, and values that parse back to the very same bits.
#[test]
fn writes_header_every_nth_row_and_exact_values() {
    let mut cl = ClosedLoop::new(build(TWO, 0), Delays::default(), Response::Direct);
    let mut rec = Recorder::new(cl.system(), Vec::new(), NonZeroU64::new(4).unwrap()).unwrap();
    cl.run_to(40, &mut rec).unwrap();
    let sys = cl.system();
    let last_state = sys.loops()[1].state().to_vec();
    let bytes = rec.finish(sys).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "time,pi.r0,pi.y.y,pi.x.x0,pi.xc.xc0,pi.u.u,pi.uc.u,\
         servo.r0,servo.y.theta,servo.x.theta,servo.x.omega,servo.xc.integral,servo.xc.derivative,\
         servo.u.voltage,servo.uc.voltage"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Boundaries 0, 4, ..., 36 from the run, and 40 from finish().
    let times: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        times,
        ["0", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09", "0.1"]
    );
    let last = rows.last().unwrap();
    assert_eq!(
        last[9].parse::<f64>().unwrap().to_bits(),
        last_state[0].to_bits()
    );
    assert_eq!(
        last[10].parse::<f64>().unwrap().to_bits(),
        last_state[1].to_bits()
    );
    // The servo's computed control is unsaturated, the applied one is capped.
    assert_eq!(rows[0][13], "0.5");
    assert_eq!(rows[0][14], "10.0");
}
