"""Write the golden results of every learner: the "no accuracy changes" safety net (issue 7).

For every registered learner name and every task it supports, one online pass
(``ok.run_online(learner, X, y, seed=0, keep_scores=True)``, one thread) over a small synthetic
stream, and the final ``decision_function`` on held-out rows, are stored in
``tests/golden/results.json`` with every float written exactly (``float.hex``).
``tests/test_golden.py`` reruns each case and demands the same numbers within 1e-12 relative,
so performance work cannot change what a learner computes without the test saying so.

Vectorised vs scalar libm: a second pass of every case at ``ONLINEKERN_SIMD=scalar`` (libm
cos/sin/exp instead of glibc's libmvec, a few ulp apart) must agree with the stored numbers
within the same 1e-12.  The few cases where the algorithm itself amplifies those ulp beyond that
are listed in ``SIMD_SENSITIVE`` with the measured gap and the reason; for them the file also
stores the scalar-level results, so both paths are held to 1e-12 against their own "before"
state.  A case outside the list that exceeds the tolerance stops the tool: investigate it, do
not widen the tolerance.

The file carries its own inputs (the three data sets, exactly), the full hyper-parameters of
every case (``get_params()``, so a later change of a default does not silently change a case),
and a header naming the commit and SIMD level that produced it.  Running the tool twice on the
same build gives the identical file; it is written atomically.

Usage::

    python tests/make_golden.py            # (re)write tests/golden/results.json
    python tests/make_golden.py --check    # same numbers as the file? (no write)
    python tests/make_golden.py --add-missing   # add newly registered learners' cases only
    python tests/make_golden.py --add-missing --redo lasvm   # ... and build one learner's again

Regenerate only when a change of results is intended (a bug fix, a new learner), and say so in
the commit message: the file is the "before" state every later change is compared to.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))       # run as a script or imported by tests/test_golden.py

import onlinekern as ok                                     # noqa: E402
from onlinekern._core import vmath                          # noqa: E402
from onlinekern.io.atomic import atomic_write               # noqa: E402

GOLDEN = REPO / "tests" / "golden" / "results.json"
FORMAT = 1
RTOL = 1e-12           # relative tolerance of every comparison (issue 7)

T_TRAIN = 200          # rows of each online pass
N_HELD = 20            # held-out rows for the final decision_function
N_FEATURES = 5
DATA_SEEDS = {"binary": 0, "multiclass": 1, "regression": 2}
PERMUTATION_SEED = 0   # run_online(..., seed=0): the presentation order is a permutation

# Small budgets and feature counts so that the budget maintenance paths (removal, merging,
# projection, k-merging, ...) run many times in 200 rows.  Applied where the learner has the
# parameter; everything else keeps its default.  The full get_params() of each case is stored.
COMMON = {"budget": 20, "n_components": 32, "n_threads": 1}
FAMILY = {
    "nogd": {"rank": 10},                       # rank <= budget
    "dualsgd": {"k_merge": 5},                  # k_merge <= budget
    "sg": {"horizon": T_TRAIN, "n_samples": 32},   # the step needs T (ALGORITHMS.md, SG)
    "dsg": {"batch_size": 16, "block_size": 8},    # several doubly-stochastic batches per pass
    "cdsg": {"batch_size": 16, "block_size": 8},
    "udsg": {"batch_size": 16, "block_size": 8},
}
# DualSGD's Pegasos coefficients -g/(lambda t) with the default lambda = 1e-4 blow up under the
# unbounded squared loss (DivergenceError, see tests/test_all_learners.py): lambda = 1.
CASE = {("dualsgd-l2", "regression"): {"lam": 1.0}}

# Cases whose vectorised (libmvec, SIMD levels 1-2) and scalar (libm, level 0) runs differ by more
# than RTOL, measured on this golden set with the build of the header (max |diff| / max |value|):
# the learner itself amplifies the few-ulp differences of cos/sin/exp; mistakes and model sizes
# stay equal.  For these the file also keeps the scalar-level numbers ("scalar"), and the gap
# between the two levels is held below SIMD_GAP (about 5x the worst measurement) instead of RTOL.
SIMD_GAP = 3e-11
SIMD_SENSITIVE = {
    # Projectron++ keeps K^{-1} of the SVs by block inversion; cond(K) ~ 4e3 here (budget 20,
    # gamma 1/d) and the projection delta = K^{-1} k multiplies kernel-value ulp by it.  The gap
    # is a jump at one ill-conditioned projection (t ~ 35), bounded afterwards (1e-10 over 1000
    # rows): scores 6.5e-12, decision values 1.9e-12.
    "projectronpp:binary": "K^-1 projection, cond(K) ~ 4e3: 6.5e-12",
    "projectronpp:multiclass": "K^-1 projection, cond(K) ~ 1.7e3: 1.25e-12",
}


def registered_pairs():
    """Every (learner name, task) the registry offers, sorted."""
    return sorted((name, task) for name, info in ok.available_learners().items() for task in info["tasks"])


def case_id(name, task):
    return f"{name}:{task}"


def make_inputs():
    """The three synthetic data sets (tests/streams.py generators), as plain float arrays."""
    from streams import make_X, make_data

    out = {}
    for task, seed in DATA_SEEDS.items():
        X, y = make_data(task, T=T_TRAIN, d=N_FEATURES, seed=seed)
        X_held = make_X(N_HELD, N_FEATURES, seed + 500)
        out[task] = {"X": np.asarray(X, dtype=np.float64), "y": np.asarray(y, dtype=np.float64),
                     "X_held": np.asarray(X_held, dtype=np.float64)}
    return out


def case_params(name, task):
    """Hyper-parameters passed for (name, task): COMMON/FAMILY/CASE where the learner has them."""
    learner = ok.make_learner(name)
    have = learner.get_params()
    family = ok.available_learners()[name]["family"]
    wanted = dict(COMMON)
    wanted.update(FAMILY.get(family, {}))
    wanted.update(CASE.get((name, task), {}))
    if "task" in have:
        wanted["task"] = "regression" if task == "regression" else "classification"
    return {k: v for k, v in wanted.items() if k in have}


def as_input(data, sparse):
    return sp.csr_matrix(data) if sparse else np.ascontiguousarray(data)


def final_scores(learner, X):
    """f(x) on held-out rows: a regressor's ``predict`` (it has no ``decision_function``)."""
    return learner.predict(X) if learner.task_ == "regression" else learner.decision_function(X)


