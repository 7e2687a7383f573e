"""No accuracy changes (issue 7): every learner gives the golden "before" results.

``tests/golden/results.json`` (written by ``tests/make_golden.py``) holds, for every registered
(learner, task), the pre-update scores of one online pass over a small synthetic stream, the
mistakes or RMSE, the model size and the final decision values on held-out rows, all exact
(``float.hex``), with the inputs and the full hyper-parameters.  Each case is rerun here and must
agree within 1e-12 relative; mistakes and model sizes exactly.  A second pass of every case at
``ONLINEKERN_SIMD=scalar`` (libm instead of glibc's vectorised libmvec) is held to the same
tolerance, so the vectorised and scalar math are proven interchangeable; the few cases where the
algorithm amplifies their ulp differences beyond that are listed, with the measured gap and the
reason, in ``make_golden.SIMD_SENSITIVE`` and compared to their own scalar-level numbers.

``ONLINEKERN_GOLDEN=path`` checks another golden file instead (e.g. a deliberately perturbed copy,
to see this test fail).
"""
import os
from pathlib import Path

import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core import vmath

import make_golden as mg

GOLDEN_PATH = Path(os.environ.get("ONLINEKERN_GOLDEN", mg.GOLDEN))
REGENERATE = ("if the change of results is intended (a bug fix, a new learner or default), run "
              "`python tests/make_golden.py` and say why in the commit message; "
              "performance work must not change results")

try:
    GOLDEN = mg.load(GOLDEN_PATH)
except FileNotFoundError:
    GOLDEN = None
CASES = {} if GOLDEN is None else {c["id"]: c for c in GOLDEN["cases"]}
DATA = None if GOLDEN is None else mg.load_inputs(GOLDEN)

# Tolerance: rtol 1e-12 with an absolute floor of 1e-12 * max|value| of the array compared
# (make_golden.worst_ratio).  The floor is needed because libmvec (SIMD levels 1-2) and libm
# (level 0) cos/sin/exp differ by a few ulp, and a future vectorisation may reorder sums: a score
# is a sum of many kernel or feature terms, so its error is a few ulp of the terms, which relative
# to a score that cancels to ~0 is unbounded; relative to the largest score it is ~1e-15.
RTOL = mg.RTOL


def _fail_message(case_id, key, got, want):
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        return f"{case_id}: {key} shape {g.shape} != golden {w.shape}"
    scale = float(np.max(np.abs(w), initial=0.0))
    err = np.abs(g - w) / (RTOL * np.abs(w) + RTOL * scale)
    i = tuple(int(j) for j in np.unravel_index(int(np.argmax(np.where(np.isnan(err), np.inf, err))), w.shape))
    a, b = float(g[i]), float(w[i])
    return (f"{case_id}: {key}{list(i)} = {a!r}, golden {b!r} "
            f"(|diff| {abs(a - b):.3g} = {mg.worst_ratio(g, w):.3g} x tolerance)")


def compare(case_id, got, want):
    """Failure messages (empty: equal within tolerance) for a rerun vs stored results (hex)."""
    bad = []
    for key in ("scores", "decision"):
        g, w = mg.unhex(got[key]), mg.unhex(want[key])
        if mg.worst_ratio(g, w) > 1:
            bad.append(_fail_message(case_id, key, g, w))
    for key in ("n_mistakes", "model_size"):
        if got[key] != want[key]:
            bad.append(f"{case_id}: {key} = {got[key]}, golden {want[key]}")
    if (got["rmse"] is None) != (want["rmse"] is None) or (
            want["rmse"] is not None
            and mg.worst_ratio(float.fromhex(got["rmse"]), float.fromhex(want["rmse"])) > 1):
        bad.append(f"{case_id}: rmse = {got['rmse']}, golden {want['rmse']}")
    return bad


def expected(case, vector_math):
    """The stored numbers for the math in use: the scalar-level ones where the file keeps them
    (SIMD-sensitive cases) and the process runs without libmvec, else the main ones."""
    return case["scalar"] if (not vector_math and "scalar" in case) else case


