//! Linear plants: state space (A, B, C, D) of any size, continuous or
//! discrete, and SISO transfer functions realised in controllable canonical
//! form.
//!
//! # Transfer function realisation
//! `G(s) = (p0 s^n + p1 s^(n-1) + ... + pn) / (q0 s^n + q1 s^(n-1) + ... + qn)`
//! (numerator padded with leading zeros to degree n, `q0 != 0`) is realised
//! with `ak = qk / q0`, `b0 = p0 / q0` as
//!
//! ```text
//! x1' = x2, ..., x(n-1)' = xn,  xn' = -an x1 - ... - a1 xn + u / q0
//! y   = (pn - qn b0) x1 + ... + (p1 - q1 b0) xn + b0 u
//! ```
//!
//! The same realisation in `z` gives the discrete form. Improper transfer
//! functions (numerator degree above denominator degree) are rejected.
//!
//! So `x1 = z` with `den(s) z = u`, `y = num(s) z`, and `x(k+1) = z^(k)`: an
//! initial state `x0` gives `z` and its first `n - 1` derivatives at `t = 0`
//! (in the discrete form, `z[0], ..., z[n-1]`), whatever the leading
//! coefficient `q0` (`q0 z^(n) = u - q1 z^(n-1) - ... - qn z`). For a monic
//! denominator (`q0 = 1`) this is the textbook controllable canonical form.

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use super::{Plant, Signature, TimeDomain};
use crate::config::names_or_default;
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_finite_all, check_vector, Matrix};

/// `kind = "state_space"` / `"discrete_state_space"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSpaceConfig {
    /// n x n, n >= 1; required.
    pub a: Vec<Vec<f64>>,
    /// n x m, m >= 1; required.
    pub b: Vec<Vec<f64>>,
    /// p x n, p >= 1; required.
    pub c: Vec<Vec<f64>>,
    /// p x m; default zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<Vec<Vec<f64>>>,
    /// Initial state; default zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Sample period; required for `discrete_state_space`, not allowed for
    /// `state_space`.
    #[serde(
        default,
        with = "netloop_time::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    /// Names for recorded columns; default `x0, x1, ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_names: Option<Vec<String>>,
    /// Default `u0, u1, ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_names: Option<Vec<String>>,
    /// Default `y0, y1, ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_names: Option<Vec<String>>,
}

/// `kind = "transfer_function"` / `"discrete_transfer_function"`:
/// coefficients in descending powers of `s` (or `z`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferFunctionConfig {
    /// Numerator, degree at most that of `den`; required.
    pub num: Vec<f64>,
    /// Denominator, degree >= 1, leading coefficient non-zero; required.
    pub den: Vec<f64>,
    /// Sample period; required for the discrete kind, not allowed otherwise.
    #[serde(
        default,
        with = "netloop_time::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    /// Initial state of the realisation (module docs), one entry per state
    /// (the degree of `den`); default zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
}

/// The initial state of a transfer function's realisation with `n` states:
/// `x0` checked, or zeros.
///
/// # Errors
/// [`ConfigError`] naming `{key}.x0` for a wrong length (saying where the
/// length comes from) or a non-finite entry.
pub(crate) fn transfer_function_x0(
    key: &KeyPath,
    x0: &Option<Vec<f64>>,
    n: usize,
) -> Result<Vec<f64>, ConfigError> {
    let key = key.child("x0");
    match x0 {
        None => Ok(vec![0.0; n]),
        Some(v) if v.len() != n => Err(ConfigError::invalid(
            key,
            format!(
                "must have {n} entries, one per state of the realisation (the degree of `den`), found {}",
                v.len()
            ),
        )),
        Some(v) => {
            check_finite_all(&key, v)?;
            Ok(v.clone())
        }
    }
}

/// The matrices of a linear system, row-major.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinearSystem {
    pub(crate) a: Matrix,
    pub(crate) b: Matrix,
    pub(crate) c: Matrix,
    pub(crate) d: Matrix,
}

impl LinearSystem {
    pub(crate) fn states(&self) -> usize {
        self.a.rows()
    }

    pub(crate) fn inputs(&self) -> usize {
        self.b.cols()
    }

