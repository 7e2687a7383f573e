"""Imports go one way only: no import cycle among onlinekern's modules, and no module uses
another module's underscore names.

The checker reads the sources, it does not import them: ``.py`` files are parsed with ``ast``
(imports inside functions count too), ``.pyx``/``.pxd`` files are scanned line by line for
``import`` / ``cimport`` / ``from ... (c)import`` statements.  An underscore name ``P._x`` (a
function, a class, a constant or a module) is private to ``P``: only ``P`` itself and the modules
inside package ``P`` may import it or reach it as an attribute (``onlinekern._core`` is private to
``onlinekern``, so every module of the package may use it; ``onlinekern.io._libsvm`` only the
modules of ``onlinekern.io``).  Importing a submodule does not count as importing its parent
packages, so ``onlinekern/__init__.py`` re-exporting the API is not a cycle by itself; a module
that imports ``onlinekern`` (the package) and is imported by it is.
"""
import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "onlinekern"


# ---- the checker ---------------------------------------------------------------------------------

def module_name(path, root):
    """``root/onlinekern/io/libsvm.py`` -> ``onlinekern.io.libsvm`` (``__init__`` -> the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules(root, top):
    """{module name: path} of every .py / .pyx / .pxd source under ``root/top``."""
    out = {}
    for path in sorted((root / top).rglob("*")):
        if path.suffix in (".py", ".pyx", ".pxd") and "__pycache__" not in path.parts:
            name = module_name(path, root)
            # a .pxd declares the .pyx of the same name: one module, both files scanned
            out.setdefault(name, []).append(path)
    return out


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve_relative(importer, is_package, module, level):
    if not level:
        return module
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


class Imports:
    """What one module imports: edges (module names) and uses of names ``(target, line)``."""

    def __init__(self):
        self.edges = {}        # imported module -> first line
        self.uses = []         # (dotted name used, line)

    def edge(self, mod, line):
        self.edges.setdefault(mod, line)


def _pick_module(dotted, modules):
    """The longest prefix of ``dotted`` that is a known module."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in modules:
            return cand
    return None


def scan_python(source, importer, is_package, modules, filename="<source>"):
    """Imports of one .py source (``modules``: every known module name)."""
    tree = ast.parse(source, filename=filename)
    found = Imports()
    bound = {}            # local name -> module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod = _pick_module(a.name, modules)
                if mod is not None:
                    found.edge(mod, node.lineno)
                found.uses.append((a.name, node.lineno))
                if a.asname:
                    bound[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(importer, is_package, node.module or "", node.level)
            base_mod = _pick_module(base, modules)
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in modules:
                    found.edge(full, node.lineno)
                    bound[a.asname or a.name] = full
                elif base_mod is not None:
                    found.edge(base_mod, node.lineno)
                found.uses.append((full if a.name != "*" else base, node.lineno))
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = []
            cur = node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in bound:
                dotted = ".".join([bound[cur.id]] + chain[::-1])
                found.uses.append((dotted, node.lineno))
    return found


_PYX_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+c?import\s+(.+)$")
_PYX_IMPORT = re.compile(r"^\s*c?import\s+(.+)$")


def scan_cython(source, importer, is_package, modules):
    """Imports of one .pyx/.pxd source: a regex on import / cimport / from lines."""
    found = Imports()
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].split("#", 1)[0]
        lineno = i + 1
        i += 1
        m = _PYX_FROM.match(line)
        if m:
            base, names = m.group(1), m.group(2)
            if "(" in names and ")" not in names:
                while i < len(lines) and ")" not in names:
                    names += " " + lines[i].split("#", 1)[0]
                    i += 1
            level = len(base) - len(base.lstrip("."))
            base = _resolve_relative(importer, is_package, base.lstrip("."), level)
            base_mod = _pick_module(base, modules)
            for item in names.strip("() \t").split(","):
                name = item.split(" as ")[0].strip()
                if not name:
                    continue
                full = f"{base}.{name}"
                if full in modules:
                    found.edge(full, lineno)
                elif base_mod is not None:
                    found.edge(base_mod, lineno)
                found.uses.append((full if name != "*" else base, lineno))
            continue
        m = _PYX_IMPORT.match(line)
        if m:
            for item in m.group(1).split(","):
                name = item.split(" as ")[0].strip()
                mod = _pick_module(name, modules)
                if mod is not None:
                    found.edge(mod, lineno)
                found.uses.append((name, lineno))
    return found


def private_violations(importer, found, top):
    """``file: line: message`` for every use of another module's underscore name."""
    out = []
    for dotted, line in found.uses:
        parts = dotted.split(".")
        if parts[0] != top:
            continue
        for k in range(1, len(parts)):
            if _private(parts[k]):
                owner = ".".join(parts[:k])
                if importer != owner and not importer.startswith(owner + "."):
                    out.append((line, f"uses {dotted}: {parts[k]} is private to {owner}"))
                break
    return out


