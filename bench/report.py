"""The report of `make bench`: what was measured, the targets, and docs/performance.md's text."""

from __future__ import annotations

import datetime as dt
import platform
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from bench import build

# The targets: limits on ratios of two medians of one run.
FIXED = 1.3  # check at 0 events ÷ floor
GROWTH = {1_000: 1.3, 10_000: 3.0}  # check at N events ÷ check at 0, warm, in both worlds
FIRST_RUN = 15.0  # check at 10,000 events, first run after a clone ÷ floor
PUSH_ADDS = 1.5  # what the hook adds to a push ÷ floor


@dataclass
class Prepared:
    """A built world with the facts measured while setting it up."""

    name: str
    world: build.World
    hook_git: Counter[str] = field(default_factory=Counter)
    check_git: Counter[str] = field(default_factory=Counter)
    verifiers_on_warm_check: int = 0


@dataclass
class Monorepo:
    """The monorepo's verifier work, measured once each (they change what is cached)."""

    prepared: Prepared
    files: int
    gates: int
    steps: list[tuple[str, int, float]] = field(default_factory=list)  # what, ran, seconds


# ---------------------------------------------------------------------------- the report


def machine() -> str:
    def out(*argv: str) -> str:
        found = shutil.which(argv[0])
        if found is None:
            return "?"
        return subprocess.run([found, *argv[1:]], capture_output=True, text=True).stdout.strip()

    return (
        f"{platform.system()} {platform.machine()}, `nproc` = {out('nproc')}, "
        f"Python {platform.python_version()}, {out('git', '--version')}"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def met(ok: bool) -> str:
    return "met" if ok else "**not met**"


@dataclass
class Results:
    command: str
    runs: int
    checkout_dir: str
    medians: dict[str, float]
    upstream: list[Prepared]  # by number of events, growing from 0
    no_remote: list[Prepared]
    mono: Monorepo | None
    phases: dict[str, dict[str, float]]
    notes: list[str]


def report(r: Results) -> str:
    t = r.medians
    floor = t["floor"]
    zero, big = r.upstream[0], r.upstream[-1]
    lines = [
        "# Performance",
        "",
        "What `failgate check` and the hook cost, and how that grows with the ledger. This",
        "file is the output of `make bench`: one run on one machine, so its ratios compare",
        "like with like. Regenerate it there.",
        "",
        f"- command: `{r.command}`",
        f"- machine: {machine()}",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- method: each figure is the median of {r.runs} rounds after a warm-up round; each",
        "  round runs every case once, so a change of load during the run hits every case",
        "  alike. Every `check` and every hook is a fresh process. Git runs with",
        "  `GIT_CONFIG_GLOBAL=/dev/null` and `GIT_CONFIG_NOSYSTEM=1`; Python's bytecode cache",
        "  is on, as in any installed hook. *Protected upstream*: a bare remote holds the",
        "  ledger, `refs/remotes/origin/HEAD` is set and `ledger_refs` names",
        "  `refs/remotes/origin/main`; the checked commit is one code change ahead of it.",
        "  *No remote*: the same ledger, nothing protected. *Warm*: the run before left",
        "  whatever failgate keeps between runs. *First run after a clone*: the ledger cache",
        "  is removed before each run. The live gate's pass stays cached: no verifier runs",
        "  in a timed case.",
        # the kind of folder, never its name: a path of the bench machine says nothing
        "- verifier checkouts go to "
        + ("a tmpfs folder." if r.checkout_dir.endswith("(tmpfs)") else "the bench's folder."),
        f'- the floor, `python -c "import click, git"`: {ms(floor)}.',
        "",
        "## Targets",
        "",
        "| target | measured | limit | |",
        "|---|---:|---:|---|",
    ]

    def ratio(name: str, value: float, limit: float) -> None:
        lines.append(f"| {name} | {value:.2f} × | ≤ {limit} × | {met(value <= limit)} |")

    ratio(f"fixed cost: `check` at {zero.name} ÷ floor", t[f"{zero.name}/check"] / floor, FIXED)
    for label, worlds in (("protected upstream", r.upstream), ("no remote", r.no_remote)):
        base = worlds[0]
        for p in worlds[1:]:
            limit = GROWTH.get(p.world.events)
            if limit is not None:
                value = t[f"{p.name}/check"] / t[f"{base.name}/check"]
                ratio(
                    f"warm growth, {label}: `check` at {p.world.events:,} events ÷ at 0",
                    value,
                    limit,
                )
    ratio(
        f"first run after a clone: `check` at {big.world.events:,} events ÷ floor",
        t[f"{big.name}/check first"] / floor,
        FIRST_RUN,
    )
    pushed = [*r.upstream, *([r.mono.prepared] if r.mono else [])]
    for p in pushed:
        added = t[f"{p.name}/push hook"] - t[f"{p.name}/push plain"]
        ratio(f"the push, {short(p)}: what the hook adds ÷ floor", added / floor, PUSH_ADDS)
    counts = {short(p): sum(p.hook_git.values()) for p in pushed}
    same = len({n for name, n in counts.items() if name != short(zero)}) == 1
    lines.append(
        "| git processes the hook starts per push, whatever the number of events | "
        + ", ".join(f"{n} ({name})" for name, n in counts.items())
        + f" | the same | {met(same)} |"
    )
    everything = [*r.upstream, *r.no_remote, *([r.mono.prepared] if r.mono else [])]
    warm_runs = {p.name: p.verifiers_on_warm_check for p in everything}
    lines.append(
        "| content already verified runs no verifier (second `check` of each world) | "
        + ", ".join(f"{n} ({name})" for name, n in warm_runs.items())
        + f" | 0 | {met(not any(warm_runs.values()))} |"
    )
    if r.mono is not None:
        outside = r.mono.steps[2][1]
        lines.append(
            f"| a commit touching none of a gate's `inputs` runs none (monorepo) | {outside} "
            f"| 0 | {met(outside == 0)} |"
        )

    lines += [
        "",
        "## Medians",
        "",
        "| repository | `check` | ÷ floor | `check`, first run | push `--no-verify` "
        "| push + hook | what the hook adds |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def cell(key: str) -> str:
        return ms(t[key]) if key in t else "–"

    for p in everything:
        n = p.name
        hook_adds = "–"
        if f"{n}/push hook" in t:
            hook_adds = ms(t[f"{n}/push hook"] - t[f"{n}/push plain"])
        lines.append(
            f"| {n} | {cell(f'{n}/check')} | {t[f'{n}/check'] / floor:.2f} × "
            f"| {cell(f'{n}/check first')} | {cell(f'{n}/push plain')} "
            f"| {cell(f'{n}/push hook')} | {hook_adds} |"
        )

    lines += [
        "",
        f"Where a `check` at {big.world.events:,} events (protected upstream) spends its time,",
        "in-process (medians; *assess* is the whole decision less the union and the resolving):",
        "",
        "| phase | warm | first run |",
        "|---|---:|---:|",
    ]
    what = {
        "import": "importing evaluate, gates, union, git (after click and git)",
        "union": "the ledger union: list each revision's ledger, read and parse the events",
        "resolve": "resolving every entity",
        "assess": "assessing every entity and deciding",
    }
    for key, label in what.items():
        lines.append(
            f"| {label} | {ms(r.phases['warm'][key])} | {ms(r.phases['first run'][key])} |"
        )
    lines += [
        "",
        "Git processes the hook starts on one push (trace2: with the hook − without):",
        "",
    ]
    lines += [f"- {p.name}: {sum(p.hook_git.values())}: {describe(p.hook_git)}" for p in pushed]
    lines += ["", "Git processes one `check` starts:", ""]
    lines += [
        f"- {p.name}: {sum(p.check_git.values())}: {describe(p.check_git)}" for p in everything
    ]
    if r.mono is not None:
        lines += [
            "",
            f"## Monorepo: {r.mono.files:,} files, {r.mono.gates} gates with `inputs`",
            "",
            "Each gate's `inputs` is its own service folder. Measured once each, in this order:",
            "",
            "| step | verifiers run | wall time |",
            "|---|---:|---:|",
        ]
        lines += [f"| {what} | {ran} | {ms(took)} |" for what, ran, took in r.mono.steps]
    lines += ["", *HOW, "", "## Notes", ""] + [f"- {note}" for note in r.notes]
    return "\n".join(lines) + "\n"


HOW = """\
## How the ledger is read

- **One union** (`failgate_hooks/ledger/union.py`): each distinct commit's ledger
  folder is listed (one `ls-tree` per ledger tree; revisions holding the same tree share
  one listing), every event blob it needs is read in one batch through the persistent
  `cat-file`, and each is parsed by `core.validate.parse_event`.
- **One cache** (`failgate_hooks/ledger/parsecache.py`): each entity's parses and their
  resolution, in
  `<git-common-dir>/failgate/parsed-events.pickle`, under a digest of the entity's key
  and its sorted (path, blob id) pairs. It carries failgate's and Python's versions and
  a digest of the parsing rules' sources, is rebuilt when it does not load, is written
  whole and only when a read parsed something new, and keeps fewer unused entries than
  used ones. `tests/test_parsecache.py` checks that decisions with it, without it and
  while filling it are equal.
- An entity whose files the union changed (a duplicate id, a misnamed file) is resolved
  from its files again. Every entity is still assessed on every run: on a warm run that,
  listing the ledger and loading the cache are what grow with it.
- Nothing else is kept: no forked child, no garbage-collector switch, no summary of the
  ledger. `check`'s look for uncommitted ledger files is one `git status`, started
  before the decision and read after it.""".splitlines()


def short(prepared: Prepared) -> str:
    return prepared.name.removesuffix(", protected upstream")


def describe(counts: Counter[str]) -> str:
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(counts.items()))