    pub(crate) fn outputs(&self) -> usize {
        self.c.rows()
    }

    /// Checks and builds `(A, B, C, D)` with `n, m, p >= 1` (`D` default 0).
    ///
    /// # Errors
    /// [`ConfigError::Shape`] naming the first inconsistent matrix.
    pub(crate) fn from_config(
        key: &KeyPath,
        a: &[Vec<f64>],
        b: &[Vec<f64>],
        c: &[Vec<f64>],
        d: Option<&[Vec<f64>]>,
    ) -> Result<Self, ConfigError> {
        let n = a.len();
        if n == 0 {
            return Err(ConfigError::invalid(
                key.child("a"),
                "needs at least one state",
            ));
        }
        let a = Matrix::from_rows_shaped(&key.child("a"), a, n, n)?;
        let m = b.first().map_or(0, Vec::len);
        if m == 0 {
            return Err(ConfigError::invalid(
                key.child("b"),
                "needs at least one input column",
            ));
        }
        let b = Matrix::from_rows_shaped(&key.child("b"), b, n, m)?;
        let p = c.len();
        if p == 0 {
            return Err(ConfigError::invalid(
                key.child("c"),
                "needs at least one output row",
            ));
        }
        let c = Matrix::from_rows_shaped(&key.child("c"), c, p, n)?;
        let d = match d {
            Some(d) => Matrix::from_rows_shaped(&key.child("d"), d, p, m)?,
            None => Matrix::zeros(p, m),
        };
        Ok(LinearSystem { a, b, c, d })
    }

    /// Controllable canonical realisation of a SISO `num/den` (module docs).
    ///
    /// # Errors
    /// [`ConfigError`] for an empty or zero-leading denominator, a static gain
    /// (degree 0), an improper numerator, or non-finite coefficients.
    pub(crate) fn from_transfer_function(
        key: &KeyPath,
        num: &[f64],
        den: &[f64],
    ) -> Result<Self, ConfigError> {
        check_finite_all(&key.child("num"), num)?;
        check_finite_all(&key.child("den"), den)?;
        let Some(&lead) = den.first() else {
            return Err(ConfigError::invalid(key.child("den"), "is empty"));
        };
        if lead == 0.0 {
            return Err(ConfigError::invalid(
                key.child("den"),
                "leading coefficient must be non-zero (coefficients are in descending powers)",
            ));
        }
        let n = den.len() - 1;
        if n == 0 {
            return Err(ConfigError::invalid(
                key.child("den"),
                "degree 0 is a static gain, which has no state; use degree >= 1",
            ));
        }
        // Strip leading zeros of the numerator, then check properness.
        let first_nz = num.iter().position(|&v| v != 0.0).unwrap_or(num.len());
        let num = &num[first_nz..];
        if num.len() > n + 1 {
            return Err(ConfigError::invalid(
                key.child("num"),
                format!(
                    "degree {} is above the denominator's {n}: improper",
                    num.len() - 1
                ),
            ));
        }
        // The states are z and its derivatives with `den(s) z = u` as written,
        // not scaled by the leading coefficient, so that `x0` means what the
        // docs say for any `den`. With `lead = 1` every coefficient below is
        // the monic one bit for bit.
        let mut p = vec![0.0; n + 1 - num.len()];
        p.extend_from_slice(num); // [p0..pn]
        let b0 = p[0] / lead;
        let mut a = Matrix::zeros(n, n);
        for i in 0..n - 1 {
            a.set(i, i + 1, 1.0);
        }
        let mut c = Matrix::zeros(1, n);
        for j in 0..n {
            // state j+1 pairs with coefficient index n - j
            a.set(n - 1, j, -(den[n - j] / lead));
            c.set(0, j, p[n - j] - den[n - j] * b0);
        }
        let mut b = Matrix::zeros(n, 1);
        b.set(n - 1, 0, 1.0 / lead);
        let d = Matrix::from_row_major(1, 1, vec![b0]);
        Ok(LinearSystem { a, b, c, d })
    }

