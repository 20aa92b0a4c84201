//! Solving an algebraic loop by Newton iteration.
//!
//! The unknowns are the loop's *torn* values: every input element of a loop
//! member that is driven by an output of a loop member. One evaluation
//! `F(z)` puts `z` into those inputs, restores every member that is due to
//! its state before the solve ([`Component::save`](super::Component::save) /
//! [`load`](super::Component::load), so a PID integrates once, not once per
//! trial) and evaluates the members in declaration order; `F(z)` is what
//! their outputs then drive into the torn inputs. Newton's method solves
//! `F(z) - z = 0` from the values the inputs held at the previous boundary,
//! with a forward-difference Jacobian (step `sqrt(eps) * max(1, |z_j|)`) and
//! Gaussian elimination with partial pivoting.
//!
//! Converged when the max-norm of `F(z) - z` is at most
//! [`NewtonSettings::tolerance`] (default `1e-10`); the outputs are those of
//! the last evaluation, at that `z`. More than
//! [`NewtonSettings::max_iterations`] (default 50) Newton steps, a singular
//! Jacobian or a non-finite residual stop the run with
//! [`GraphError::AlgebraicLoop`](super::GraphError::AlgebraicLoop) naming
//! the loop's members and the time. Scratch is sized when the graph is
//! built: no allocation per step.

use super::component::SavedState;
use super::engine::Gather;

/// Tolerance and iteration limit of the algebraic-loop solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Largest accepted `|F(z) - z|` (max-norm), absolute.
    pub tolerance: f64,
    /// Newton steps before giving up.
    pub max_iterations: u32,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        NewtonSettings {
            tolerance: 1e-10,
            max_iterations: 50,
        }
    }
}

/// Why a solve failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Failure {
    /// The limit was reached; the residual then.
    NoConvergence {
        residual: f64,
    },
    Singular,
    NotFinite,
}

/// One algebraic loop in the evaluation order, with its scratch.
#[derive(Debug)]
pub(crate) struct LoopBlock {
    pub(crate) settings: NewtonSettings,
    /// Member components, in declaration order.
    pub(crate) members: Vec<usize>,
    /// `a -> b -> a`, for errors.
    pub(crate) description: String,
    /// Torn elements: (member, input element, value index of its driver).
    pub(crate) torn: Vec<(usize, usize, usize)>,
    pub(crate) due: Vec<bool>,
    pub(crate) saved: Vec<SavedState>,
    pub(crate) newton: Newton,
}

/// Newton's scratch, sized for the loop's unknowns.
#[derive(Debug)]
pub(crate) struct Newton {
    /// The unknowns: the start on entry, the solution on success.
    pub(crate) z: Vec<f64>,
    f: Vec<f64>,
    trial: Vec<f64>,
    f_trial: Vec<f64>,
    jac: Vec<f64>,
    dz: Vec<f64>,
}

impl LoopBlock {
    pub(crate) fn new(
        settings: NewtonSettings,
        members: Vec<usize>,
        names: &[&str],
        gathers: &[Vec<Gather>],
        out_base: &[usize],
        out_len: &[usize],
    ) -> Self {
        let mut torn = Vec::new();
        for &m in &members {
            for g in &gathers[m] {
                let from_member = members
                    .iter()
                    .any(|&c| g.src >= out_base[c] && g.src < out_base[c] + out_len[c]);
                if from_member {
                    for e in 0..g.len {
                        torn.push((m, g.dst + e, g.src + e));
                    }
                }
            }
        }
        let n = torn.len();
        let mut description = names.join(" -> ");
        description.push_str(" -> ");
        description.push_str(names[0]);
        LoopBlock {
            settings,
            due: vec![false; members.len()],
            saved: vec![SavedState::default(); members.len()],
            description,
            members,
            torn,
            newton: Newton::new(n),
        }
    }
}

impl Newton {
    pub(crate) fn new(n: usize) -> Self {
        Newton {
            z: vec![0.0; n],
            f: vec![0.0; n],
            trial: vec![0.0; n],
            f_trial: vec![0.0; n],
            jac: vec![0.0; n * n],
            dz: vec![0.0; n],
        }
    }

