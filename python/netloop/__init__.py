"""Load netloop results into pandas.

- :func:`load_run` reads a run directory's time series or packets, from
  Parquet (``--format parquet``) or CSV, whichever the run wrote.
- :func:`load_summary` reads its ``summary.json``.
- :func:`load_sweep` reads a sweep directory's ``sweep.parquet``: one row per
  run and metric, swept parameters as numbers in SI units (a duration in
  seconds in a column ``<key>_s``, a data rate in bit/s in ``<key>_bps``).
- :func:`to_xarray` turns a sweep into an ``xarray.Dataset`` over its
  parameters and replications.

See docs/analysis.md.
"""

from ._load import (
    RunIncomplete,
    load_run,
    load_summary,
    load_sweep,
    sweep_parameters,
    to_wide,
    to_xarray,
)

__all__ = [
    "RunIncomplete",
    "load_run",
    "load_summary",
    "load_sweep",
    "sweep_parameters",
    "to_wide",
    "to_xarray",
]
__version__ = "0.1.0"
