//! The sensor as a component.

use netloop_time::SimTime;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::plant::MOTION;
use crate::error::ConfigError;
use crate::graph::component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, SavedState, StateMismatch,
    StateReader, Timing,
};
use crate::graph::Lowered;
use crate::key_path::KeyPath;
use crate::sensor::{Sensor, SensorConfig, SensorSource, RADAR_CHANNELS};
use crate::time::StepSize;

/// A sampling sensor at its period and phase: output `y` is
/// `quantise(input + noise)`. With `source = "plant"` its input is `y`
/// (connect a plant's `y`, or any output); with `source = "radar"` its
/// inputs are `own` and `ahead`, two `motion` ports, and the sample is
/// `[gap, relative_speed, speed, acceleration]` as for a loop's radar.
/// Noise is ChaCha8 seeded with the run seed and the sensor's stream.
#[derive(Debug)]
pub struct SensorComponent {
    sensor: Sensor,
    /// No noise, no quantisation: the sample is the input (a copy).
    exact: bool,
    channels: Vec<String>,
    period: SimTime,
    phase: SimTime,
}

impl SensorComponent {
    /// `channels` names what it measures (a plant's outputs; empty names
    /// for numbered channels; ignored for a radar, whose channels are
    /// fixed); `seed` and `stream` pick its noise.
    ///
    /// # Errors
    /// As the loop's sensor: a period or phase off the step grid, bad
    /// per-channel settings.
    pub fn new(
        key: &KeyPath,
        config: &SensorConfig,
        step: StepSize,
        channels: &[String],
        seed: u64,
        stream: u64,
    ) -> Result<Self, ConfigError> {
        let channels: Vec<String> = match config.source {
            SensorSource::Plant => channels.to_vec(),
            SensorSource::Radar => RADAR_CHANNELS.iter().map(|s| s.to_string()).collect(),
        };
        if channels.is_empty() {
            return Err(ConfigError::invalid(
                key,
                "a sensor needs at least one channel",
            ));
        }
        let sensor = Sensor::new(key, config, step, channels.len(), seed, stream)?;
        Ok(SensorComponent {
            exact: sensor.is_exact(),
            sensor,
            channels,
            period: config.period,
            phase: config.phase,
        })
    }
}

