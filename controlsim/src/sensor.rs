//! Sensors: time-triggered sampling of a plant's outputs (or of a radar's
//! view of the vehicle ahead), with optional Gaussian noise and quantisation.
//!
//! The engine does not sample by itself: whoever drives the system (the
//! bridge, or [`closed_loop`](crate::closed_loop)) asks for a sample at the
//! sensor's instants, `phase + n * period`, and sends it on. A sample is
//! `quantise(y + noise)`: noise first, because a real converter quantises the
//! noisy analogue signal.
//!
//! Noise comes from a ChaCha8 generator per sensor, seeded from the run seed
//! and stream number = loop index (`ChaCha8Rng::seed_from_u64(seed)` then
//! `set_stream(loop)`), so each loop's noise is independent of the number of
//! other loops and of the order they are sampled in, and identical on every
//! machine (ChaCha is specified bit for bit; the Gaussian transform is
//! rand_distr's ziggurat). Only channels with a positive standard deviation
//! draw numbers. The generator state is part of a snapshot.

use netloop_time::SimTime;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::check_non_negative;
use crate::time::{Periodic, StepSize};

/// `[loops.sensor]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorConfig {
    /// Sampling period, a multiple of the step; required.
    #[serde(with = "netloop_time::duration")]
    pub period: SimTime,
    /// Time of the first sample, a multiple of the step below `period`;
    /// default `0s`.
    #[serde(default, with = "netloop_time::duration")]
    pub phase: SimTime,
    /// What is measured; default `plant`.
    #[serde(default)]
    pub source: SensorSource,
    /// Standard deviation of additive Gaussian noise, per channel; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_std: Option<PerChannel>,
    /// Quantisation step `q` (`y -> q * round(y / q)`), per channel; default
    /// 0 (none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<PerChannel>,
}

/// What a sensor measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SensorSource {
    /// The plant's outputs.
    #[default]
    Plant,
    /// A local radar on a vehicle, looking at the loop's `predecessor`:
    /// `[gap, relative_speed, speed, acceleration]` with
    /// `gap = p_pred - length_pred - p`, `relative_speed = v_pred - v`, and the
    /// own speed and acceleration. Needs vehicle plants on both loops.
    Radar,
}

/// Channel names of a radar sample.
pub const RADAR_CHANNELS: [&str; 4] = ["gap", "relative_speed", "speed", "acceleration"];

/// A built sensor.
#[derive(Clone, Debug)]
pub(crate) struct Sensor {
    pub(crate) schedule: Periodic,
    pub(crate) source: SensorSource,
    noise_std: Vec<f64>,
    quantization: Vec<f64>,
    pub(crate) rng: ChaCha8Rng,
    /// The last sample (zeros before the first).
    pub(crate) sample: Vec<f64>,
}

