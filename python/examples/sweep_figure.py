"""A figure from a sweep: mean and 95% interval of a metric against a swept
parameter, one line per value of a second parameter.

    netloop sweep examples/sweep_delay_gain.toml
    python python/examples/sweep_figure.py results/sweep_delay_gain servo.theta.iae iae.png

Needs the netloop package (pip install ./python) and matplotlib.
"""

import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import numpy as np

import netloop

# Student's t(0.975, df) for df = 1..30 (tables); the normal 1.96 beyond.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t_quantile(df):
    return T975[df - 1] if df <= len(T975) else 1.96


def main(sweep_dir, metric, out):
    df = netloop.load_sweep(sweep_dir)
    params = netloop.sweep_parameters(df)
    x, *rest = params
    lines = rest[0] if rest else None
    rows = df[(df.metric == metric) & (df.status == "complete")]
    if rows.empty:
        sys.exit(f"no complete run has a metric named {metric!r}")
    groups = [x] + ([lines] if lines else [])
    stats = rows.groupby(groups)["value"].agg(["mean", "std", "count"]).reset_index()
    # 95% t interval per point; a point with one run has none.
    stats["half"] = [
        t_quantile(n - 1) * s / np.sqrt(n) if n > 1 else 0.0
        for s, n in zip(stats["std"], stats["count"])
    ]
    # Durations are in seconds (column "..._s"): show milliseconds.
    scale, unit = (1e3, "ms") if x.endswith("_s") else (1.0, "")
    fig, ax = plt.subplots(figsize=(6, 4))
    for value, g in stats.groupby(lines) if lines else [(None, stats)]:
        g = g.sort_values(x)  # numeric: 2 ms comes before 10 ms
        label = f"{lines} = {value}" if lines else None
        ax.errorbar(g[x] * scale, g["mean"], yerr=g["half"], marker="o", capsize=3, label=label)
    name = x.removesuffix("_s")
    ax.set_xlabel(f"{name} [{unit}]" if unit else name)
    ax.set_ylabel(f"{metric} (mean, 95% CI)")
    n = int(stats["count"].min())
    ax.set_title(f"{metric}, n = {n} per point")
    if lines:
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
