"""The documentation stays true and builds.

* Every Python example of the reST pages runs (in a scratch directory that sees the bundled
  ``data/``), so the guide cannot drift from the API.
* The site builds with ``-W`` (no warning at all), every name of ``onlinekern.__all__`` has its
  own API page documenting that object, and the gallery produced a figure for each example.
  These skip when sphinx, numpydoc, sphinx-gallery, myst-parser or matplotlib is missing
  (``pip install -e '.[docs]'``).
"""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import onlinekern

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _python_blocks():
    """(page:line, code) of every ``.. code-block:: python`` of the reST pages."""
    blocks = []
    for page in sorted(DOCS.rglob("*.rst")):
        rel = page.relative_to(DOCS)
        if rel.parts[0] in ("_build", "auto_examples", "api", "_templates"):
            continue
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != ".. code-block:: python":
                continue
            body, j = [], i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("   ")):
                body.append(lines[j])
                j += 1
            blocks.append((f"{rel}:{i + 1}", textwrap.dedent("\n".join(body))))
    return blocks


BLOCKS = _python_blocks()


def test_the_pages_have_python_examples():
    assert len(BLOCKS) >= 5, [where for where, _ in BLOCKS]


@pytest.mark.parametrize("where,code", BLOCKS, ids=[where for where, _ in BLOCKS])
def test_python_example_runs(where, code, tmp_path, monkeypatch):
    (tmp_path / "data").symlink_to(REPO / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, where, "exec"), {"__name__": "__docs__"})


def _require_doc_tools():
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "matplotlib"):
        pytest.importorskip(module)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the site once with -W into a temporary directory; return the output directory."""
    _require_doc_tools()
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(DOCS), str(out)], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, f"sphinx -W failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    return out


def test_site_builds_without_warnings(site):
    assert (site / "index.html").is_file()
    for page in ("getting_started", "api", "user_guide/index", "user_guide/defaults",
                 "auto_examples/index", "performance", "reproduction"):
        assert (site / f"{page}.html").is_file(), page


@pytest.mark.parametrize("name", onlinekern.__all__)
def test_every_public_name_has_an_api_page(site, name):
    page = site / "api" / "generated" / f"onlinekern.{name}.html"
    assert page.is_file(), f"no API page for onlinekern.{name}"
    text = page.read_text(encoding="utf-8")
    assert f'id="onlinekern.{name}"' in text, f"the page of onlinekern.{name} does not document it"
    obj = getattr(onlinekern, name)
    if isinstance(obj, type):
        kind = "exception" if issubclass(obj, BaseException) else "class"
    else:
        kind = "function"
    # onlinekern.sweep / onlinekern.tune are functions, although modules of the same names exist
    assert f'<dl class="py {kind}">' in text, f"onlinekern.{name} is not documented as a {kind}"


def test_gallery_made_a_figure_for_every_example(site):
    examples = sorted(p.stem for p in (DOCS / "examples").glob("plot_*.py"))
    assert len(examples) >= 3
    for stem in examples:
        assert (site / "auto_examples" / f"{stem}.html").is_file(), stem
        figures = list((site / "_images").glob(f"sphx_glr_{stem}_*.png"))
        assert any(not f.name.endswith("_thumb.png") for f in figures), f"{stem} drew no figure"


def test_defaults_page_lists_every_learner(site):
    text = (site / "user_guide" / "defaults.html").read_text(encoding="utf-8")
    learners = [n for n in onlinekern.__all__ if isinstance(getattr(onlinekern, n), type)
                and issubclass(getattr(onlinekern, n), onlinekern.OnlineLearner)
                and n != "OnlineLearner"]
    assert len(learners) >= 19
    for name in learners:
        assert re.search(rf'href="[^"]*onlinekern\.{name}\.html', text), name
