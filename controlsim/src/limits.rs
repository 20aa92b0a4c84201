//! Size limits of a control-side config, checked before anything is built.
//!
//! A scenario's lists set sizes that the engine turns into allocations and
//! work: a denominator of degree n becomes an n x n companion matrix, a `b`
//! with m columns and a `c` with p rows become a p x m feed-through, an
//! observer discretises an (n + m) x (n + m) matrix exponential. A list is
//! bounded by the file that holds it, but these products are not: a 12 MB
//! file can ask for terabytes. [`check`] bounds every dimension by
//! [`MAX_DIMENSION`] and the loop count by [`MAX_LOOPS`] before
//! [`System::from_config`](crate::System::from_config) builds anything, with
//! an error that names the key.

use crate::config::{LoopConfig, PerChannel, SystemConfig};
use crate::controller::ControllerConfig;
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::plant::PlantConfig;

/// The most entries of any vector a loop has: states of a plant or a
/// controller (the order of a transfer function), inputs, outputs,
/// measurements, references, per-channel lists, and each side of a matrix.
/// At this size a matrix is 8 MB and one matrix exponential about 10^10
/// operations; control models in practice have a few dozen states.
pub const MAX_DIMENSION: usize = 1024;

/// The most loops a system has. Every loop is stepped at every solver step
/// and, with the default ports (`9000 + 3 i`), only about 18 800 loops fit
/// in the port range anyway.
pub const MAX_LOOPS: usize = 10_000;

/// The most netloop reads from one text file it is given (scenario, sweep,
/// delay and equation model files; `bridge::input` applies it to the
/// first three): far above any such file written by hand or by a script.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// The most netloop reads from one FMU archive, which is read whole to be
/// hashed and unpacked: FMUs with their binaries and resources are a few
/// megabytes to some tens of megabytes.
pub const MAX_FMU_BYTES: u64 = 256 * 1024 * 1024;

/// Checks every size of `config` against the limits above.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the first list that is too long
/// (`loops[0].plant.den`, `loops[0].plant.b[0]`, ...).
pub fn check(config: &SystemConfig) -> Result<(), ConfigError> {
    if config.loops.len() > MAX_LOOPS {
        return Err(too_many(
            &KeyPath::key("loops"),
            config.loops.len(),
            MAX_LOOPS,
            "loops",
        ));
    }
    for (i, l) in config.loops.iter().enumerate() {
        check_loop(&KeyPath::key("loops").at(i), l)?;
    }
    Ok(())
}

/// The checks of one loop; `key` is its path (`loops[3]`).
///
/// # Errors
/// As [`check`].
pub fn check_loop(key: &KeyPath, l: &LoopConfig) -> Result<(), ConfigError> {
    let plant = key.child("plant");
    match &l.plant {
        PlantConfig::StateSpace(c) | PlantConfig::DiscreteStateSpace(c) => {
            matrix(&plant, "a", &c.a)?;
            matrix(&plant, "b", &c.b)?;
            matrix(&plant, "c", &c.c)?;
            opt_matrix(&plant, "d", c.d.as_deref())?;
            opt_list(&plant, "x0", c.x0.as_ref().map(Vec::len))?;
            opt_list(&plant, "state_names", c.state_names.as_ref().map(Vec::len))?;
            opt_list(&plant, "input_names", c.input_names.as_ref().map(Vec::len))?;
            opt_list(
                &plant,
                "output_names",
                c.output_names.as_ref().map(Vec::len),
            )?;
        }
        PlantConfig::TransferFunction(c) | PlantConfig::DiscreteTransferFunction(c) => {
            polynomial(&plant, "num", c.num.len())?;
            polynomial(&plant, "den", c.den.len())?;
            opt_list(&plant, "x0", c.x0.as_ref().map(Vec::len))?;
        }
        // The library plants have fixed sizes; `x0` and `outputs` are
        // checked against them.
        PlantConfig::DcServo(_)
        | PlantConfig::InvertedPendulum(_)
        | PlantConfig::Vehicle(_)
        | PlantConfig::MassSpringDamper(_)
        | PlantConfig::BouncingBall(_) => {}
        // An equation model's sizes come from its text, whose length the
        // input cap bounds; every allocation is linear in that length.
        PlantConfig::Equations(_) => {}
        // An FMU's sizes come from its model description, which its own
        // file (under the input cap) holds.
        PlantConfig::Fmu(_) => {}
    }
    let sensor = key.child("sensor");
    per_channel(&sensor, "noise_std", l.sensor.noise_std.as_ref())?;
    per_channel(&sensor, "quantization", l.sensor.quantization.as_ref())?;
    let actuator = key.child("actuator");
    per_channel(&actuator, "min", l.actuator.min.as_ref())?;
    per_channel(&actuator, "max", l.actuator.max.as_ref())?;
    per_channel(&actuator, "initial", l.actuator.initial.as_ref())?;
    let controller = key.child("controller");
    match &l.controller {
        ControllerConfig::StateFeedback(c) => {
            matrix(&controller, "k", &c.k)?;
            opt_matrix(&controller, "n", c.n.as_deref())?;
            per_channel(&controller, "u_min", c.u_min.as_ref())?;
            per_channel(&controller, "u_max", c.u_max.as_ref())?;
        }
        ControllerConfig::Observer(c) => {
            opt_matrix(&controller, "a", c.a.as_deref())?;
            opt_matrix(&controller, "b", c.b.as_deref())?;
            opt_matrix(&controller, "c", c.c.as_deref())?;
            opt_matrix(&controller, "d", c.d.as_deref())?;
            matrix(&controller, "l", &c.l)?;
            matrix(&controller, "k", &c.k)?;
            opt_matrix(&controller, "n", c.n.as_deref())?;
            opt_list(&controller, "x0", c.x0.as_ref().map(Vec::len))?;
            per_channel(&controller, "u_min", c.u_min.as_ref())?;
            per_channel(&controller, "u_max", c.u_max.as_ref())?;
        }
        ControllerConfig::StateSpace(c) => {
            matrix(&controller, "a", &c.a)?;
            matrix(&controller, "b", &c.b)?;
            matrix(&controller, "c", &c.c)?;
            opt_matrix(&controller, "d", c.d.as_deref())?;
            opt_list(&controller, "x0", c.x0.as_ref().map(Vec::len))?;
            opt_list(
                &controller,
                "measurements",
                c.measurements.as_ref().map(Vec::len),
            )?;
            per_channel(&controller, "u_min", c.u_min.as_ref())?;
            per_channel(&controller, "u_max", c.u_max.as_ref())?;
        }
        ControllerConfig::TransferFunction(c) => {
            polynomial(&controller, "num", c.num.len())?;
            polynomial(&controller, "den", c.den.len())?;
            opt_list(&controller, "x0", c.x0.as_ref().map(Vec::len))?;
        }
        ControllerConfig::Pid(_)
        | ControllerConfig::Cacc(_)
        | ControllerConfig::OpenLoop(_)
        | ControllerConfig::Fmu(_)
        | ControllerConfig::Equations(_) => {}
    }
    list(key, "reference", l.reference.0.len())
}

