"""The package's layers, read statically from the source (docs/architecture.md).

Every module of ``thousand`` belongs to one layer, the first part of its name below the
package. A module may import its own layer and the layers before it, never one after it,
and the modules import no circle -- counting the imports inside functions too, so that a
lazy import cannot hide an upward edge. Each test fails the moment an upward import is
added to the source, before anything runs it.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "solver" / "thousand"  # the source of the package thousand, named as it is imported

LAYERS = ("base", "rules", "kernel", "engine", "solvers", "storage", "advice", "analysis", "play", "env", "web", "cli")

# third-party packages that belong to one layer (or one module) alone
CONFINED = {
    "click": ("cli",),
    "starlette": ("web",),
    "uvicorn": ("web", "cli"),
    "matplotlib": ("analysis.chart",),
    "distributed": ("solvers.cluster",),
    "cryptography": ("web.tls",),
    "gymnasium": ("env",),
    "pettingzoo": ("env",),
    "pyspiel": ("env", "analysis.openspiel"),
    "open_spiel": ("env",),
    "dask": (),
}


def module_files(root: Path = SOURCE) -> dict[str, Path]:
    """Dotted module name (``thousand.rules.ruleset``) -> source file, packages by ``__init__``."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["thousand", *parts])] = path
    return out


def _compiled(root: Path = SOURCE) -> set[str]:
    """The compiled modules: one per ``ext/*.pyx``, built into the kernel layer."""
    return {f"thousand.kernel.{p.stem}" for p in (REPO / "ext").glob("*.pyx")}


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """Every module of thousand that ``name`` imports anywhere in its file (module level,
    functions, ``TYPE_CHECKING`` blocks), with the line; ``from P import m`` names the
    module ``P.m`` when that is a module, else the package ``P``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "thousand"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            if src.split(".")[0] != "thousand":
                continue
            for alias in node.names:
                sub = f"{src}.{alias.name}"
                found.append((sub if sub in known else src, node.lineno))
    return found


def third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def layer_of(name: str) -> str | None:
    """The layer of a module (None: the package's API, ``thousand`` and ``thousand._compat``)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def upward_imports(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import of a later layer, or of the API package, by a module of a layer."""
    bad = []
    for src, targets in graph.items():
        ls = layer_of(src)
        if ls is None:
            continue
        for dst, line in targets:
            ld = layer_of(dst)
            if ld is None:
                bad.append(f"{src}:{line} imports {dst}, the API package, from inside the layer {ls}")
            elif LAYERS.index(ld) > LAYERS.index(ls):
                bad.append(f"{src}:{line} ({ls}) imports {dst} ({ld}), a later layer")
    return bad


def circles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The import circles: strongly connected sets of more than one module, or a module
    importing itself (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _line in graph.get(v, ()):
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
            if len(comp) > 1 or any(w == v for w, _ in graph.get(v, ())):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_graph(root: Path = SOURCE) -> dict[str, list[tuple[str, int]]]:
    files = module_files(root)
    known = set(files) | _compiled(root)
    return {name: imports(name, path, known) for name, path in files.items()}


# ----------------------------------------------------------------------------- the tests


def test_every_module_is_in_a_layer():
    stray = [n for n in module_files() if layer_of(n) is None and n not in ("thousand", "thousand._compat")]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"
    for layer in LAYERS[:-1]:
        init = SOURCE / layer / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert doc.startswith(f"thousand.{layer}:") and "import" in doc, (
            f"{init} must say what the layer owns and what it may import"
        )


def test_no_module_imports_a_later_layer():
    bad = upward_imports(import_graph())
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_circles():
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_import_of_thousand_names_a_module_that_exists():
    files = module_files()
    known = set(files) | _compiled()
    missing = [
        f"{src}:{line} imports {dst}" for src, ts in import_graph().items() for dst, line in ts if dst not in known
    ]
    assert not missing, missing


def test_third_party_front_ends_stay_in_their_layer():
    for name, path in module_files().items():
        for pkg in third_party(path) & set(CONFINED):
            allowed = CONFINED[pkg]
            rel = name[len("thousand.") :]
            assert any(rel == a or rel.startswith(a + ".") for a in allowed), (
                f"{name} imports {pkg}, which belongs to {allowed} alone"
            )


def test_lazy_names_of_a_package_point_into_that_package():
    """A package's ``lazy_names`` map (its former module's names) names modules of its own."""
    for name, path in module_files().items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # the map is written in the call, or bound to a name at module level first
        bound = {
            t.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_names":
                arg = node.args[1]
                where = ast.literal_eval(bound[arg.id] if isinstance(arg, ast.Name) else arg)
                for attr, module in where.items():
                    assert module.startswith(".") and module.count(".") == 1, (name, attr, module)
                    assert (path.parent / f"{module[1:]}.py").is_file(), (name, attr, module)
                    import importlib

                    assert hasattr(importlib.import_module(module, name), attr), (name, attr, module)


def test_the_checks_catch_an_upward_import_and_a_circle(tmp_path):
    """The same checks on a made-up tree with one upward import and one circle find both."""
    root = tmp_path / "solver"
    for rel, text in {
        "__init__.py": "",
        "base/__init__.py": "",
        "rules/__init__.py": "",
        "base/a.py": "def f():\n    from thousand.rules.b import g\n",
        "rules/b.py": "from thousand.rules.c import h\n",
        "rules/c.py": "from thousand.rules import b\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    graph = import_graph(root)
    assert upward_imports(graph) == ["thousand.base.a:2 (base) imports thousand.rules.b (rules), a later layer"]
    assert circles(graph) == [["thousand.rules.b", "thousand.rules.c"]]


# ----------------------------------------------------------------------------- old paths


def test_old_module_paths_import_with_a_deprecation_warning():
    import importlib
    import importlib.util

    from thousand._compat import MOVED

    for old, new in MOVED.items():
        if old in ("_kernel", "_sim") and importlib.util.find_spec(f"thousand.kernel.{old}") is None:
            continue  # the compiled modules, where they are not built
        import sys

        parent = old.rpartition(".")[0]
        if parent:  # the old package of an old module warns on its own: imported first, quietly
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                importlib.import_module(f"thousand.{parent}")
        sys.modules.pop(f"thousand.{old}", None)  # another test in this process may have imported it
        with pytest.warns(DeprecationWarning, match=f"thousand.{old} is now") as caught:
            module = importlib.import_module(f"thousand.{old}")
        del sys.modules[f"thousand.{old}"]  # so that the next import warns again
        assert len(caught) == 1, [str(w.message) for w in caught]
        if len(new) == 1 and not any(k.startswith(old + ".") for k in MOVED):
            assert module is importlib.import_module(f"thousand.{new[0]}")


def test_the_old_package_of_tables_serves_its_modules_as_the_new_ones():
    """``thousand.tables`` (0.2) is ``thousand.storage``: its modules import as the very new
    modules (one class, one function object), never as second copies of their files."""
    import sys

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for old in [m for m in sys.modules if m == "thousand.tables" or m.startswith("thousand.tables.")]:
            del sys.modules[old]
        import thousand.tables.solve as old_solve
        from thousand.tables import find_table
        from thousand.tables.players import PlayersSolution
    import thousand.storage.players
    import thousand.storage.solve

    assert old_solve is thousand.storage.solve and PlayersSolution is thousand.storage.players.PlayersSolution
    assert find_table is thousand.storage.files.find_table


def test_old_paths_of_split_modules_find_each_name_where_it_went():
    import sys

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for old in ("thousand.poker.game", "thousand.geometric", "thousand.turn", "thousand.solve"):
            sys.modules.pop(old, None)
        from thousand.geometric import geometric_duel, solve_geometric
        from thousand.poker.game import poker_solution, solve_poker
        from thousand.solve import Progress, solve_objective
        from thousand.turn import TurnEnds, expected_turn_points
    from thousand.base.progress import Progress as pr
    from thousand.engine.ends import TurnEnds as ends
    from thousand.solvers.geometric import solve_geometric as sg
    from thousand.solvers.poker import solve_poker as sp
    from thousand.solvers.turn import expected_turn_points as etp
    from thousand.storage.geometric import geometric_duel as gd
    from thousand.storage.poker import poker_solution as ps
    from thousand.storage.solve import solve_objective as so

    assert (
        geometric_duel,
        solve_geometric,
        poker_solution,
        solve_poker,
        Progress,
        solve_objective,
        TurnEnds,
        expected_turn_points,
    ) == (gd, sg, ps, sp, pr, so, ends, etp)


def test_the_former_modules_names_are_offered_by_their_packages():
    """``thousand.rules``, ``engine``, ``tables`` (now ``storage``) and ``play`` were modules;
    every public name they had still imports from the package, with no warning."""
    import thousand.engine.turn
    import thousand.play.game
    import thousand.play.session
    import thousand.rules.ruleset
    import thousand.storage.files

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from thousand.engine import TurnRules, finish_turn
        from thousand.play import Game, LoggedGame, run_session
        from thousand.rules import Ruleset, dump_toml, load_ruleset
        from thousand.storage import find_table, load_table
    assert TurnRules is thousand.engine.turn.TurnRules and finish_turn is thousand.engine.turn.finish_turn
    assert Game is thousand.play.game.Game and LoggedGame is thousand.play.session.LoggedGame
    assert run_session is thousand.play.session.run_session
    assert Ruleset is thousand.rules.ruleset.Ruleset and load_ruleset is thousand.rules.ruleset.load_ruleset
    assert dump_toml({"a": 1}) == "a = 1\n"
    assert find_table is thousand.storage.files.find_table and load_table is thousand.storage.files.load_table


def test_a_clone_folder_named_thousand_does_not_hide_the_package(tmp_path):
    """Python run from the folder that holds a clone named ``thousand`` (a folder without
    ``__init__.py``, which Python would take as a namespace package) imports the installed
    package: the editable install puts solver/ on the path, where a regular package wins."""
    import subprocess
    import sys

    (tmp_path / "thousand" / "solver").mkdir(parents=True)
    r = subprocess.run(
        [sys.executable, "-c", "import thousand; print(thousand.__file__); thousand.solve"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("__init__.py") and str(tmp_path) not in r.stdout


OBJECTIVE_NAMES = r"(turn|race|duel|rate|players\d*|geometric|poker|last turn)"
COMPARES_OBJECTIVE = re.compile(
    rf"""\b(objective|obj|kind)\s*(==|!=)\s*["']{OBJECTIVE_NAMES}["']"""
    rf"""|["']{OBJECTIVE_NAMES}["']\s*(==|!=)\s*\w*(objective|obj|kind)\b"""
    r"""|\b(objective|obj)\s+(not\s+)?in\s+\("""
)


def test_no_module_but_the_registry_compares_objective_names():
    """Each objective is described once (thousand.base.objectives); everything else asks the
    registry what an objective is, never which one it is by name."""
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for name, path in module_files().items()
        if name != "thousand.base.objectives"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if COMPARES_OBJECTIVE.search(line)
    ]
    assert not found, found


def test_the_check_for_objective_comparisons_catches_them():
    for line in ('if objective == "duel":', "race = obj != 'race'", 'if "rate" == objective:', "if objective in ("):
        assert COMPARES_OBJECTIVE.search(line), line
    for line in ('objective_named("duel").advisor(', 'if self.mode == "race":', 'kind = "keep"'):
        assert not COMPARES_OBJECTIVE.search(line), line
