"""
Cost against the model size: D for FOGD, B for a budget
=======================================================

A random-feature learner pays O(D·d) per example for its D frequencies, a budgeted kernel
learner O(B·d) for its B support vectors: both should grow about linearly with their size
parameter, while the mistake rate falls. Here FOGD is run for several D and RBP (the
Randomized Budget Perceptron) for several budgets B on the same stream, timing the learning of
one pass (:attr:`onlinekern.OnlineResult.seconds`, data generation excluded; median of three
passes). BENCHMARKS.md has the same measurements on ijcnn1, on an otherwise quiet machine.
"""
import matplotlib.pyplot as plt
import numpy as np

import onlinekern as ok

# %%
# A synthetic stream long enough to time: 8,000 rows with 10 dense features, a nonlinear
# boundary in the first two, and 10 % of the labels flipped, so that the Perceptron keeps
# making mistakes and every budget below fills up early in the pass.

rng = np.random.default_rng(0)
n, d = 8_000, 10
X = rng.uniform(-1.0, 1.0, size=(n, d))
y = np.where(np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - 0.4 > 0, 1.0, -1.0)
y[rng.random(n) < 0.1] *= -1


def measure(make, sizes, repeats=3):
    """Median microseconds per example, mistake rate and final model size, for each size."""
    cost, error, size_reached = [], [], []
    for size in sizes:
        # one untimed pass first (warm caches and thread pool), then the timed ones
        results = [ok.run_online(make(size), X, y, seed=0) for _ in range(repeats + 1)][1:]
        cost.append(1e6 * np.median([r.seconds for r in results]) / n)
        error.append(results[0].mistake_rate)  # the same in every repeat: one seed decides all
        size_reached.append(results[0].model_size)
    return np.array(cost), np.array(error), size_reached


# %%
# Both learners at the same kernel width g = 0.5 of k(x, x') = exp(-g ||x - x'||²).

sizes = [50, 100, 200, 400, 800, 1600]
fogd_cost, fogd_error, _ = measure(lambda D: ok.FOGD(gamma=0.5, n_components=D, eta=0.5), sizes)
rbp_cost, rbp_error, rbp_size = measure(lambda B: ok.RBP(gamma=0.5, budget=B), sizes)
print("RBP final model sizes (support vectors):", rbp_size)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
left.loglog(sizes, fogd_cost, "o-", label="FOGD-hinge, size D")
left.loglog(sizes, rbp_cost, "s-", label="RBP, budget B")
ref = np.array(sizes, dtype=float)
left.loglog(ref, rbp_cost[-1] * ref / ref[-1], "k:", label="linear in the size")
left.set_xlabel("D (frequencies) or B (support vectors)")
left.set_ylabel("learning time (µs / example)")
left.legend()
right.semilogx(sizes, fogd_error, "o-", label="FOGD-hinge")
right.semilogx(sizes, rbp_error, "s-", label="RBP")
right.axhline(10, color="grey", lw=0.8, ls="--", label="label noise (10 %)")
right.set_xlabel("D or B")
right.set_ylabel("online mistake rate (%)")
right.legend()
fig.tight_layout()
plt.show()
