"""The layers the folders show are the layers the imports keep.

Each subpackage of failgate_hooks may import only the layers below it; only
`commands/` imports click, only `git/` imports GitPython or starts git, only
`git/` and `verify/` start processes (besides the two `app/` modules
STARTS_PROCESSES names, each with its reason), and the core imports nothing
outside itself. Inside the core, the gate's own
rules (`core/*.py`) import nothing of the agent command scanner (`core/agent/`),
which may use them. Every import counts, including the
lazy ones inside functions and those only for type checking: a lazy import is
still a dependency, only a later one. Every import is absolute: a relative one
is refused, so none crosses a layer unread.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "failgate_hooks"

# layer -> the failgate layers it may import (itself always)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "git": {"core"},
    "ledger": {"core", "git"},
    "verify": {"core", "git"},
    "render": {"core"},
    "app": {"core", "git", "ledger", "verify", "render"},
    "commands": {"core", "git", "ledger", "verify", "render", "app"},
}
# third-party modules, and the one layer each may be imported from
OWNED_BY = {"click": "commands", "git": "git"}
# Starting processes: git/ for git itself, verify/ for verifiers; besides them only
# the modules of STARTS_PROCESSES, each for the reason it gives, and never git.
PROCESS_MODULES = {"subprocess"}
MAY_START_PROCESSES = {"git", "verify"}
STARTS_PROCESSES = {
    "app/demo.py": "runs failgate itself in a fresh interpreter, as a person would",
    "app/agent_install.py": "agent doctor replays the agent's hook command through sh",
}
# os's own ways to start one (verify/reaper.py spawns the verifier with posix_spawnp).
OS_PROCESS_CALLS = re.compile(r"(system|popen|fork|forkpty|posix_spawnp?|exec\w*|spawn\w*)\Z")
# The agent hook's rules, inside the core: they may use the gate's, never the reverse.
AGENT_RULES = "failgate_hooks.core.agent"
ONLY_THEY_START = "only git/ and verify/ start processes (and STARTS_PROCESSES' modules)"
# Modules that spell a git command line without starting it, and why.
SHOWS_GIT = {"app/demo.py": "prints the git command it ran through git/repo.run_git"}


def imports_of(source: str) -> list[str]:
    """Every module a source imports, absolute, anywhere in the file."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def relative_imports(source: str) -> list[str]:
    """Every relative import in a source (`from ..git import repo`), as written. None is
    allowed: `imports_of` reads absolute names only, so a layer crossed by a relative
    import would pass unseen."""
    return [
        f"from {'.' * node.level}{node.module or ''} import "
        + ", ".join(alias.name for alias in node.names)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]


def os_process_calls(source: str) -> list[str]:
    """Every use of os's calls that start a process (`os.posix_spawnp`, `from os import
    fork`): subprocess is not the only door."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and OS_PROCESS_CALLS.match(node.attr)
        ):
            found.append(f"os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and node.level == 0:
            found += [f"os.{a.name}" for a in node.names if OS_PROCESS_CALLS.match(a.name)]
    return found


def starts_git(source: str) -> bool:
    """Whether a source spells an argv that starts with git: `["git", …]` or `("git", …)`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.List | ast.Tuple) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                return True
    return False


def violations(layer: str, source: str) -> list[str]:
    """What a module of `layer` imports or does that its layer may not."""
    problems = []
    for name in imports_of(source):
        parts = name.split(".")
        top = parts[0]
        if top == "failgate_hooks" and len(parts) > 1:
            target = parts[1]
            if target in ALLOWED and target != layer and target not in ALLOWED[layer]:
                problems.append(f"imports {name} ({layer} may import {sorted(ALLOWED[layer])})")
        elif top in OWNED_BY and OWNED_BY[top] != layer:
            problems.append(f"imports {name}, which only {OWNED_BY[top]}/ may import")
        elif top in PROCESS_MODULES and layer not in MAY_START_PROCESSES:
            problems.append(f"imports {name}: {ONLY_THEY_START}")
    if layer not in MAY_START_PROCESSES:
        problems += [f"calls {call}: {ONLY_THEY_START}" for call in os_process_calls(source)]
    problems += [
        f"{line}: a relative import; write it absolute" for line in relative_imports(source)
    ]
    if layer != "git" and starts_git(source):
        problems.append("spells a git command line: only git/ starts git")
    return problems


