"""README.md stays true: its Python quick start runs as a doctest, its CI block has two commands."""
import doctest
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_quick_start_runs(monkeypatch):
    monkeypatch.chdir(REPO)
    failures, attempted = doctest.testfile(str(REPO / "README.md"), module_relative=False,
                                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted >= 5
    assert failures == 0


def test_readme_has_the_two_setup_commands_ci_runs():
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- ci:commands -->\s*```sh\n(.*?)```", text, re.S)
    assert block, "README.md lacks the ci:commands block .ci/run executes"
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("pip install") and "onlinekern.train" in commands[0]
    assert commands[1].startswith("pip install") and "pytest" in commands[1]
