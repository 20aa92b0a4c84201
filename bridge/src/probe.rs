//! A network-only run: one periodic flow through the ns-3 server, no control
//! loop. It answers "what does this network do to my packets" before any
//! plant is involved, and it is the smallest end-to-end check of an install.

use protocol::{FlowSpec, SendRequest, SimTime, Step, Transport};

use crate::ns3::{Ns3Client, Ns3Error, Ns3Options};

/// A periodic flow from node `src` to node `dst`.
#[derive(Clone, Debug)]
pub struct ProbeSpec {
    pub packets: u64,
    pub period: SimTime,
    pub size: u32,
    pub src: u32,
    pub dst: u32,
    pub port: u16,
    /// How long to wait after the last send for stragglers.
    pub drain: SimTime,
}

/// What became of one probe packet.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRecord {
    pub number: u64,
    pub sent: SimTime,
    /// Arrival time, or `None` if it was lost or is still in flight.
    pub received: Option<SimTime>,
    pub drop_reason: Option<protocol::DropReason>,
}

#[derive(Clone, Debug)]
pub struct ProbeReport {
    pub network: String,
    pub server: String,
    pub records: Vec<ProbeRecord>,
}

impl ProbeReport {
    pub fn delivered(&self) -> usize {
        self.records.iter().filter(|r| r.received.is_some()).count()
    }

    pub fn delivery_ratio(&self) -> f64 {
        if self.records.is_empty() {
            return 0.0;
        }
        self.delivered() as f64 / self.records.len() as f64
    }
}

/// Sends `spec.packets` packets, one every `spec.period` starting at t = 0,
/// stepping the network one period at a time, then drains.
///
/// # Errors
/// Any server failure, naming the simulated time reached.
pub fn run_probe(options: &Ns3Options, spec: &ProbeSpec) -> Result<ProbeReport, Ns3Error> {
    let mut client = Ns3Client::start(options)?;
    let configured = client.configure(vec![FlowSpec {
        flow: 0,
        port: spec.port,
        src: spec.src,
        dst: spec.dst,
        transport: Transport::Udp,
        stop_on_delivery: false,
    }])?;
    let mut records: Vec<ProbeRecord> = (0..spec.packets)
        .map(|number| ProbeRecord {
            number,
            sent: SimTime(number * spec.period.0),
            received: None,
            drop_reason: None,
        })
        .collect();
    let mut absorb = |done: protocol::StepDone| {
        for d in done.deliveries {
            if let Some(r) = records.get_mut(d.number as usize) {
                r.received = Some(d.received);
            }
        }
        for d in done.drops {
            if let Some(r) = records.get_mut(d.number as usize) {
                r.drop_reason = Some(d.reason);
            }
        }
    };
    for number in 0..spec.packets {
        let time = SimTime(number * spec.period.0);
        let send = SendRequest {
            flow: 0,
            number,
            state_index: 0,
            state_count: 1,
            time,
            size: spec.size,
        };
        let until = time + spec.period;
        absorb(client.step(Step {
            until,
            stop_at_delivery: false,
            sends: vec![send],
            kinematics: vec![],
        })?);
    }
    let end = SimTime(spec.packets * spec.period.0) + spec.drain;
    absorb(client.step(Step {
        until: end,
        stop_at_delivery: false,
        sends: vec![],
        kinematics: vec![],
    })?);
    let server = client.server_software().to_string();
    client.finish()?;
    Ok(ProbeReport {
        network: configured.description,
        server,
        records,
    })
}
