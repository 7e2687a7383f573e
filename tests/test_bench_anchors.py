"""The Pareto statement of tools/bench_anchors.py: which onlinekern point dominates an anchor."""
from streams import load_tool

N = 1000


def _point(kind, us, rate, rows=N, rate_at=None, family="f"):
    return {"kind": kind, "family": family, "us": us, "rate": rate, "rows": rows, "prefix": rows < N,
            "command": "c", "rate_at": rate_at or {}}


def test_an_anchor_is_dominated_only_by_an_as_accurate_point_ten_times_cheaper():
    ba = load_tool("bench_anchors")
    points = {"fast but worse": _point("onlinekern", 1.0, 5.0),
              "better, 9x cheaper": _point("onlinekern", 100 / 9, 2.0),
              "anchor": _point("anchor", 100.0, 3.0)}
    v = ba.verdicts(points, N)["anchor"]
    assert not v["dominated"]
    assert v["cheap"] == "fast but worse" and v["cheap_ratio"] == 100.0
    assert v["accurate"] == "better, 9x cheaper"
    points["better, 10x cheaper"] = _point("onlinekern", 10.0, 3.0)       # equal rate counts
    v = ba.verdicts(points, N)["anchor"]
    assert v["dominated"] and v["by"] == "better, 10x cheaper" and v["n_dominating"] == 1


def test_a_prefix_anchor_is_judged_on_onlinekern_s_rate_over_the_same_rows():
    ba = load_tool("bench_anchors")
    ok_point = _point("onlinekern", 1.0, 2.0, rate_at={"100": 9.0})       # 2 % overall, 9 % on the first 100
    anchor = _point("anchor", 100.0, 8.0, rows=100)
    v = ba.verdicts({"ok": ok_point, "vw": anchor}, N)["vw"]
    assert not v["dominated"] and v["cheap_rate"] == 9.0
    anchor["rate"] = 9.5
    assert ba.verdicts({"ok": ok_point, "vw": anchor}, N)["vw"]["dominated"]


def test_the_table_escapes_pipes_and_marks_prefixes():
    ba = load_tool("bench_anchors")
    points = {"ok": _point("onlinekern", 1.0, 2.0, rate_at={"100": 9.0}),
              "river": dict(_point("anchor", 50.0, 8.0), command="RBFSampler() | PAClassifier()"),
              "vw": _point("anchor", 100.0, 8.0, rows=100)}
    res = {"label": "toy", "rows": N, "points": points, "verdicts": ba.verdicts(points, N)}
    text = ba.markdown(res)
    assert "RBFSampler() \\| PAClassifier()" in text
    assert "| 100 (prefix) |" in text and "| **ok** |" in text