fn too_many(key: &KeyPath, found: usize, max: usize, what: &str) -> ConfigError {
    ConfigError::invalid(
        key,
        format!(
            "has {found} {what}, more than the {max} netloop allows (docs/robustness.md, limits)"
        ),
    )
}

fn list(table: &KeyPath, name: &str, len: usize) -> Result<(), ConfigError> {
    if len > MAX_DIMENSION {
        return Err(too_many(&table.child(name), len, MAX_DIMENSION, "entries"));
    }
    Ok(())
}

fn opt_list(table: &KeyPath, name: &str, len: Option<usize>) -> Result<(), ConfigError> {
    len.map_or(Ok(()), |len| list(table, name, len))
}

/// A polynomial of degree at most [`MAX_DIMENSION`]: that many states.
fn polynomial(table: &KeyPath, name: &str, coefficients: usize) -> Result<(), ConfigError> {
    if coefficients > MAX_DIMENSION + 1 {
        return Err(ConfigError::invalid(
            table.child(name),
            format!(
                "has degree {}, more than the {MAX_DIMENSION} netloop allows (docs/robustness.md, limits)",
                coefficients - 1
            ),
        ));
    }
    Ok(())
}

/// Rows, then every row, at most [`MAX_DIMENSION`] long.
fn matrix(table: &KeyPath, name: &str, rows: &[Vec<f64>]) -> Result<(), ConfigError> {
    if rows.len() > MAX_DIMENSION {
        return Err(too_many(
            &table.child(name),
            rows.len(),
            MAX_DIMENSION,
            "rows",
        ));
    }
    if let Some((i, row)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() > MAX_DIMENSION)
    {
        return Err(too_many(
            &table.child(name).at(i),
            row.len(),
            MAX_DIMENSION,
            "columns",
        ));
    }
    Ok(())
}

fn opt_matrix(table: &KeyPath, name: &str, rows: Option<&[Vec<f64>]>) -> Result<(), ConfigError> {
    rows.map_or(Ok(()), |rows| matrix(table, name, rows))
}

fn per_channel(table: &KeyPath, name: &str, value: Option<&PerChannel>) -> Result<(), ConfigError> {
    match value {
        Some(PerChannel::Each(v)) => list(table, name, v.len()),
        Some(PerChannel::All(_)) | None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_order_passes_and_one_more_is_refused_naming_den() {
        assert_eq!(
            polynomial(&KeyPath::key("p"), "den", MAX_DIMENSION + 1),
            Ok(())
        );
        let err = polynomial(
            &KeyPath::key("loops").at(2).and("plant"),
            "den",
            MAX_DIMENSION + 2,
        )
        .unwrap_err();
        assert_eq!(err.key().to_string(), "loops[2].plant.den");
        assert_eq!(
            err.to_string(),
            "`loops[2].plant.den`: has degree 1025, more than the 1024 netloop allows (docs/robustness.md, limits)"
        );
    }

    #[test]
    fn a_row_too_long_is_named_by_its_index() {
        let rows = vec![vec![0.0; 2], vec![0.0; MAX_DIMENSION + 1]];
        let err = matrix(&KeyPath::key("loops").at(0).and("controller"), "k", &rows).unwrap_err();
        assert_eq!(err.key().to_string(), "loops[0].controller.k[1]");
        assert!(err.to_string().contains("has 1025 columns"), "{err}");
        assert_eq!(matrix(&KeyPath::key("t"), "k", &rows[..1]), Ok(()));
    }
}