def agent_rules_used(source: str) -> list[str]:
    """The imports of `core/agent/` in a source: none is allowed in the gate's own core."""
    return [
        name
        for name in imports_of(source)
        if name == AGENT_RULES or name.startswith(f"{AGENT_RULES}.")
    ]


def package_modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if len(relative.parts) > 1:
            modules.append((relative.parts[0], path))
    return modules


def test_every_subpackage_is_a_known_layer() -> None:
    layers = {layer for layer, _ in package_modules()}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)


def test_top_level_holds_only_the_package_entry_points() -> None:
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py"]


@pytest.mark.parametrize(("layer", "path"), package_modules(), ids=lambda v: getattr(v, "name", v))
def test_module_imports_only_the_layers_below_it(layer: str, path: Path) -> None:
    found = violations(layer, path.read_text())
    if str(path.relative_to(PACKAGE)) in SHOWS_GIT:
        found = [problem for problem in found if "spells a git command line" not in problem]
    if str(path.relative_to(PACKAGE)) in STARTS_PROCESSES:
        found = [problem for problem in found if ONLY_THEY_START not in problem]
    assert found == []


def test_each_module_allowed_to_start_processes_does() -> None:
    """An exemption outlives its reason unseen: each one must still start a process."""
    for name in STARTS_PROCESSES:
        source = (PACKAGE / name).read_text()
        assert "subprocess" in imports_of(source) or os_process_calls(source), name


@pytest.mark.parametrize("path", sorted((PACKAGE / "core").glob("*.py")), ids=lambda p: p.name)
def test_the_gates_core_imports_nothing_of_the_agent_rules(path: Path) -> None:
    assert agent_rules_used(path.read_text()) == []


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 500
    }
    assert long == {}


# The checker itself must see what it guards: each rule, broken once.
@pytest.mark.parametrize(
    ("layer", "source", "expected"),
    [
        ("core", "from failgate_hooks.git.repo import GitRepo", "imports failgate_hooks.git"),
        ("core", "def f():\n    from failgate_hooks.ledger import union", "failgate_hooks.ledger"),
        ("render", "import failgate_hooks.app.ci", "imports failgate_hooks.app.ci"),
        ("app", "import click", "only commands/ may import"),
        ("verify", "from git import Repo", "only git/ may import"),
        ("ledger", "import subprocess", "only git/ and verify/ start processes"),
        ("app", "import subprocess", "only git/ and verify/ start processes"),
        ("core", "import os\nos.posix_spawnp('sh', [], {})", "calls os.posix_spawnp"),
        ("render", "from os import fork", "calls os.fork"),
        ("verify", "argv = ['git', 'status']", "only git/ starts git"),
        ("app", "run(('git', 'push'))", "only git/ starts git"),
        ("core", "from ..git import repo", "from ..git import repo: a relative import"),
        ("core", "def f():\n    from . import ids", "from . import ids: a relative import"),
    ],
)
def test_the_checker_finds_each_kind_of_violation(layer: str, source: str, expected: str) -> None:
    found = violations(layer, source)
    assert any(expected in problem for problem in found), found


@pytest.mark.parametrize(
    "source",
    [
        "from failgate_hooks.core.agent.shell_lexer import Word",
        "from failgate_hooks.core import agent",
        "def f():\n    import failgate_hooks.core.agent.command_scan",
    ],
)
def test_the_checker_finds_the_core_importing_the_agent_rules(source: str) -> None:
    assert agent_rules_used(source) != []


def test_the_checker_allows_the_core_its_own_modules() -> None:
    assert agent_rules_used("from failgate_hooks.core import agents_of, wildmatch") == []
    assert agent_rules_used("from failgate_hooks.core.agentless import x") == []


def test_the_checker_allows_what_a_layer_may_do() -> None:
    assert violations("app", "from failgate_hooks.ledger.union import read_union") == []
    assert violations("git", "import subprocess\nimport git\nargv = ['git', 'log']") == []
    assert violations("verify", "import os\nos.posix_spawnp('sh', [], {})") == []
    assert violations("core", "import os\nos.environ.get('X')\nos.path.join('a')") == []
    assert violations("commands", "import click") == []
