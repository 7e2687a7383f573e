"""Sphinx configuration of the onlinekern documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root after
``pip install -e '.[docs]'``. The API pages are generated from the docstrings (autosummary,
numpydoc) into ``docs/api/generated/``; the gallery runs ``docs/examples/plot_*.py`` into
``docs/auto_examples/``. Both are build outputs and are not committed.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Document the package of this source tree (built in place), not another installed copy.
sys.path.insert(0, ROOT)

import onlinekern  # noqa: E402

project = "onlinekern"
author = "the onlinekern developers"
copyright = "the onlinekern developers"
release = onlinekern.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples/README.rst", "**/GALLERY_HEADER.rst"]
templates_path = ["_templates"]
html_theme = "alabaster"
html_static_path = []
html_title = f"onlinekern {release}"
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}

# API reference: one generated page per public name (the autosummary tables in api.rst).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {}
autodoc_typehints = "none"
# numpydoc writes the Parameters/Returns sections; a member table for each class would repeat
# every scikit-learn-style method on all nineteen learner pages, so the class template lists
# the methods itself.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

# The existing Markdown pages (performance.md, reproduction.md) are included as they are.
myst_heading_anchors = 3

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "plot_gallery": "True",
}


def _defaults_rows():
    import inspect

    import onlinekern as ok

    rows = []
    for name in sorted(n for n in ok.__all__ if isinstance(getattr(ok, n), type)
                       and issubclass(getattr(ok, n), ok.OnlineLearner) and n != "OnlineLearner"):
        cls = getattr(ok, name)
        params = [f"``{p.name}={p.default!r}``"
                  for p in inspect.signature(cls).parameters.values()
                  if p.name not in ("seed", "n_threads")]
        rows.append((f":class:`~onlinekern.{name}`", f"``{cls.family}``", ", ".join(params)))
    return rows


def _write_defaults(path):
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 15 12 73", "",
             "   * - class", "     - ``-a``", "     - parameters and their defaults"]
    for cls, family, params in _defaults_rows():
        lines += [f"   * - {cls}", f"     - {family}", f"     - {params}"]
    text = "\n".join(lines) + "\n"
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
        tmp = path + ".tmp"  # only when changed (no needless rebuilds), and atomically
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)


_write_defaults(os.path.join(HERE, "user_guide", "defaults_table.inc"))
