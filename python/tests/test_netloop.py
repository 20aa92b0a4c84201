"""netloop's Python loaders against real runs and sweeps of the netloop binary
(builtin network: no ns-3 needed). The binary is $NETLOOP_BIN, else the
release build of this checkout."""

import csv
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import netloop

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("NETLOOP_BIN", REPO / "target" / "release" / "netloop"))
SERVO = REPO / "examples" / "dc_servo_p2p.toml"


def netloop_cli(*args):
    if not BIN.is_file():
        pytest.fail(f"{BIN} does not exist: build it (cargo build --release) or set NETLOOP_BIN")
    done = subprocess.run([str(BIN), "-q", *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same short builtin run written as CSV and as Parquet."""
    base = tmp_path_factory.mktemp("runs")
    common = [SERVO, "--network", "builtin", "--set", "duration=0.3s",
              "--set", 'network.builtin.loss={ kind = "bernoulli", p = 0.2 }']
    netloop_cli("run", *common, "--out", base / "csv")
    netloop_cli("run", *common, "--out", base / "parquet", "--format", "parquet")
    return base / "csv", base / "parquet"


def same_frame(a, b):
    """Equal values; text nulls may be None in one and NaN in the other."""
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)
    for c in a.columns:
        x, y = a[c], b[c]
        if x.dtype == object or y.dtype == object:
            assert x.where(x.notna(), None).tolist() == y.where(y.notna(), None).tolist(), c
        else:
            np.testing.assert_array_equal(x.to_numpy(), y.to_numpy(), err_msg=c)


@pytest.mark.parametrize("table", ["timeseries", "packets"])
def test_parquet_run_files_hold_the_csv_values_with_types(runs, table):
    csv_dir, pq_dir = runs
    assert (pq_dir / f"{table}.parquet").is_file()
    assert not (pq_dir / f"{table}.csv").exists(), "parquet replaces the CSV"
    from_csv = netloop.load_run(csv_dir, table)
    from_pq = netloop.load_run(pq_dir, table)
    # Row count from the file itself, not from pandas.
    assert len(from_pq) == len(csv_rows(csv_dir / f"{table}.csv")) - 1
    assert len(from_pq) > 0
    same_frame(from_csv, from_pq)
    # Numbers are numbers: every column that is all numeric in the CSV is numeric.
    for c in from_pq.columns:
        if pd.api.types.is_numeric_dtype(from_csv[c]):
            assert pd.api.types.is_numeric_dtype(from_pq[c]), c
    assert from_pq.attrs["summary"]["complete"] is True


def test_parquet_run_has_the_same_summary_as_csv(runs):
    csv_dir, pq_dir = runs
    a, b = netloop.load_summary(csv_dir), netloop.load_summary(pq_dir)
    assert a["loops"] == b["loops"] and a["flows"] == b["flows"]


def test_a_partial_run_is_refused_unless_asked(tmp_path):
    (tmp_path / "timeseries.csv.partial").write_text("t,x\n0,1.5\n0.001,2\n")
    (tmp_path / "summary.json").write_text(json.dumps({"complete": False, "error": "server died"}))
    with pytest.raises(netloop.RunIncomplete, match="server died"):
        netloop.load_run(tmp_path)
    df = netloop.load_run(tmp_path, partial=True)
    assert df["x"].tolist() == [1.5, 2.0]
    with pytest.raises(FileNotFoundError):
        netloop.load_run(tmp_path, "packets")


GRID = """
scenario = "{scenario}"
network = "builtin"
replications = 2
[set]
duration = "0.3s"
"loops[0].sensor.noise_std" = 0.002
[[grid]]
key = "network.builtin.delay.value"
values = ["10ms", "2ms"]
[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 20.0]
"""

ZIP = """
scenario = "{scenario}"
network = "builtin"
[set]
duration = "0.2s"
[[zip]]
keys = ["loops[0].sensor.period", "loops[0].controller.period"]
values = [["10ms", "10ms"], ["20ms", "20ms"]]
"""


def sweep(tmp_path, text, name):
    path = tmp_path / f"{name}.toml"
    path.write_text(text.format(scenario=SERVO))
    out = tmp_path / name
    netloop_cli("sweep", path, "--out", out, "--jobs", "2")
    return out


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    return sweep(tmp_path_factory.mktemp("grid"), GRID, "grid")


def test_load_sweep_types_parameters_in_si_units(grid):
    df = netloop.load_sweep(grid)
    assert netloop.sweep_parameters(df) == ["network.builtin.delay.value_s", "loops[0].controller.kp"]
    delay = df["network.builtin.delay.value_s"]
    assert delay.dtype == np.float64
    # 2ms sorts before 10ms: values, not strings.
    assert sorted(delay.unique()) == [0.002, 0.010]
    assert df["loops[0].controller.kp"].dtype == np.float64
    for c in ["point", "replication", "run", "seed"]:
        assert pd.api.types.is_integer_dtype(df[c]), c
    assert df["value"].dtype == np.float64
    assert set(df["status"]) == {"complete"}


def test_load_sweep_matches_sweep_csv(grid):
    df = netloop.load_sweep(grid)
    rows = csv_rows(grid / "sweep.csv")
    header, body = rows[0], rows[1:]
    metrics = header[header.index("error") + 1 : header.index("wall_s")]
    assert len(body) == 8  # 2 delays x 2 gains x 2 replications
    assert len(df) == len(body) * len(metrics)
    assert list(dict.fromkeys(df["metric"])) == metrics
    by_run = {r[0]: dict(zip(header, r)) for r in body}
    for _, row in df.iterrows():
        text = by_run[row["run_dir"]][row["metric"]]
        if text == "":
            assert pd.isna(row["value"])
        else:
            assert row["value"] == float(text), (row["run_dir"], row["metric"])
        assert row["replication"] == int(by_run[row["run_dir"]]["replication"])


def test_wide_form_and_xarray_of_a_grid(grid):
    wide = netloop.load_sweep(grid, wide=True)
    assert len(wide) == 8
    assert "servo.uplink.sent" in wide.columns
    xr = pytest.importorskip("xarray")
    ds = netloop.to_xarray(netloop.load_sweep(grid))
    assert isinstance(ds, xr.Dataset)
    assert dict(ds.sizes) == {"network.builtin.delay.value_s": 2, "loops[0].controller.kp": 2, "replication": 2}
    assert ds["network.builtin.delay.value_s"].values.tolist() == [0.002, 0.010]
    one = wide[(wide["network.builtin.delay.value_s"] == 0.010)
               & (wide["loops[0].controller.kp"] == 20.0) & (wide["replication"] == 2)]
    cell = ds["servo.uplink.sent"].sel({"network.builtin.delay.value_s": 0.010,
                                        "loops[0].controller.kp": 20.0, "replication": 2})
    assert float(cell) == one["servo.uplink.sent"].item()


def test_a_zip_sweep_is_one_point_axis_in_xarray(tmp_path):
    xr = pytest.importorskip("xarray")
    out = sweep(tmp_path, ZIP, "zip")
    df = netloop.load_sweep(out)
    assert netloop.sweep_parameters(df) == ["loops[0].sensor.period_s", "loops[0].controller.period_s"]
    ds = netloop.to_xarray(df)
    assert dict(ds.sizes) == {"point": 2, "replication": 1}
    assert ds["loops[0].sensor.period_s"].values.tolist() == [0.01, 0.02]


def test_a_directory_without_sweep_parquet_says_how_to_write_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="--aggregate"):
        netloop.load_sweep(tmp_path)


def test_the_worked_example_draws_a_figure(grid, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "iae.png"
    script = REPO / "python" / "examples" / "sweep_figure.py"
    done = subprocess.run(
        [os.sys.executable, str(script), str(grid), "servo.theta.iae", str(out)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    from matplotlib.image import imread

    image = imread(out)
    assert image.shape[:2] == (600, 900)  # 6 x 4 inches at 150 dpi
    # Not blank: many distinct colours (lines, markers, text).
    assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 50