def find_cycles(graph):
    """The strongly connected components with more than one module (or a self-import)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def check_tree(root, top="onlinekern"):
    """(cycles, violations) of the package ``root/top``; each cycle lists its modules and the
    import lines that close it, each violation reads ``path:line: message``."""
    cycles, violations, _ = scan_tree(root, top)
    return cycles, violations


def scan_tree(root, top="onlinekern"):
    """(cycles, violations, graph): ``graph`` maps each module to the modules it imports."""
    modules = find_modules(root, top)
    graph, where, violations = {}, {}, []
    for name, paths in modules.items():
        graph.setdefault(name, set())
        for path in paths:
            is_package = path.stem == "__init__"
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".py":
                found = scan_python(text, name, is_package, modules, str(path))
            else:
                found = scan_cython(text, name, is_package, modules)
            rel = path.relative_to(root)
            for mod, line in found.edges.items():
                if mod != name or path.suffix == ".py":
                    graph[name].add(mod)
                    where.setdefault((name, mod), f"{rel}:{line}")
            violations += [f"{rel}:{line}: {msg}" for line, msg in private_violations(name, found, top)]
    cycles = []
    for comp in find_cycles(graph):
        members = set(comp)
        lines = [f"{where[(a, b)]}: {a} imports {b}" for a in comp for b in sorted(graph[a])
                 if b in members]
        cycles.append(" -> ".join(comp) + "\n    " + "\n    ".join(lines))
    return cycles, violations, graph


# ---- the package ---------------------------------------------------------------------------------

def test_no_import_cycles():
    cycles, _ = check_tree(REPO)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_module_uses_another_modules_private_names():
    _, violations = check_tree(REPO)
    assert not violations, "private names used across modules:\n" + "\n".join(violations)


ENGINE_LAYERS = ["grids", "store", "specs", "data", "runner", "tuning", "sweep", "report", "shrinking",
                 "curves", "figures", "config", "sweep_cli", "report_cli"]


def test_experiment_engine_modules_import_only_lower_layers():
    """The order onlinekern/experiments/__init__.py documents: no module imports one above it."""
    _, _, graph = scan_tree(REPO)
    prefix = "onlinekern.experiments."
    engine = {m[len(prefix):] for m in graph if m.startswith(prefix)}
    assert engine == set(ENGINE_LAYERS)
    for i, mod in enumerate(ENGINE_LAYERS):
        for dep in graph[prefix + mod]:
            if dep.startswith(prefix):
                assert ENGINE_LAYERS.index(dep[len(prefix):]) < i, f"{mod} imports {dep}"
    doc = (PACKAGE / "experiments" / "__init__.py").read_text()
    positions = [doc.index(f"experiments.{m}`") for m in ENGINE_LAYERS]
    assert positions == sorted(positions)


def test_the_checker_sees_the_whole_package():
    modules = find_modules(REPO, "onlinekern")
    for name in ("onlinekern", "onlinekern.experiments.runner", "onlinekern._core.learner",
                 "onlinekern.io._libsvm"):
        assert name in modules
    assert any(p.suffix == ".pyx" for paths in modules.values() for p in paths)


# ---- the checker on synthetic packages -------------------------------------------------------------

def _write(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_checker_finds_a_synthetic_cycle(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n",
                      "pkg/b.py": "def f():\n    from pkg.c import g\n",
                      "pkg/c.py": "import pkg.a\n", "pkg/d.py": "from pkg import a\n"})
    cycles, violations = check_tree(tmp_path, "pkg")
    assert len(cycles) == 1 and cycles[0].startswith("pkg.a -> pkg.b -> pkg.c")
    assert "pkg/b.py:2: pkg.b imports pkg.c" in cycles[0]
    assert violations == []


def test_checker_finds_a_cycle_through_cython_and_relative_imports(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.pyx": "from pkg.b cimport thing\n",
                      "pkg/b.py": "from . import a\n"})
    cycles, _ = check_tree(tmp_path, "pkg")
    assert len(cycles) == 1 and "pkg.a" in cycles[0] and "pkg.b" in cycles[0]


def test_checker_finds_private_names(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg import _inner as _alias\n",
        "pkg/_inner.py": "",
        "pkg/a.py": "_x = 1\n",
        "pkg/b.py": "from pkg.a import _x\n",
        "pkg/c.py": "from pkg import a\nprint(a._x)\n",
        "pkg/d.pyx": "from pkg.a cimport (ok,\n    _x)\n",
        "pkg/sub/__init__.py": "from pkg.sub import _own\n",
        "pkg/sub/_own.py": "",
        "pkg/sub/user.py": "import pkg.sub._own\nfrom pkg.sub._own import f\n",
        "pkg/e.py": "from pkg.sub._own import f\nimport pkg.sub\npkg.sub._own.f()\n",
    })
    _, violations = check_tree(tmp_path, "pkg")
    assert sorted(violations) == [
        "pkg/b.py:1: uses pkg.a._x: _x is private to pkg.a",
        "pkg/c.py:2: uses pkg.a._x: _x is private to pkg.a",
        "pkg/d.pyx:1: uses pkg.a._x: _x is private to pkg.a",
        "pkg/e.py:1: uses pkg.sub._own.f: _own is private to pkg.sub",
        "pkg/e.py:3: uses pkg.sub._own.f: _own is private to pkg.sub",
    ]


@pytest.mark.parametrize("src", ["import pkg.a\nx = pkg.a.__doc__\n", "from pkg.a import __doc__\n"])
def test_dunder_names_are_not_private(tmp_path, src):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "", "pkg/b.py": src})
    assert check_tree(tmp_path, "pkg") == ([], [])


def test_no_module_outside_learners_and_core_exceeds_700_lines():
    """The house rule: a module outside onlinekern/learners and onlinekern/_core is at most 700 lines."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        n = len(path.read_text(encoding="utf-8").splitlines())
        if parts[0] not in ("learners", "_core") and n > 700:
            long.append(f"{path.relative_to(REPO)}: {n} lines")
    assert not long, "modules over 700 lines:\n" + "\n".join(long)