impl Component for SensorComponent {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        // Channels without names (all empty) are numbered: `y[i]`.
        let port = |name: &str| match self.channels.iter().all(String::is_empty) {
            true => PortSpec::new(name, self.channels.len()),
            false => PortSpec::named(name, &self.channels),
        };
        let inputs = match self.sensor.source {
            SensorSource::Plant => vec![port("y")],
            SensorSource::Radar => {
                let motion: Vec<String> = MOTION.iter().map(|s| s.to_string()).collect();
                vec![
                    PortSpec::named("own", &motion),
                    PortSpec::named("ahead", &motion),
                ]
            }
        };
        Declaration {
            inputs,
            outputs: vec![port("y")],
            states: Vec::new(),
            guards: 0,
            timing: Timing::Periodic {
                period: self.period,
                offset: self.phase,
            },
        }
    }

    /// An exact sensor of a plant's outputs samples by copying: the graph
    /// runs it as a due check and a copy ([`Lowered::Sample`]); its noise
    /// state, never drawn from, stays its own to save.
    fn lower(&self) -> Option<Lowered> {
        (self.exact && self.sensor.source == SensorSource::Plant).then_some(Lowered::Sample)
    }

    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        match self.sensor.source {
            SensorSource::Plant => super::copy_values(&mut self.sensor.sample, u.port(0)),
            SensorSource::Radar => {
                let (me, ahead) = (u.port(0), u.port(1));
                // [position, velocity, acceleration, length]
                self.sensor.sample.copy_from_slice(&[
                    ahead[0] - ahead[3] - me[0],
                    ahead[1] - me[1],
                    me[1],
                    me[2],
                ]);
            }
        }
        if !self.exact {
            self.sensor.corrupt();
        }
        super::copy_values(y.port(0), &self.sensor.sample);
    }

    fn save(&self, into: &mut SavedState) {
        let rng = &self.sensor.rng;
        for chunk in rng.get_seed().chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            into.words.push(u64::from_le_bytes(b));
        }
        into.words.push(rng.get_stream());
        let pos = rng.get_word_pos();
        into.words.push(pos as u64);
        into.words.push((pos >> 64) as u64);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_exact_mut(8) {
            chunk.copy_from_slice(&from.word()?.to_le_bytes());
        }
        let stream = from.word()?;
        let pos = u128::from(from.word()?) | (u128::from(from.word()?) << 64);
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(stream);
        rng.set_word_pos(pos);
        self.sensor.rng = rng;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use netloop_time::SimTime;

    use super::*;
    use crate::blocks::{build, BlockConfig, BlockContext};
    use crate::graph::{Graph, GraphBuilder, Unobserved};
    use crate::solver::SolverKind;

    const STEP: SimTime = SimTime::from_millis(10);

    /// The sensor served through its own `output` (never lowered).
    #[derive(Debug)]
    struct Served(SensorComponent);

    impl Component for Served {
        fn needs(&self) -> Needs {
            self.0.needs()
        }
        fn declare(&self) -> Declaration {
            self.0.declare()
        }
        fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
            self.0.output(cx, x, u, y);
        }
        fn save(&self, into: &mut SavedState) {
            self.0.save(into);
        }
        fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
            self.0.load(from)
        }
    }

    fn sensor(text: &str) -> SensorComponent {
        let config: SensorConfig = toml::from_str(text).unwrap();
        let step = StepSize::new(STEP).unwrap();
        SensorComponent::new(&KeyPath::key("sensor"), &config, step, &["y".into()], 7, 1).unwrap()
    }

    /// A clock (a new value at every step) sampled by the sensor every
    /// other step from the second; `served` runs the sensor's own `output`.
    fn graph(text: &str, served: bool) -> Graph {
        let cx = BlockContext {
            step: StepSize::new(STEP).unwrap(),
            seed: 1,
            stream: 0,
        };
        let clock: BlockConfig = toml::from_str("kind = \"clock\"").unwrap();
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed(
            "clock",
            "clock",
            build(&KeyPath::key("clock"), &clock, cx).unwrap(),
        );
        match served {
            true => b.component("sensor", Served(sensor(text))),
            false => b.component("sensor", sensor(text)),
        };
        b.connect("clock.y", "sensor.y");
        b.build().unwrap()
    }

    const EXACT: &str = "period = \"20ms\"\nphase = \"10ms\"";

    fn lowered(g: &Graph) -> bool {
        let sensor = g.component_index("sensor").unwrap();
        g.lowered.iter().any(|&(i, _)| i == sensor)
    }

    #[test]
    fn an_exact_sensor_is_lowered_and_a_noisy_or_quantising_one_is_not() {
        assert!(lowered(&graph(EXACT, false)));
        assert!(!lowered(&graph(EXACT, true)));
        for extra in ["noise_std = 0.1", "quantization = 0.5"] {
            assert!(
                !lowered(&graph(&format!("{EXACT}\n{extra}"), false)),
                "{extra}"
            );
        }
    }

    /// The lowered sample gives the bits and freshness of the sensor's own
    /// `output` at every boundary, sampled or holding, and its snapshot is
    /// the sensor's own (its noise stream), so restoring works.
    #[test]
    fn a_lowered_sensor_samples_and_holds_as_its_output_does() {
        let (mut lowered, mut served) = (graph(EXACT, false), graph(EXACT, true));
        let bits = |g: &Graph| g.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let mut at_three = None;
        for k in 0..9 {
            lowered.evaluate().unwrap();
            served.evaluate().unwrap();
            assert_eq!(bits(&lowered), bits(&served), "k = {k}");
            assert_eq!(lowered.fresh, served.fresh, "k = {k}");
            assert!(lowered.snapshot() == served.snapshot(), "k = {k}");
            if k == 3 {
                at_three = Some(lowered.snapshot());
            }
            lowered.integrate_step().unwrap();
            served.integrate_step().unwrap();
        }
        let end = lowered.snapshot();
        lowered.restore(&at_three.unwrap()).unwrap();
        lowered.run_to(9, &mut Unobserved).unwrap();
        served.run_to(12, &mut Unobserved).unwrap();
        assert!(lowered.snapshot() == end);
        lowered.run_to(12, &mut Unobserved).unwrap();
        assert_eq!(bits(&lowered), bits(&served));
    }
}
