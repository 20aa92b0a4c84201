//! Fixed-step explicit solvers: Euler, Heun (explicit trapezoid, RK2) and
//! classic RK4.
//!
//! Fixed steps, because the co-simulation replays network events at exact step
//! boundaries (docs/design.md §2.2): an adaptive solver would either step over an event
//! or have to be stopped at each one, and two runs that differ only in where
//! the network put an event would no longer integrate the same steps.
//!
//! The stepping functions are generic over the right-hand side so that a
//! plant's derivative is inlined into the stage loop, and they work in a
//! caller-owned [`Workspace`]: no allocation per step. Stage arithmetic is
//! written out once, in a fixed order, so results are reproducible bit for bit
//! (and the benchmark's hand-written RK4 uses exactly the same formulas).

use serde::{Deserialize, Serialize};

/// Which fixed-step method integrates the continuous states of every loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolverKind {
    /// Explicit Euler, order 1, one evaluation per step.
    Euler,
    /// Heun's method (explicit trapezoid, RK2), order 2, two evaluations.
    Heun,
    /// Classic Runge-Kutta, order 4, four evaluations. The default.
    #[default]
    Rk4,
}

impl SolverKind {
    /// Global order of accuracy: halving `h` divides the error by `2^order`.
    pub fn order(self) -> u32 {
        match self {
            SolverKind::Euler => 1,
            SolverKind::Heun => 2,
            SolverKind::Rk4 => 4,
        }
    }

    /// Advances `x` from `t` to `t + h` (seconds) for `dx/dt = f(t, x)`.
    ///
    /// `f(t, x, dx)` writes the derivative at `(t, x)` into `dx`. The workspace
    /// grows on first use if it is smaller than `x` (that is the only
    /// allocation, and [`Workspace::new`] with the right size avoids it).
    #[inline]
    pub fn step<F>(self, ws: &mut Workspace, t: f64, h: f64, x: &mut [f64], mut f: F)
    where
        F: FnMut(f64, &[f64], &mut [f64]),
    {
        let n = x.len();
        if n == 0 {
            return;
        }
        let [k1, k2, k3, k4, tmp] = ws.split(n);
        match self {
            SolverKind::Euler => {
                f(t, x, k1);
                for (xi, &d) in x.iter_mut().zip(k1.iter()) {
                    *xi += h * d;
                }
            }
            SolverKind::Heun => {
                f(t, x, k1);
                for ((ti, &xi), &d) in tmp.iter_mut().zip(x.iter()).zip(k1.iter()) {
                    *ti = xi + h * d;
                }
                f(t + h, tmp, k2);
                let h2 = 0.5 * h;
                for ((xi, &a), &b) in x.iter_mut().zip(k1.iter()).zip(k2.iter()) {
                    *xi += h2 * (a + b);
                }
            }
            SolverKind::Rk4 => {
                let h2 = 0.5 * h;
                let th = t + h2;
                f(t, x, k1);
                for ((ti, &xi), &d) in tmp.iter_mut().zip(x.iter()).zip(k1.iter()) {
                    *ti = xi + h2 * d;
                }
                f(th, tmp, k2);
                for ((ti, &xi), &d) in tmp.iter_mut().zip(x.iter()).zip(k2.iter()) {
                    *ti = xi + h2 * d;
                }
                f(th, tmp, k3);
                for ((ti, &xi), &d) in tmp.iter_mut().zip(x.iter()).zip(k3.iter()) {
                    *ti = xi + h * d;
                }
                f(t + h, tmp, k4);
                let h6 = h / 6.0;
                for i in 0..n {
                    x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                }
            }
        }
    }
}

impl SolverKind {
    /// [`step`](Self::step) for a state of compile-time size `N`, with the
    /// stages on the stack. The same formulas in the same order, so the same
    /// bits as `step`; the engine uses it for small states, where knowing the
    /// size lets the compiler unroll the stage loops.
    /// The right-hand side receives arrays, so a plant's slice-generic
    /// derivative sees a constant length once inlined; it is a [`FixedRhs`]
    /// (any closure is one) so that the engine can force the inlining.
    #[inline(always)]
    pub fn step_fixed<const N: usize, R>(self, t: f64, h: f64, x: &mut [f64; N], mut rhs: R)
    where
        R: FixedRhs<N>,
    {
        let mut f = |t: f64, x: &[f64; N], dx: &mut [f64; N]| rhs.eval(t, x, dx);
        let mut k1 = [0.0; N];
        match self {
            SolverKind::Euler => {
                f(t, x, &mut k1);
                for i in 0..N {
                    x[i] += h * k1[i];
                }
            }
            SolverKind::Heun => {
                let mut k2 = [0.0; N];
                f(t, x, &mut k1);
                let mut tmp = [0.0; N];
                for i in 0..N {
                    tmp[i] = x[i] + h * k1[i];
                }
                f(t + h, &tmp, &mut k2);
                let h2 = 0.5 * h;
                for i in 0..N {
                    x[i] += h2 * (k1[i] + k2[i]);
                }
            }
            SolverKind::Rk4 => {
                let (mut k2, mut k3, mut k4) = ([0.0; N], [0.0; N], [0.0; N]);
                let h2 = 0.5 * h;
                let th = t + h2;
                f(t, x, &mut k1);
                let mut tmp = [0.0; N];
                for i in 0..N {
                    tmp[i] = x[i] + h2 * k1[i];
                }
                f(th, &tmp, &mut k2);
                for i in 0..N {
                    tmp[i] = x[i] + h2 * k2[i];
                }
                f(th, &tmp, &mut k3);
                for i in 0..N {
                    tmp[i] = x[i] + h * k3[i];
                }
                f(t + h, &tmp, &mut k4);
                let h6 = h / 6.0;
                for i in 0..N {
                    x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                }
            }
        }
    }
}