    /// Solves `F(z) = z` from `self.z`; `eval(z, f)` evaluates the loop.
    /// On success the last call of `eval` was at the solution `self.z`;
    /// returns the number of Newton steps taken.
    pub(crate) fn solve(
        &mut self,
        settings: NewtonSettings,
        mut eval: impl FnMut(&[f64], &mut [f64]),
    ) -> Result<u32, Failure> {
        let n = self.z.len();
        let tol = settings.tolerance;
        for iteration in 0..=settings.max_iterations {
            eval(&self.z, &mut self.f);
            let mut residual: f64 = 0.0;
            for i in 0..n {
                let r = self.f[i] - self.z[i];
                if !r.is_finite() {
                    return Err(Failure::NotFinite);
                }
                residual = residual.max(r.abs());
            }
            if residual <= tol {
                return Ok(iteration);
            }
            if iteration == settings.max_iterations {
                return Err(Failure::NoConvergence { residual });
            }
            // J = dF/dz - I by forward differences, column by column.
            for j in 0..n {
                self.trial.copy_from_slice(&self.z);
                let delta = f64::EPSILON.sqrt() * self.z[j].abs().max(1.0);
                self.trial[j] += delta;
                let delta = self.trial[j] - self.z[j];
                eval(&self.trial, &mut self.f_trial);
                for i in 0..n {
                    let d = (self.f_trial[i] - self.f[i]) / delta;
                    self.jac[i * n + j] = d - if i == j { 1.0 } else { 0.0 };
                }
            }
            for i in 0..n {
                self.dz[i] = self.z[i] - self.f[i];
            }
            solve_linear(n, &mut self.jac, &mut self.dz)?;
            for i in 0..n {
                self.z[i] += self.dz[i];
            }
        }
        Err(Failure::NoConvergence { residual: f64::NAN })
    }
}

/// Solves `a x = b` in place (`b` becomes `x`) by Gaussian elimination with
/// partial pivoting; `a` (row-major `n x n`) is destroyed.
fn solve_linear(n: usize, a: &mut [f64], b: &mut [f64]) -> Result<(), Failure> {
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap_or(col);
        if a[pivot * n + col] == 0.0 || !a[pivot * n + col].is_finite() {
            return Err(Failure::Singular);
        }
        if pivot != col {
            for j in 0..n {
                a.swap(pivot * n + j, col * n + j);
            }
            b.swap(pivot, col);
        }
        for i in col + 1..n {
            let factor = a[i * n + col] / a[col * n + col];
            for j in col..n {
                a[i * n + j] -= factor * a[col * n + j];
            }
            b[i] -= factor * b[col];
        }
    }
    for col in (0..n).rev() {
        let mut s = b[col];
        for j in col + 1..n {
            s -= a[col * n + j] * b[j];
        }
        b[col] = s / a[col * n + col];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_elimination_with_pivoting() {
        // [[0, 2], [3, 1]] x = [4, 5] -> x = [1, 2]
        let mut a = [0.0, 2.0, 3.0, 1.0];
        let mut b = [4.0, 5.0];
        solve_linear(2, &mut a, &mut b).unwrap();
        assert_eq!(b, [1.0, 2.0]);
        let mut a = [1.0, 2.0, 2.0, 4.0];
        assert_eq!(
            solve_linear(2, &mut a, &mut [1.0, 1.0]),
            Err(Failure::Singular)
        );
    }

    /// z = cos(z): the Dottie number 0.739085133215160641655...
    #[test]
    fn solves_a_nonlinear_fixed_point() {
        let mut b = Newton::new(1);
        let iterations = b
            .solve(NewtonSettings::default(), |z, f| f[0] = z[0].cos())
            .unwrap();
        assert!(
            (b.z[0] - 0.739_085_133_215_160_6).abs() < 1e-10,
            "{}",
            b.z[0]
        );
        assert!(iterations < 10);
    }

    #[test]
    fn reports_no_convergence() {
        let few = |n| NewtonSettings {
            max_iterations: n,
            ..NewtonSettings::default()
        };
        // z = z + 1 has no fixed point (the Jacobian is singular).
        let mut b = Newton::new(1);
        assert_eq!(
            b.solve(few(3), |z, f| f[0] = z[0] + 1.0),
            Err(Failure::Singular)
        );
        // z = z^2 + 1 has no real fixed point.
        let mut b = Newton::new(1);
        assert!(matches!(
            b.solve(few(5), |z, f| f[0] = z[0] * z[0] + 1.0),
            Err(Failure::NoConvergence { .. })
        ));
    }
}
