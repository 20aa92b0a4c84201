//! examples/cruise_control_blocks.toml written by hand: the same arithmetic
//! in the same order as the blocks do it (a sum starts from 0.0 and adds
//! left to right, a gain multiplies, the transfer function 1 / (1500 s + 20)
//! is its controllable canonical form `x' = -(20/1500) x + F`,
//! `v = (1/1500) x`, integrated by controlsim's RK4), so the two agree bit
//! for bit. Shared by the test (tests/blocks.rs) and the bench
//! (benches/blocks.rs).

use controlsim::solver::{SolverKind, Workspace};

/// Speed and force at every boundary `0..steps` (h = 10 ms, the PID at
/// 20 ms), handed to `each(k, v, force)`.
#[inline(never)]
pub fn run(steps: u64, mut each: impl FnMut(u64, f64, f64)) {
    let h = 0.01;
    let a1 = 20.0 / 1500.0;
    let c = 1.0 / 1500.0 - a1 * 0.0;
    let v_ref = 40.0 * 0.5;
    let mut ws = Workspace::new(1);
    let mut x = [0.0];
    let (mut sample, mut s_out, mut e_out) = (0.0, 0.0, 0.0);
    let (mut s_state, mut e_state) = (0.0, 0.0);
    let mut force: f64 = 0.0;
    for k in 0..steps {
        let v = (0.0 + c * x[0]) + 0.0 * force;
        let e = (0.0 + v_ref) - v;
        let due = k % 2 == 0;
        if due {
            sample = e;
            s_out = s_state;
            e_out = e_state;
        }
        let s = (0.0 + sample) + s_out;
        let d = (0.0 + sample) - e_out;
        force = ((0.0 + 1.0 * sample) + 0.01 * s) + 0.01 * d;
        each(k, v, force);
        if due {
            s_state = s;
            e_state = sample;
        }
        let t = (k * 10_000_000) as f64 * 1e-9;
        SolverKind::Rk4.step(&mut ws, t, h, &mut x, |_, x, dx| {
            dx[0] = (0.0 + -a1 * x[0]) + 1.0 * force;
        });
    }
}
