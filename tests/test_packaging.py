"""The project's metadata stays true: one version, ``python -m onlinekern``, LICENSE, CITATION.cff
(a reference for every learner's paper), CHANGELOG.md and the wheel-build configuration."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import onlinekern as ok
from onlinekern.__main__ import TOOLS, main
from onlinekern.predict import main as predict_main

REPO = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")      # Python >= 3.11


def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_version_has_one_source():
    project = pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "onlinekern.version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", ok.__version__)


def test_installed_metadata_matches_the_package():
    from importlib import metadata
    try:
        dist = metadata.distribution("onlinekern")
    except metadata.PackageNotFoundError:
        pytest.skip("onlinekern is not installed (a source tree on sys.path)")
    assert dist.version == ok.__version__


def test_main_version_and_usage(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"onlinekern {ok.__version__}\n"
    assert main([]) == 0
    out = capsys.readouterr().out
    for tool, _ in TOOLS:
        assert f"  {tool}  " in out
    assert {tool for tool, _ in TOOLS} == {"train", "predict", "sweep", "report"}
    assert main(["train"]) == 2
    assert "unknown argument 'train'" in capsys.readouterr().err


def test_python_dash_m_onlinekern():
    out = subprocess.run([sys.executable, "-m", "onlinekern", "--version"], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    assert out == f"onlinekern {ok.__version__}\n"


def test_predict_version(capsys):
    assert predict_main(["--version"]) == 0
    assert capsys.readouterr().out == f"onlinekern {ok.__version__}\n"


def test_license_is_bsd3():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License\n\nCopyright (c) 2026, the onlinekern developers\n")
    assert "Neither the name of the copyright holder" in text
    assert pyproject()["project"]["license"] == {"text": "BSD-3-Clause"}


def test_citation_cites_every_learners_paper():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["version"] == ok.__version__
    assert cff["license"] == "BSD-3-Clause"
    refs = cff["references"]
    cited = {cls.strip(): ref for ref in refs for cls in ref["notes"].split(",")}
    for info in ok.available_learners().values():
        cls = info["class"]
        ref = cited.get(cls.__name__)
        assert ref is not None, f"{cls.__name__} ({cls.paper}) has no reference in CITATION.cff"
        first_author = ref["authors"][0]["family-names"]
        assert str(ref["year"]) in cls.paper and cls.paper.startswith(first_author[:3]), (cls.paper, ref["title"])


def test_changelog_sections():
    text = (REPO / "CHANGELOG.md").read_text()
    heads = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert heads[:2] == ["Unreleased", ok.__version__]


def test_cibuildwheel_tests_name_real_files():
    cfg = pyproject()["tool"]["cibuildwheel"]
    files = re.findall(r"\{project\}/(\S+)", cfg["test-command"])
    assert files and all((REPO / f).is_file() for f in files)
    assert "pp*" in cfg["skip"] and "*-win*" in cfg["skip"]
