//! A parameter of the user's own ns-3 program swept as a typed value
//! (`network.server.params.distance = [20.0, 400.0]`): each run's program
//! gets `--distance=...`, and the sweep's Parquet column is numeric.

use std::process::Command;

use crate::support::server_binary;

/// The bring-your-own example (802.11a to a gateway at `distance` metres):
/// at 20 m every packet arrives; at 400 m none does (6 Mbps, log-distance).
#[test]
fn a_custom_programs_param_is_swept_as_a_number() {
    let byo = server_binary().with_file_name("byo-example");
    assert!(
        byo.exists(),
        "{} is built by scripts/setup.sh",
        byo.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/servo_byo_plant_floor.toml");
    let sweep = dir.path().join("distance.toml");
    std::fs::write(
        &sweep,
        format!(
            r#"scenario = {:?}
[set]
duration = "1s"
"network.server.binary" = {:?}
"network.server.args" = []
[[grid]]
key = "network.server.params.distance"
values = [20.0, 400.0]
"#,
            example.display().to_string(),
            byo.display().to_string()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args([
            "-q",
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    let mut ratios = Vec::new();
    for run in plan["runs"].as_array().unwrap() {
        let args: Vec<&str> = run["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let distance = args
            .iter()
            .find_map(|a| a.strip_prefix("network.server.params.distance="))
            .unwrap()
            .to_string();
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join(run["dir"].as_str().unwrap()).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            summary["scenario"]["network"]["server"]["params"]["distance"],
            distance.parse::<f64>().unwrap()
        );
        ratios.push((distance, summary["delivery_ratio"].as_f64().unwrap()));
    }
    assert_eq!(
        ratios,
        [("20.0".to_string(), 1.0), ("400.0".to_string(), 0.0)]
    );

    // sweep.parquet: the parameter is a DOUBLE column under its own name.
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader =
        SerializedFileReader::new(std::fs::File::open(out.join("sweep.parquet")).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr();
    let column = schema.column(2);
    assert_eq!(column.name(), "network.server.params.distance");
    assert_eq!(column.physical_type(), parquet::basic::Type::DOUBLE);
}
