"""
Accuracy against time for several learners
==========================================

Each learner makes one pass over five random permutations of the sample stream; the point is
the mean mistake rate (± standard deviation, vertical bar) against the median learning time
of a pass. Every learner uses the same kernel width g = 0.5; the sizes are small (budgets of
200 support vectors for BSGD and BOGD and 100 for RBP; 200 frequencies for FOGD, 100 for RRF),
so the budgeted and random-feature learners trade a little accuracy for a bounded cost per
example. On a stream of 3,000 rows a pass takes milliseconds, so the times are rough.
"""
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
import numpy as np

import onlinekern as ok

# The bundled sample data, found from this file or from the working directory upwards.
HERE = Path(globals().get("__file__", "plot.py")).resolve().parent
DATA = next(d / "data" for d in (HERE, *HERE.parents)
            if (d / "data" / "sample_classification.libsvm").is_file())
X, y = ok.load_libsvm(DATA / "sample_classification.libsvm")

# %%
# :func:`onlinekern.make_learner` takes the command-line names (``python -m onlinekern.train
# --list``) with keyword parameters.

settings = {
    "perceptron": dict(gamma=0.5),
    "ogd-hinge": dict(gamma=0.5, eta=0.5),
    "rbp": dict(gamma=0.5, budget=100),
    "bsgd-removal": dict(gamma=0.5, budget=200),
    "bogd-hinge": dict(gamma=0.5, budget=200),
    "fogd-hinge": dict(gamma=0.5, n_components=200, eta=0.5),
    "rrf-hinge": dict(gamma=0.5, n_components=100, eta=0.5),
}
n_runs = 5
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for name, params in settings.items():
    results = [ok.run_online(ok.make_learner(name, **params), X, y, seed=0, run=r)
               for r in range(n_runs)]
    rates = np.array([r.mistake_rate for r in results])
    ms = 1e3 * np.median([r.seconds for r in results])
    ax.errorbar(ms, rates.mean(), yerr=rates.std(), fmt="o", capsize=3, label=name)
    print(f"{name:>13}: {rates.mean():5.2f} ± {rates.std():.2f} % mistakes, "
          f"{ms:7.2f} ms per pass, final size {results[0].model_size}")
ax.set_xscale("log")
ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.set_xlabel("learning time of one pass (ms, median over runs)")
ax.set_ylabel("online mistake rate (%)")
ax.set_title("two spirals, 3,000 rows, 5 permutations")
ax.legend(fontsize="small")
fig.tight_layout()
plt.show()