    /// `dx = A x + B u`. Each row is summed left to right over `A`, then over
    /// `B`, whatever the size, so every path gives the same bits. Small state
    /// dimensions get a path with the size known at compile time, which the
    /// compiler unrolls: this is the innermost loop of every linear plant.
    #[inline(always)]
    pub(crate) fn derivative(&self, x: &[f64], u: &[f64], dx: &mut [f64]) {
        match x.len() {
            1 => self.derivative_n::<1>(x, u, dx),
            2 => self.derivative_n::<2>(x, u, dx),
            3 => self.derivative_n::<3>(x, u, dx),
            4 => self.derivative_n::<4>(x, u, dx),
            5 => self.derivative_n::<5>(x, u, dx),
            6 => self.derivative_n::<6>(x, u, dx),
            _ => self.derivative_any(x, u, dx),
        }
    }

    #[inline(always)]
    fn derivative_n<const N: usize>(&self, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let (Some(x), Some(dx)) = (x.first_chunk::<N>(), dx.first_chunk_mut::<N>()) else {
            return self.derivative_any(x, u, dx);
        };
        let a = &self.a.data()[..N * N];
        let b = self.b.data();
        // One input (the common case): its checks once per call, not per
        // row; the same operations in the same order.
        if let ([u0], Some(b)) = (u, b.first_chunk::<N>()) {
            for i in 0..N {
                let mut s = 0.0;
                for j in 0..N {
                    s += a[i * N + j] * x[j];
                }
                dx[i] = s + b[i] * u0;
            }
            return;
        }
        let m = u.len();
        for i in 0..N {
            let mut s = 0.0;
            for j in 0..N {
                s += a[i * N + j] * x[j];
            }
            if m == 1 {
                s += b[i] * u[0];
            } else {
                for (bij, uj) in b[i * m..i * m + m].iter().zip(u) {
                    s += bij * uj;
                }
            }
            dx[i] = s;
        }
    }

    fn derivative_any(&self, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let n = x.len();
        let m = u.len();
        for ((dxi, arow), brow) in dx
            .iter_mut()
            .zip(self.a.data().chunks_exact(n))
            .zip(self.b.data().chunks_exact(m))
        {
            let mut s = 0.0;
            for (aij, xj) in arow.iter().zip(x) {
                s += aij * xj;
            }
            for (bij, uj) in brow.iter().zip(u) {
                s += bij * uj;
            }
            *dxi = s;
        }
    }

    /// `y = C x + D u`.
    #[inline]
    pub(crate) fn output(&self, x: &[f64], u: &[f64], y: &mut [f64]) {
        match x.len() {
            1 => self.output_n::<1>(x, u, y),
            2 => self.output_n::<2>(x, u, y),
            3 => self.output_n::<3>(x, u, y),
            4 => self.output_n::<4>(x, u, y),
            5 => self.output_n::<5>(x, u, y),
            6 => self.output_n::<6>(x, u, y),
            _ => self.output_any(x, u, y),
        }
    }

    /// One output and one input on `N` states (the common case) without
    /// the general loops; the same operations in the same order as
    /// [`output_any`](Self::output_any): `y = (C x) + (0 + D u)`.
    #[inline(always)]
    fn output_n<const N: usize>(&self, x: &[f64], u: &[f64], y: &mut [f64]) {
        let (Some(xn), Some(c), [u0], [d0], 1) = (
            x.first_chunk::<N>(),
            self.c.data().first_chunk::<N>(),
            u,
            self.d.data(),
            y.len(),
        ) else {
            return self.output_any(x, u, y);
        };
        let x = xn;
        let mut s = 0.0;
        for j in 0..N {
            s += c[j] * x[j];
        }
        let mut t = 0.0;
        t += d0 * u0;
        y[0] = s + t;
    }

    fn output_any(&self, x: &[f64], u: &[f64], y: &mut [f64]) {
        self.c.mul_into(x, y);
        self.d.mul_add_into(u, y);
    }
}

/// A linear plant, continuous or discrete.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearPlant {
    sys: LinearSystem,
    x0: Vec<f64>,
    period: Option<SimTime>,
    signature: Signature,
}