/// The right-hand side `dx = f(t, x)` of a state of fixed size `N`, for
/// [`SolverKind::step_fixed`]. Closures implement it; the engine implements it
/// with `#[inline(always)]` so the plant's derivative is inlined into the
/// stages (the optimiser will not inline a closure called from four stages).
pub trait FixedRhs<const N: usize> {
    fn eval(&mut self, t: f64, x: &[f64; N], dx: &mut [f64; N]);
}

impl<const N: usize, F: FnMut(f64, &[f64; N], &mut [f64; N])> FixedRhs<N> for F {
    #[inline(always)]
    fn eval(&mut self, t: f64, x: &[f64; N], dx: &mut [f64; N]) {
        self(t, x, dx)
    }
}

/// Scratch space for the stages: five vectors of the largest state dimension.
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    buf: Vec<f64>,
    dim: usize,
}

impl Workspace {
    /// Scratch for states of up to `max_dim` components.
    pub fn new(max_dim: usize) -> Self {
        Workspace {
            buf: vec![0.0; 5 * max_dim],
            dim: max_dim,
        }
    }

    /// The largest state dimension this workspace holds without growing.
    pub fn capacity(&self) -> usize {
        self.dim
    }

    #[inline]
    fn split(&mut self, n: usize) -> [&mut [f64]; 5] {
        if n > self.dim {
            *self = Workspace::new(n);
        }
        let (k1, rest) = self.buf.split_at_mut(self.dim);
        let (k2, rest) = rest.split_at_mut(self.dim);
        let (k3, rest) = rest.split_at_mut(self.dim);
        let (k4, tmp) = rest.split_at_mut(self.dim);
        [
            &mut k1[..n],
            &mut k2[..n],
            &mut k3[..n],
            &mut k4[..n],
            &mut tmp[..n],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// dx/dt = t^3 is integrated exactly by RK4 (order 4 means exact for
    /// polynomials of degree 3 in t): x(1) = 1/4.
    #[test]
    fn rk4_is_exact_for_cubic_in_time() {
        let mut ws = Workspace::new(1);
        let mut x = [0.0];
        let h = 0.125;
        for k in 0..8 {
            SolverKind::Rk4.step(&mut ws, k as f64 * h, h, &mut x, |t, _, dx| {
                dx[0] = t * t * t
            });
        }
        assert!((x[0] - 0.25).abs() < 1e-15, "{}", x[0]);
    }

    /// Heun is exact for dx/dt = t (x(1) = 1/2); Euler is off by h/2.
    #[test]
    fn heun_exact_for_linear_in_time_euler_is_not() {
        let h = 0.25;
        let mut ws = Workspace::new(1);
        let (mut xh, mut xe) = ([0.0], [0.0]);
        for k in 0..4 {
            let t = k as f64 * h;
            SolverKind::Heun.step(&mut ws, t, h, &mut xh, |t, _, dx| dx[0] = t);
            SolverKind::Euler.step(&mut ws, t, h, &mut xe, |t, _, dx| dx[0] = t);
        }
        assert_eq!(xh[0], 0.5);
        assert_eq!(xe[0], 0.5 - h / 2.0);
    }

    /// The fixed-size path is the slice path with the size known: same bits.
    #[test]
    fn fixed_size_step_gives_the_same_bits() {
        let f = |t: f64, x: &[f64], dx: &mut [f64]| {
            dx[0] = x[1] * t.cos();
            dx[1] = -0.3 * x[0] - 0.1 * x[1] * x[1];
            dx[2] = x[0] - x[2];
        };
        for kind in [SolverKind::Euler, SolverKind::Heun, SolverKind::Rk4] {
            let mut ws = Workspace::new(3);
            let (mut a, mut b) = ([0.3, -1.2, 2.0], [0.3, -1.2, 2.0]);
            for k in 0..100 {
                let t = k as f64 * 0.01;
                kind.step(&mut ws, t, 0.01, &mut a, f);
                kind.step_fixed(t, 0.01, &mut b, |t, x: &[f64; 3], dx: &mut [f64; 3]| {
                    f(t, x, dx)
                });
            }
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{kind:?}");
        }
    }

    #[test]
    fn workspace_grows_instead_of_panicking() {
        let mut ws = Workspace::new(1);
        let mut x = [1.0, 2.0, 3.0];
        SolverKind::Rk4.step(&mut ws, 0.0, 0.1, &mut x, |_, _, dx| dx.fill(0.0));
        assert_eq!(x, [1.0, 2.0, 3.0]);
        assert_eq!(ws.capacity(), 3);
    }
}
