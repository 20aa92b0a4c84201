"""Readers of netloop's run and sweep directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, List, Optional, Union

import pandas as pd

PathLike = Union[str, Path]

#: The columns of ``sweep.parquet`` that describe a run, besides its parameters.
RUN_COLUMNS = ["run_dir", "point", "replication", "run", "seed", "status", "error", "wall_s"]

_TABLES = ("timeseries", "packets")


class RunIncomplete(RuntimeError):
    """The run directory holds only partial data files (the run failed)."""


def load_summary(run_dir: PathLike) -> dict:
    """The run's ``summary.json`` as a dict."""
    path = Path(run_dir) / "summary.json"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_run(run_dir: PathLike, table: str = "timeseries", partial: bool = False) -> pd.DataFrame:
    """A run's ``timeseries`` (default) or ``packets`` as a DataFrame.

    Reads ``<table>.parquet`` when the run wrote Parquet, else ``<table>.csv``
    (floats parsed exactly, so both give the same numbers). A failed run
    leaves ``<table>.csv.partial``; it is read only with ``partial=True``,
    else :class:`RunIncomplete` is raised. The run's summary, when there is
    one, is in ``df.attrs["summary"]``.
    """
    if table not in _TABLES:
        raise ValueError(f"table must be one of {_TABLES}, not {table!r}")
    d = Path(run_dir)
    parquet, csv = d / f"{table}.parquet", d / f"{table}.csv"
    if parquet.is_file():
        df = pd.read_parquet(parquet)
    elif csv.is_file():
        df = _read_csv(csv)
    elif (d / f"{table}.csv.partial").is_file():
        if not partial:
            raise RunIncomplete(
                f"{d} holds only {table}.csv.partial: the run did not complete "
                f"({_error_of(d)}); pass partial=True to read it anyway"
            )
        df = _read_csv(d / f"{table}.csv.partial")
    else:
        raise FileNotFoundError(f"{d} has neither {table}.parquet nor {table}.csv: is it a run directory?")
    try:
        df.attrs["summary"] = load_summary(d)
    except (OSError, ValueError):
        pass
    return df


def _read_csv(path: Path) -> pd.DataFrame:
    # The shortest decimal netloop writes must parse back to the same double:
    # pandas before 3 needs round_trip for that; 3 parses exactly by default
    # and deprecates the option.
    if int(pd.__version__.split(".")[0]) < 3:
        return pd.read_csv(path, float_precision="round_trip")
    return pd.read_csv(path)


def _error_of(d: Path) -> str:
    try:
        return load_summary(d).get("error") or "no error recorded"
    except (OSError, ValueError):
        return "no summary.json"


def sweep_parameters(df: pd.DataFrame) -> List[str]:
    """The parameter columns of a sweep DataFrame, in sweep order."""
    params = df.attrs.get("parameters")
    if params is not None:
        return list(params)
    cols = list(df.columns)
    return cols[cols.index("point") + 1 : cols.index("replication")]


def load_sweep(sweep_dir: PathLike, wide: bool = False) -> pd.DataFrame:
    """A sweep's ``sweep.parquet``: one row per run and metric (long form).

    Columns: ``run_dir, point, <parameters...>, replication, run, seed,
    status, error, wall_s, metric, value``. A parameter is a number wherever
    the sweep's values allow: durations in seconds (column ``<key>_s``), data
    rates in bit/s (``<key>_bps``), so sorting and plotting work on values,
    not strings. A run that did not complete has null values.

    ``wide=True`` gives one row per run with a column per metric instead
    (:func:`to_wide`).
    """
    d = Path(sweep_dir)
    path = d / "sweep.parquet"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist: write it with `netloop sweep {d} --aggregate`"
        )
    df = pd.read_parquet(path)
    df.attrs["parameters"] = sweep_parameters(df)
    return to_wide(df) if wide else df


def to_wide(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run, one column per metric, from :func:`load_sweep`'s long form."""
    params = sweep_parameters(df)
    keys = ["run_dir", "point", *params, "replication", "run", "seed", "status", "error", "wall_s"]
    runs = df[keys].drop_duplicates("run_dir").set_index("run_dir")
    metrics = list(dict.fromkeys(df["metric"].dropna()))
    values = df.dropna(subset=["metric"]).pivot(index="run_dir", columns="metric", values="value")
    wide = runs.join(values.reindex(columns=metrics)).reset_index()
    wide.columns.name = None
    wide.attrs["parameters"] = params
    wide.attrs["metrics"] = metrics
    return wide


def _is_grid(wide: pd.DataFrame, params: List[str]) -> bool:
    """Whether the points are every combination of the parameters' values
    (a grid), so that each parameter can be a dimension of its own."""
    if not params or wide[params].isna().any().any():
        return False
    points = wide.drop_duplicates("point")
    combos = 1
    for p in params:
        combos *= points[p].nunique()
    return combos == len(points) and not points.duplicated(subset=params).any()


def to_xarray(df: pd.DataFrame, metrics: Optional[Iterable[str]] = None):
    """A sweep as an ``xarray.Dataset``: one variable per metric.

    A grid sweep has one dimension per parameter plus ``replication``; any
    other sweep (zip groups, explicit points) has dimensions ``point`` and
    ``replication``, with the parameters as coordinates along ``point``.
    Accepts :func:`load_sweep`'s long or wide form. Needs xarray.
    """
    try:
        import xarray  # noqa: F401  (to_xarray needs it)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_xarray needs xarray: pip install xarray") from e
    wide = to_wide(df) if "metric" in df.columns else df
    params = sweep_parameters(wide)
    chosen = list(metrics) if metrics is not None else wide.attrs.get(
        "metrics", [c for c in wide.columns if c not in RUN_COLUMNS and c not in params]
    )
    if _is_grid(wide, params):
        ds = wide.set_index([*params, "replication"])[chosen].to_xarray()
    else:
        ds = wide.set_index(["point", "replication"])[chosen].to_xarray()
        per_point = wide.drop_duplicates("point").set_index("point").reindex(ds["point"].values)
        ds = ds.assign_coords({p: ("point", per_point[p].to_numpy()) for p in params})
    ds.attrs["parameters"] = params
    return ds
