"""
Online mistake-rate curves over random permutations
===================================================

The papers' protocol: one pass over the stream, each example predicted *before* the learner
sees its label, repeated over random permutations of the data; the cumulative mistake rate is
reported as mean ± standard deviation over the runs. :func:`onlinekern.run_online` does one
such pass and records the curve at about 15 evenly spaced counts and at the doubling counts
(1, 2, 4, ...). Run ``r`` presents permutation ``r`` of ``seed``.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import onlinekern as ok

# The bundled sample data, found from this file or from the working directory upwards.
HERE = Path(globals().get("__file__", "plot.py")).resolve().parent
DATA = next(d / "data" for d in (HERE, *HERE.parents)
            if (d / "data" / "sample_classification.libsvm").is_file())
X, y = ok.load_libsvm(DATA / "sample_classification.libsvm")

# %%
# Five runs for three learners at the same kernel width, as ``python -m onlinekern.sweep`` makes
# them: run ``r`` presents permutation ``r`` of seed 0 and uses learner seed ``r`` (which draws
# FOGD's random frequencies). Every run starts from an empty model
# (``reset=True``, the default).

learners = {
    "kernel Perceptron": lambda seed: ok.Perceptron(gamma=0.5, seed=seed),
    "BSGD-removal, B = 200": lambda seed: ok.BSGDRemoval(gamma=0.5, budget=200, seed=seed),
    "FOGD-hinge, D = 200": lambda seed: ok.FOGD(gamma=0.5, n_components=200, eta=0.5, seed=seed),
}
n_runs = 5
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for name, make in learners.items():
    curves = [ok.run_online(make(r), X, y, seed=0, run=r).curve for r in range(n_runs)]
    n_seen = curves[0]["n_seen"]  # the same checkpoints in every run (they depend on n only)
    rates = np.array([c["mistake_rate"] for c in curves])
    mean, std = rates.mean(axis=0), rates.std(axis=0)
    ax.plot(n_seen, mean, label=f"{name}: {mean[-1]:.2f} ± {std[-1]:.2f} %")
    ax.fill_between(n_seen, mean - std, mean + std, alpha=0.25)
ax.set_xscale("log")
ax.set_ylim(0, 60)
ax.set_xlabel("examples seen")
ax.set_ylabel("cumulative online mistake rate (%)")
ax.set_title(f"two spirals, {X.shape[0]} rows, mean ± std over {n_runs} permutations")
ax.legend()
fig.tight_layout()
plt.show()
