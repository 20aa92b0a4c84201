//! What `netloop run` prints about a finished loop run.

use std::path::Path;

use protocol::SimTime;

pub fn print_summary(summary: &crate::run::RunSummary, dir: &Path) {
    match &summary.stop {
        Some(stop) => println!(
            "run stopped: {} (`{}`) at {}, {} syncs ({})",
            stop.condition,
            stop.expression,
            SimTime(stop.time_ns),
            summary.sync.syncs,
            summary.sync.scheme
        ),
        None => println!(
            "run complete: {} simulated, {} syncs ({})",
            SimTime(summary.reached_ns),
            summary.sync.syncs,
            summary.sync.scheme
        ),
    }
    println!("network: {}", summary.network.description);
    for lp in &summary.loops {
        for out in &lp.outputs {
            let m = &out.metrics;
            println!(
                "loop {} {}: IAE {:.6}  ISE {:.6}  ITAE {:.6}  overshoot {}  {}",
                lp.name,
                out.output,
                m.iae,
                m.ise,
                m.itae,
                m.overshoot_percent
                    .map_or("-".into(), |o| format!("{o:.2}%")),
                m.settling_text(),
            );
        }
    }
    for f in &summary.flows {
        let d = &f.delay;
        println!(
            "flow {} ({} {}): sent {} delivered {} accepted {} lost {} dropped {} | delay mean {} p99 {} max {}",
            f.flow,
            f.loop_name,
            f.direction.as_str(),
            f.counts.sent,
            f.counts.delivered,
            f.counts.accepted,
            f.counts.lost_queue + f.counts.lost_phy + f.counts.lost_mac + f.counts.lost_routing + f.counts.lost_other,
            f.counts.dropped_max_delay + f.counts.dropped_stale,
            fmt_seconds(d.mean_s),
            fmt_seconds(d.p99_s),
            fmt_seconds(d.max_s),
        );
    }
    if let Some(ratio) = summary.delivery_ratio {
        println!("delivery ratio {ratio:.4}");
    }
    println!("results in {}", dir.display());
}

fn fmt_seconds(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{:.3}ms", s * 1e3))
}
