"""Simulates a Model Exchange FMU standalone with FMPy (CVode, event
location by CVode's root finding), for the cross-check of tests/cli/fmu.rs.

usage: fmpy_me_reference.py FMU STOP_S OUTPUT_INTERVAL_S RELATIVE_TOLERANCE START_VALUES_JSON OUT_CSV

The FMU's inputs keep their start values. OUT_CSV has time first, then the
outputs; at an event FMPy writes a row before and one after it."""
import csv
import json
import sys

import fmpy

fmu, stop, interval, rtol, start_values, out = sys.argv[1:7]
result = fmpy.simulate_fmu(
    fmu,
    start_time=0.0,
    stop_time=float(stop),
    output_interval=float(interval),
    relative_tolerance=float(rtol),
    fmi_type="ModelExchange",
    start_values=json.loads(start_values),
)
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(result.dtype.names)
    for r in result:
        w.writerow([repr(float(v)) for v in r])