def test_golden_file_present_and_consistent():
    assert GOLDEN is not None, f"{GOLDEN_PATH} is missing: run `python tests/make_golden.py`"
    head = GOLDEN["header"]
    assert GOLDEN["format"] == mg.FORMAT and head["rtol"] == RTOL
    assert head["vector_math"] and head["scalar_level"] == 0
    assert head["n_cases"] == len(CASES) == len(GOLDEN["cases"])
    # the list of SIMD-sensitive cases is the tool's, and exactly those carry scalar numbers
    assert head["simd_sensitive"] == mg.SIMD_SENSITIVE, \
        "make_golden.SIMD_SENSITIVE changed since the file was written: " + REGENERATE
    assert {i for i, c in CASES.items() if "scalar" in c} == set(mg.SIMD_SENSITIVE)


def test_every_registered_learner_and_task_has_a_golden_case():
    """A new learner (or a new task of one) cannot slip by without golden numbers."""
    registered = {mg.case_id(n, t) for n, t in mg.registered_pairs()}
    missing = sorted(registered - set(CASES))
    stale = sorted(set(CASES) - registered)
    assert not missing, (f"no golden results for {missing}: run `python "
                         f"tests/make_golden.py` to add them (and commit tests/golden/results.json)")
    assert not stale, (f"golden cases of learners no longer registered: {stale}: run "
                       f"`python tests/make_golden.py`")


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_results_equal_golden(case_id):
    case = CASES[case_id]
    got = mg.rerun(case, DATA)
    bad = compare(case_id, got, expected(case, vmath.vector_math()))
    assert not bad, "\n".join(bad) + f"\n({case['learner']}, params {case['params']}, " \
                                     f"sparse={case['sparse']}) -- " + REGENERATE


def test_scalar_libm_agrees_with_vectorised_golden():
    """Every case rerun at ONLINEKERN_SIMD=scalar (one child process): within 1e-12 of the
    golden numbers made with libmvec, or, for the listed SIMD-sensitive cases, within 1e-12 of
    their own scalar-level numbers with mistakes and sizes equal and the gap to the vectorised
    numbers below make_golden.SIMD_GAP."""
    assert GOLDEN is not None
    child = mg.rerun_at_level(GOLDEN, GOLDEN["cases"], "scalar")
    assert child["simd_level"] == 0 and not child["vector_math"]
    bad = []
    for case_id, case in CASES.items():
        got = child["results"][case_id]
        if case_id in mg.SIMD_SENSITIVE:
            bad += compare(case_id, got, case["scalar"])
            g = max(mg.gap(mg.unhex(got[k]), mg.unhex(case[k])) for k in ("scores", "decision"))
            if g > mg.SIMD_GAP:
                bad.append(f"{case_id}: scalar vs vectorised gap {g:.3g} > {mg.SIMD_GAP:g} "
                           f"(recorded: {mg.SIMD_SENSITIVE[case_id]})")
            bad += [f"{case_id}: {k} differs between SIMD levels" for k in ("n_mistakes", "model_size")
                    if got[k] != case[k]]
        else:
            bad += compare(case_id, got, case)
    assert not bad, ("scalar (libm) results differ from the golden ones:\n" + "\n".join(bad) +
                     "\nA new SIMD-sensitive case needs an explanation in make_golden.SIMD_SENSITIVE, "
                     "not a wider tolerance")


def test_compare_catches_small_changes():
    """The comparison itself: 1e-9 relative on one score, a flipped mistake count, a changed
    model size, or a changed shape are all reported; a change below 1e-12 is not."""
    case = CASES[sorted(CASES)[0]]
    s = mg.unhex(case["scores"])
    flat = s.reshape(-1)
    k = int(np.argmax(np.abs(flat)))

    def variant(scale=None, **changes):
        v = dict(case, **changes)
        if scale is not None:
            f = flat.copy()
            f[k] *= scale
            v["scores"] = mg.hexify(f.reshape(s.shape))
        return v

    assert compare("c", case, case) == []
    assert compare("c", variant(1 + 1e-9), case)
    assert compare("c", variant(1 + 2e-13), case) == []
    assert compare("c", variant(model_size=case["model_size"] + 1), case)
    assert compare("c", variant(decision=case["decision"][:-1]), case)
    assert compare("c", variant(n_mistakes=(case["n_mistakes"] or 0) + 1), case)
    assert np.isinf(mg.worst_ratio([np.nan], [1.0])) and mg.worst_ratio([0.0], [0.0]) == 0
    assert ok.available_learners()          # the registry the coverage test reads is populated
