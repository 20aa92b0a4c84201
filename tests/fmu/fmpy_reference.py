"""Simulates a Co-Simulation FMU standalone with FMPy, fed the input that
netloop applied, for the cross-check of tests/cli/fmu.rs.

usage: fmpy_reference.py FMU TIMESERIES_CSV INPUT=COLUMN[,INPUT=COLUMN...]
                         STEP_S STOP_S START_VALUES_JSON OUT_CSV

Each FMU input takes the value of netloop's recorded column at every
communication point n * STEP_S (held over the step, as netloop holds it);
FMPy steps at STEP_S and its outputs at the communication points go to
OUT_CSV (time first, then the outputs)."""
import csv
import json
import sys

import numpy as np
import fmpy

fmu, series, mapping, step, stop, start_values, out = sys.argv[1:8]
step, stop = float(step), float(stop)
pairs = [m.split("=", 1) for m in mapping.split(",") if m]
with open(series) as f:
    rows = list(csv.DictReader(f))
by_time = {}
for row in rows:
    by_time[round(float(row["time"]) / step * 1e6)] = row
n_points = int(round(stop / step))
inputs = None
if pairs:
    records = []
    previous = None
    for n in range(n_points + 1):
        row = by_time[round(n * 1e6)]
        values = tuple(float(row[column]) for _, column in pairs)
        t = n * step
        if previous is not None and values != previous:
            records.append((t,) + previous)  # a step in the input at t
        records.append((t,) + values)
        previous = values
    inputs = np.array(records, dtype=[("time", float)] + [(name, float) for name, _ in pairs])
result = fmpy.simulate_fmu(
    fmu,
    start_time=0.0,
    stop_time=stop,
    output_interval=step,
    fmi_type="CoSimulation",
    input=inputs,
    start_values=json.loads(start_values),
)
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(result.dtype.names)
    for r in result:
        w.writerow([repr(float(v)) for v in r])