impl LinearPlant {
    /// # Errors
    /// [`ConfigError`] naming the first invalid key.
    pub fn state_space(
        key: &KeyPath,
        c: &StateSpaceConfig,
        discrete: bool,
    ) -> Result<Self, ConfigError> {
        let period = check_period(key, c.period, discrete)?;
        let sys = LinearSystem::from_config(key, &c.a, &c.b, &c.c, c.d.as_deref())?;
        let n = sys.states();
        let x0 = match &c.x0 {
            Some(x0) => {
                check_vector(&key.child("x0"), x0, n)?;
                x0.clone()
            }
            None => vec![0.0; n],
        };
        let signature = Signature {
            states: names_or_default(&key.child("state_names"), &c.state_names, n, "x")?,
            inputs: names_or_default(&key.child("input_names"), &c.input_names, sys.inputs(), "u")?,
            outputs: names_or_default(
                &key.child("output_names"),
                &c.output_names,
                sys.outputs(),
                "y",
            )?,
        };
        Ok(LinearPlant {
            sys,
            x0,
            period,
            signature,
        })
    }

    /// # Errors
    /// [`ConfigError`] naming the first invalid key.
    pub fn transfer_function(
        key: &KeyPath,
        c: &TransferFunctionConfig,
        discrete: bool,
    ) -> Result<Self, ConfigError> {
        let period = check_period(key, c.period, discrete)?;
        let sys = LinearSystem::from_transfer_function(key, &c.num, &c.den)?;
        let n = sys.states();
        let x0 = transfer_function_x0(key, &c.x0, n)?;
        let signature = Signature {
            states: (0..n).map(|i| format!("x{i}")).collect(),
            inputs: vec!["u".into()],
            outputs: vec!["y".into()],
        };
        Ok(LinearPlant {
            sys,
            x0,
            period,
            signature,
        })
    }

    /// The sample period of a discrete plant.
    pub fn period(&self) -> Option<SimTime> {
        self.period
    }

    pub(crate) fn system(&self) -> &LinearSystem {
        &self.sys
    }
}

fn check_period(
    key: &KeyPath,
    period: Option<SimTime>,
    discrete: bool,
) -> Result<Option<SimTime>, ConfigError> {
    match (discrete, period) {
        (true, None) => Err(ConfigError::invalid(
            key.child("period"),
            "a discrete plant needs a sample period",
        )),
        (false, Some(_)) => Err(ConfigError::invalid(
            key.child("period"),
            "a continuous plant has no period; use the discrete_ kind for a sampled plant",
        )),
        _ => Ok(period),
    }
}

impl Plant for LinearPlant {
    fn signature(&self) -> Signature {
        self.signature.clone()
    }