def run_case(name, task, params, sparse, data):
    """One golden case: the online pass and the held-out decision values (numpy results)."""
    learner = ok.make_learner(name, **params)
    X, y = as_input(data["X"], sparse), data["y"]
    if task != "regression":
        y = y.astype(np.int64)
    res = ok.run_online(learner, X, y, seed=PERMUTATION_SEED, keep_scores=True)
    if res.task != task:
        raise RuntimeError(f"{name}: ran as {res.task}, expected {task}")
    return {
        "scores": np.asarray(res.scores, dtype=np.float64),
        "n_mistakes": None if res.n_mistakes is None else int(res.n_mistakes),
        "rmse": None if res.rmse is None else float(res.rmse),
        "model_size": int(res.model_size),
        "decision": np.asarray(final_scores(learner, as_input(data["X_held"], sparse)), dtype=np.float64),
        "all_params": learner.get_params(),
    }


# ---- exact (hex) encoding ---------------------------------------------------------------------
def hexify(a):
    """Nested lists of float.hex strings (exact; NaN/inf would be written as such too)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        return float(a).hex()
    return [hexify(v) for v in a]


def unhex(v):
    """Inverse of :func:`hexify` (numpy array)."""
    def conv(x):
        return [conv(e) for e in x] if isinstance(x, list) else float.fromhex(x)
    return np.asarray(conv(v), dtype=np.float64)


def load_inputs(golden):
    return {task: {k: unhex(v) for k, v in d.items()} for task, d in golden["data"].items()}


def load(path=GOLDEN):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def jsonable_params(params):
    out = {}
    for k, v in sorted(params.items()):
        if isinstance(v, (np.integer,)):
            v = int(v)
        elif isinstance(v, (np.floating,)):
            v = float(v)
        out[k] = v
    return out


def build_case(index, name, task, data):
    # Dense and CSR input alternate over the sorted case list, so every family with two or more
    # cases runs both readers (the sparse kernels take other code paths).
    sparse = index % 2 == 1
    params = case_params(name, task)
    r = run_case(name, task, params, sparse, data[task])
    return {
        "id": case_id(name, task),
        "learner": name,
        "task": task,
        "sparse": sparse,
        "seed": PERMUTATION_SEED,
        # what the tool chose (the rest are defaults) and every parameter actually in effect;
        # the test rebuilds the learner from "params" (all of them, n_threads excepted)
        "passed": jsonable_params(params),
        "params": jsonable_params({k: v for k, v in r["all_params"].items() if k != "n_threads"}),
        "n_mistakes": r["n_mistakes"],
        "rmse": None if r["rmse"] is None else r["rmse"].hex(),
        "model_size": r["model_size"],
        "scores": hexify(r["scores"]),
        "decision": hexify(r["decision"]),
    }


def rebuild_params(case):
    """Hyper-parameters to rebuild a stored case (everything recorded, one thread).

    Cases recorded before presets existed hold the papers' settings: they rerun with
    ``preset="paper"`` (no online target standardisation), which keeps them exact."""
    return dict({"preset": "paper"}, **case["params"], n_threads=1)


def rerun(case, data):
    """Rerun a stored case on the stored inputs; results in the stored (hex) encoding."""
    r = run_case(case["learner"], case["task"], rebuild_params(case), case["sparse"], data[case["task"]])
    return {"n_mistakes": r["n_mistakes"], "rmse": None if r["rmse"] is None else r["rmse"].hex(),
            "model_size": r["model_size"], "scores": hexify(r["scores"]), "decision": hexify(r["decision"])}


def worst_ratio(actual, expected, rtol=RTOL):
    """max |a - e| / (rtol |e| + rtol max|e|) over the array: <= 1 means within tolerance.

    The absolute floor rtol * max|e| is there for values near 0: a score is a sum of many terms
    computed with libmvec/libm cos, sin, exp that may differ by a few ulp, so its error is a few
    ulp of the *terms*, not of a sum that happens to cancel to ~0.  Shape mismatch or a NaN gives
    inf; two empty arrays give 0.
    """
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return np.inf
    if e.size == 0:
        return 0.0
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    if same.all():
        return 0.0
    scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.abs(a - e) / (rtol * np.abs(e) + rtol * scale)
    r = np.where(same, 0.0, r)
    return float(np.max(np.where(np.isnan(r), np.inf, r)))


def gap(actual, expected):
    """max |a - e| / max |e| (the SIMD gap measure of SIMD_SENSITIVE)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return np.inf
    scale = float(np.max(np.abs(e), initial=0.0))
    d = float(np.max(np.abs(a - e), initial=0.0))
    return d / scale if scale > 0 else (0.0 if d == 0 else np.inf)


CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import make_golden as mg
from onlinekern._core import vmath
req = json.load(sys.stdin)
data = mg.load_inputs(req)
out = {"simd_level": int(vmath.simd_level()), "vector_math": bool(vmath.vector_math()),
       "results": {c["id"]: mg.rerun(c, data) for c in req["cases"]}}
print(json.dumps(out))
"""


def rerun_at_level(golden_like, cases, level="scalar"):
    """Rerun ``cases`` in a child process with ``ONLINEKERN_SIMD=level`` (the variable caps the
    SIMD level when onlinekern is imported); ``golden_like`` supplies the hex "data".  Returns
    the child's {"simd_level", "vector_math", "results": {id: rerun}}."""
    env = dict(os.environ, ONLINEKERN_SIMD=level)
    req = json.dumps({"data": golden_like["data"], "cases": cases})
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).resolve().parent)], input=req,
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"child at ONLINEKERN_SIMD={level} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def git_commit():
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "onlinekern",
                                "include", "setup.py"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.strip() != ""
    except (OSError, subprocess.CalledProcessError):
        return "unknown", None
    return head, dirty


def render(header, data, cases):
    """The file text: header pretty, one data set and one case per line (readable diffs)."""
    def dump(o):
        # insertion order (fixed by build_case: id first), so each line starts with its case id
        return json.dumps(o, separators=(",", ":"))
    lines = ["{", f'"format": {FORMAT},', f'"header": {json.dumps(header, sort_keys=True, indent=1)},',
             '"data": {']
    tasks = sorted(data)
    for i, task in enumerate(tasks):
        d = {k: hexify(v) for k, v in data[task].items()}
        lines.append(f"{json.dumps(task)}: {dump(d)}" + ("," if i < len(tasks) - 1 else ""))
    lines.append("},")
    lines.append('"cases": [')
    for i, c in enumerate(cases):
        lines.append(dump(c) + ("," if i < len(cases) - 1 else ""))
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def scalar_pass(data, cases):
    """Rerun every case at the scalar level; keep the scalar numbers of SIMD_SENSITIVE cases and
    stop on any other case beyond RTOL (an unexplained difference is never accepted silently)."""
    data_hex = {"data": {t: {k: hexify(v) for k, v in d.items()} for t, d in data.items()}}
    child = rerun_at_level(data_hex, cases, "scalar")
    if child["vector_math"]:
        raise RuntimeError("ONLINEKERN_SIMD=scalar did not switch off the vectorised math")
    problems = []
    for case in cases:
        got = child["results"][case["id"]]
        ratio = max(worst_ratio(unhex(got[k]), unhex(case[k])) for k in ("scores", "decision"))
        g = max(gap(unhex(got[k]), unhex(case[k])) for k in ("scores", "decision"))
        structural = all(got[k] == case[k] for k in ("n_mistakes", "model_size"))
        if case["id"] in SIMD_SENSITIVE:
            if not structural or g > SIMD_GAP:
                problems.append(f"{case['id']}: SIMD gap {g:.3g} (bound {SIMD_GAP:g}), "
                                f"mistakes/size equal: {structural}")
            case["scalar"] = got
        elif ratio > 1 or not structural:
            problems.append(f"{case['id']}: scalar vs vectorised {ratio:.3g} x tolerance "
                            f"(gap {g:.3g}), mistakes/size equal: {structural}")
    if problems:
        raise RuntimeError("vectorised and scalar math disagree beyond the tolerance; investigate "
                           "before listing a case in SIMD_SENSITIVE:\n  " + "\n  ".join(problems))
    return child["simd_level"]


