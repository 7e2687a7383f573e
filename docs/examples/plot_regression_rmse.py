"""
Online RMSE of regression learners
==================================

For regression the online protocol records the squared error of each pre-update prediction;
:attr:`onlinekern.OnlineResult.rmse` is the root of their mean, and the curve holds it up to
each checkpoint. The bundled regression set is a noisy 2-D sinc (3,000 rows; target standard
deviation about 0.25, noise 0.05) with three irrelevant features. Three losses and three model
types: kernel OGD with the ε-insensitive loss (an exact kernel expansion), FOGD with the
squared loss (random Fourier features) and RRF with the squared loss (which also learns one
width per feature). The ε-insensitive loss takes steps of fixed size η whatever the error, so
it wants a smaller η than the squared loss (0.1 here against 0.5: at 0.5 its RMSE stays above
0.2).
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import onlinekern as ok

# The bundled sample data, found from this file or from the working directory upwards.
HERE = Path(globals().get("__file__", "plot.py")).resolve().parent
DATA = next(d / "data" for d in (HERE, *HERE.parents)
            if (d / "data" / "sample_regression.libsvm").is_file())
X, y = ok.load_libsvm(DATA / "sample_regression.libsvm")

learners = {
    "ogd-eps": dict(gamma=0.5, eta=0.1),
    "fogd-l2": dict(gamma=0.5, n_components=200, eta=0.5),
    "rrf-l2": dict(gamma=0.5, n_components=100, eta=0.5),
}
n_runs = 5
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for name, params in learners.items():
    results = [ok.run_online(ok.make_learner(name, seed=r, **params), X, y, seed=0, run=r)
               for r in range(n_runs)]
    n_seen = results[0].curve["n_seen"]
    rmse = np.array([r.curve["rmse"] for r in results])
    mean, std = rmse.mean(axis=0), rmse.std(axis=0)
    ax.plot(n_seen, mean, label=f"{name}: {mean[-1]:.4f} ± {std[-1]:.4f}")
    ax.fill_between(n_seen, mean - std, mean + std, alpha=0.25)
ax.axhline(np.std(y), color="grey", lw=0.8, ls="--", label="predicting the mean")
ax.set_xscale("log")
ax.set_xlabel("examples seen")
ax.set_ylabel("cumulative online RMSE")
ax.set_title(f"noisy 2-D sinc, mean ± std over {n_runs} permutations")
ax.legend()
fig.tight_layout()
plt.show()