    fn time_domain(&self) -> TimeDomain {
        match self.period {
            Some(period) => TimeDomain::Discrete { period },
            None => TimeDomain::Continuous,
        }
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&self.x0);
    }

    #[inline(always)]
    fn derivative(&self, _t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        self.sys.derivative(x, u, dx);
    }

    #[inline]
    fn update(&self, _t: f64, x: &[f64], u: &[f64], next: &mut [f64]) {
        self.sys.derivative(x, u, next);
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], u: &[f64], y: &mut [f64]) {
        self.sys.output(x, u, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size-specialised derivative and output (one input, one output,
    /// up to six states) give the general loops' bits: random systems of
    /// 1 to 7 states, 1 or 2 inputs and outputs, with zeros in `D` and
    /// negative inputs (so `D u` is `-0`, which `0 + D u` turns into `+0`).
    #[test]
    fn specialised_paths_give_the_general_bits() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            match seed % 7 {
                0 => 0.0,
                1 => -0.0,
                _ => (seed >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0,
            }
        };
        let mut rows = |r: usize, c: usize| -> Vec<Vec<f64>> {
            (0..r).map(|_| (0..c).map(|_| next()).collect()).collect()
        };
        let mut cases = 0;
        for n in 1..=7 {
            for m in 1..=2 {
                for p in 1..=2 {
                    for _ in 0..20 {
                        let (a, b, c) = (rows(n, n), rows(n, m), rows(p, n));
                        let d = rows(p, m);
                        let x = rows(1, n).remove(0);
                        let u: Vec<f64> = rows(1, m).remove(0).iter().map(|v| -v.abs()).collect();
                        let s = LinearSystem::from_config(
                            &KeyPath::key("t"),
                            &a,
                            &b,
                            &c,
                            Some(d.as_slice()),
                        )
                        .unwrap();
                        let (mut dx, mut dx_any) = (vec![0.0; n], vec![0.0; n]);
                        s.derivative(&x, &u, &mut dx);
                        s.derivative_any(&x, &u, &mut dx_any);
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&dx), bits(&dx_any), "derivative n={n} m={m}");
                        let (mut y, mut y_any) = (vec![0.0; p], vec![0.0; p]);
                        s.output(&x, &u, &mut y);
                        s.output_any(&x, &u, &mut y_any);
                        assert_eq!(bits(&y), bits(&y_any), "output n={n} m={m} p={p}");
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, 7 * 2 * 2 * 20);
    }

    /// G(s) = (2s + 3) / (s^2 + 4s + 5): A = [[0,1],[-5,-4]], B = [0;1],
    /// C = [3, 2], D = 0. Then a proper, non-monic one with b0 != 0.
    #[test]
    fn realisation_is_controllable_canonical() {
        let s = LinearSystem::from_transfer_function(
            &KeyPath::key("tf"),
            &[2.0, 3.0],
            &[1.0, 4.0, 5.0],
        )
        .unwrap();
        assert_eq!(s.a.data(), &[0.0, 1.0, -5.0, -4.0]);
        assert_eq!(s.b.data(), &[0.0, 1.0]);
        assert_eq!(s.c.data(), &[3.0, 2.0]);
        assert_eq!(s.d.data(), &[0.0]);
        // (s^2 + 1)/(2 s^2 + 4 s + 2), states z, z' with 2 z'' + 4 z' + 2 z = u:
        // z'' = -z - 2 z' + u / 2, b0 = 1/2, C = [p2 - q2 b0, p1 - q1 b0] =
        // [1 - 1, 0 - 2] = [0, -2].
        let s = LinearSystem::from_transfer_function(
            &KeyPath::key("tf"),
            &[1.0, 0.0, 1.0],
            &[2.0, 4.0, 2.0],
        )
        .unwrap();
        assert_eq!(s.a.data(), &[0.0, 1.0, -1.0, -2.0]);
        assert_eq!(s.b.data(), &[0.0, 0.5]);
        assert_eq!(s.c.data(), &[0.0, -2.0]);
        assert_eq!(s.d.data(), &[0.5]);
    }

    #[test]
    fn rejects_improper_and_degenerate_transfer_functions() {
        let e =
            LinearSystem::from_transfer_function(&KeyPath::key("p"), &[1.0, 0.0, 0.0], &[1.0, 1.0])
                .unwrap_err();
        assert_eq!(e.key().to_string(), "p.num");
        let e = LinearSystem::from_transfer_function(&KeyPath::key("p"), &[1.0], &[0.0, 1.0])
            .unwrap_err();
        assert_eq!(e.key().to_string(), "p.den");
        let e =
            LinearSystem::from_transfer_function(&KeyPath::key("p"), &[1.0], &[2.0]).unwrap_err();
        assert_eq!(e.key().to_string(), "p.den");
        // Leading zeros in the numerator are fine.
        assert!(LinearSystem::from_transfer_function(
            &KeyPath::key("p"),
            &[0.0, 0.0, 1.0],
            &[1.0, 1.0]
        )
        .is_ok());
    }

    #[test]
    fn state_space_shapes_are_checked_with_keys() {
        let cfg = |b: Vec<Vec<f64>>| StateSpaceConfig {
            a: vec![vec![0.0, 1.0], vec![0.0, 0.0]],
            b,
            c: vec![vec![1.0, 0.0]],
            d: None,
            x0: None,
            period: None,
            state_names: None,
            input_names: None,
            output_names: None,
        };
        let e = LinearPlant::state_space(
            &KeyPath::key("loops").at(0).and("plant"),
            &cfg(vec![vec![0.0], vec![1.0], vec![2.0]]),
            false,
        )
        .unwrap_err();
        assert_eq!(e.key().to_string(), "loops[0].plant.b");
        let e =
            LinearPlant::state_space(&KeyPath::key("p"), &cfg(vec![vec![0.0], vec![1.0]]), true)
                .unwrap_err();
        assert_eq!(e.key().to_string(), "p.period");
    }
}