def generate():
    if not vmath.vector_math():
        raise RuntimeError("make the golden file with the vectorised math (SIMD level 1 or 2, "
                           "ONLINEKERN_SIMD unset): the scalar level is the second pass")
    data = make_inputs()
    cases = [build_case(i, name, task, data) for i, (name, task) in enumerate(registered_pairs())]
    unknown = set(SIMD_SENSITIVE) - {c["id"] for c in cases}
    if unknown:
        raise RuntimeError(f"SIMD_SENSITIVE names unknown cases: {sorted(unknown)}")
    scalar_level = scalar_pass(data, cases)
    commit, dirty = git_commit()
    header = {
        "tool": "tests/make_golden.py",
        "commit": commit,
        # True: onlinekern/, include/ or setup.py had uncommitted changes when the file was made
        "dirty": dirty,
        "simd_level": int(vmath.simd_level()),
        "vector_math": bool(vmath.vector_math()),
        "scalar_level": scalar_level,
        "simd_sensitive": dict(sorted(SIMD_SENSITIVE.items())),
        "numpy": np.__version__,
        "n_cases": len(cases),
        "rows": T_TRAIN,
        "held_out_rows": N_HELD,
        "permutation_seed": PERMUTATION_SEED,
        "rtol": RTOL,
        "simd_gap": SIMD_GAP,
        "note": "floats are float.hex; 'scalar' in a case: its numbers at ONLINEKERN_SIMD=scalar; "
                "checked by tests/test_golden.py",
    }
    return render(header, data, cases)


def add_missing(path, redo=()):
    """The file's cases kept as they are, plus those of (learner, task) pairs registered since:
    built (dense or CSR by their place in the sorted list, as ``generate`` would) on the file's
    own inputs and checked at the scalar level like every case.  For a new learner on a machine
    whose scalar libm differs from the one that made the file in cases already there.  The cases
    of the learners named in ``redo`` are dropped first and built again (a learner whose numbers
    changed on purpose)."""
    golden = load(path)
    data = load_inputs(golden)
    golden["cases"] = [c for c in golden["cases"] if c["learner"] not in redo]
    have = {c["id"] for c in golden["cases"]}
    new = [build_case(i, name, task, data) for i, (name, task) in enumerate(registered_pairs())
           if case_id(name, task) not in have]
    if new:
        scalar_pass(data, new)
    cases = sorted(golden["cases"] + new, key=lambda c: (c["learner"], c["task"]))
    header = dict(golden["header"], n_cases=len(cases))
    header["commit"], header["dirty"] = git_commit()
    return render(header, data, cases), len(new)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=str(GOLDEN), help="file to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true",
                    help="do not write: report whether the file would change (exit 1 if it would)")
    ap.add_argument("--add-missing", action="store_true",
                    help="keep the file's cases, add those of newly registered learners (add_missing)")
    ap.add_argument("--redo", action="append", default=[], metavar="LEARNER",
                    help="with --add-missing: build this learner's cases again (repeatable)")
    args = ap.parse_args(argv)
    out = Path(args.output)
    if args.add_missing:
        text, n_new = add_missing(out, tuple(args.redo))
        atomic_write(out, text)
        print(f"wrote {out}: {n_new} cases added")
        return 0
    text = generate()
    if args.check:
        # the numbers and inputs only: the header (commit, dirty flag) may differ harmlessly
        new = json.loads(text)
        old = load(out) if out.exists() else {}
        same = all(old.get(k) == new[k] for k in ("format", "data", "cases"))
        print(f"{out}: {'identical numbers' if same else 'WOULD CHANGE'}")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, text)
    n = text.count('"id":')
    print(f"wrote {out}: {n} cases, {len(text.encode())} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