impl Sensor {
    /// `dim` is the number of measured channels; `stream` the loop index.
    ///
    /// # Errors
    /// [`ConfigError`] naming a period or phase off the step grid, a phase not
    /// below the period, or bad per-channel settings.
    pub(crate) fn new(
        key: &KeyPath,
        c: &SensorConfig,
        step: StepSize,
        dim: usize,
        seed: u64,
        stream: u64,
    ) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        let period = step
            .period_steps(c.period)
            .map_err(|source| ConfigError::Time {
                key: k("period"),
                source,
            })?;
        let phase = step.steps_in(c.phase).map_err(|source| ConfigError::Time {
            key: k("phase"),
            source,
        })?;
        if phase >= period.get() {
            return Err(ConfigError::invalid(
                k("phase"),
                format!("{} must be less than the period {}", c.phase, c.period),
            ));
        }
        let per = |field: &str, v: &Option<PerChannel>| -> Result<Vec<f64>, ConfigError> {
            let v = v
                .as_ref()
                .map_or(Ok(vec![0.0; dim]), |p| p.resolve(&k(field), dim))?;
            for (i, &x) in v.iter().enumerate() {
                check_non_negative(&k(field).at(i), x)?;
            }
            Ok(v)
        };
        let noise_std = per("noise_std", &c.noise_std)?;
        let quantization = per("quantization", &c.quantization)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Ok(Sensor {
            schedule: Periodic { period, phase },
            source: c.source,
            noise_std,
            quantization,
            rng,
            sample: vec![0.0; dim],
        })
    }

    /// Whether it measures exactly (no noise, no quantisation), so that
    /// [`corrupt`](Self::corrupt) changes nothing.
    pub(crate) fn is_exact(&self) -> bool {
        self.noise_std.iter().all(|&sd| sd == 0.0) && self.quantization.iter().all(|&q| q == 0.0)
    }

    /// Applies noise then quantisation to `self.sample` (already holding the
    /// true values).
    pub(crate) fn corrupt(&mut self) {
        for ((y, &sd), &q) in self
            .sample
            .iter_mut()
            .zip(&self.noise_std)
            .zip(&self.quantization)
        {
            if sd > 0.0 {
                let z: f64 = StandardNormal.sample(&mut self.rng);
                *y += sd * z;
            }
            if q > 0.0 {
                *y = q * (*y / q).round();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sensor(text: &str, dim: usize, seed: u64, stream: u64) -> Result<Sensor, ConfigError> {
        let c: SensorConfig = toml::from_str(text).unwrap();
        Sensor::new(
            &KeyPath::key("s"),
            &c,
            StepSize::new(SimTime::from_millis(1)).unwrap(),
            dim,
            seed,
            stream,
        )
    }

    #[test]
    fn quantises_to_the_nearest_level() {
        let mut s = sensor("period = \"10ms\"\nquantization = 0.5", 3, 1, 0).unwrap();
        s.sample.copy_from_slice(&[0.26, -0.74, 1.0]);
        s.corrupt();
        assert_eq!(s.sample, [0.5, -0.5, 1.0]);
    }

    /// Known answer: the noise is standard normal scaled by `noise_std`; over
    /// 20000 draws the mean is within 4 sigma/sqrt(n) of 0 and the standard
    /// deviation within 3%.
    #[test]
    fn noise_is_seeded_gaussian_and_per_stream() {
        let draw = |seed, stream| {
            let mut s = sensor("period = \"1ms\"\nnoise_std = 0.2", 1, seed, stream).unwrap();
            (0..20_000)
                .map(|_| {
                    s.sample[0] = 0.0;
                    s.corrupt();
                    s.sample[0]
                })
                .collect::<Vec<f64>>()
        };
        let a = draw(7, 0);
        assert_eq!(a, draw(7, 0), "same seed and stream, same noise");
        assert_ne!(a[..10], draw(7, 1)[..10], "another loop has another stream");
        assert_ne!(a[..10], draw(8, 0)[..10], "another seed, other noise");
        let n = a.len() as f64;
        let mean = a.iter().sum::<f64>() / n;
        let sd = (a.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert!(mean.abs() < 4.0 * 0.2 / n.sqrt(), "mean {mean}");
        assert!((sd - 0.2).abs() < 0.006, "sd {sd}");
    }

    #[test]
    fn schedule_is_checked_against_the_step() {
        assert_eq!(
            sensor("period = \"1500us\"", 1, 0, 0)
                .unwrap_err()
                .key()
                .to_string(),
            "s.period"
        );
        assert_eq!(
            sensor("period = \"0s\"", 1, 0, 0)
                .unwrap_err()
                .key()
                .to_string(),
            "s.period"
        );
        assert_eq!(
            sensor("period = \"10ms\"\nphase = \"10ms\"", 1, 0, 0)
                .unwrap_err()
                .key()
                .to_string(),
            "s.phase"
        );
        assert_eq!(
            sensor("period = \"10ms\"\nnoise_std = [0.1]", 2, 0, 0)
                .unwrap_err()
                .key()
                .to_string(),
            "s.noise_std"
        );
        assert_eq!(
            sensor("period = \"10ms\"\nnoise_std = -1", 1, 0, 0)
                .unwrap_err()
                .key()
                .to_string(),
            "s.noise_std[0]"
        );
        let s = sensor("period = \"10ms\"\nphase = \"3ms\"", 1, 0, 0).unwrap();
        assert_eq!((s.schedule.period.get(), s.schedule.phase), (10, 3));
    }
}
