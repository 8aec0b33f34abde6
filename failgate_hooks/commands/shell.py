"""What the click commands share: the repository they run in, JSON, and common options.

They print through commands/output.py, the one place the command layer writes."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from failgate_hooks.commands.output import echo, echo_json
from failgate_hooks.core.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def open_repo(ctx: click.Context) -> Iterator[Any]:
    """The repository failgate was started in (or -C DIR), closed afterwards."""
    from failgate_hooks.git.repo import GitRepo

    repo = GitRepo.open(ctx.find_root().obj or ".")
    try:
        yield repo
    finally:
        repo.close()


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(func)


def emit_json(payload: object) -> None:
    import json

    from failgate_hooks.core.sanitize import clean_tree

    echo_json(json.dumps(clean_tree(payload), indent=2, sort_keys=False))


def parse_time(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--effective-at {value!r}: expected an ISO time like 2026-11-29T23:05:00Z"
        ) from None
    if moment.tzinfo is None:
        raise UsageError(f"--effective-at {value!r}: give an offset, e.g. Z or +01:00")
    return moment


def trigger_option(func: F) -> F:
    return click.option(
        "--trigger", default="push", show_default=True, help="The action being checked."
    )(func)


def destination_options(func: F) -> F:
    """--ref, --env and --ledger-rev: where the commit goes, and what is read as protected."""
    func = click.option(
        "--ledger-rev",
        "ledger_revs",
        multiple=True,
        help="Also read the ledger at this protected revision (repeatable).",
    )(func)
    func = click.option("--env", "environment", help="The environment (e.g. mainnet).")(func)
    return destination_ref_option(func)


def destination_ref_option(func: F) -> F:
    return ref_option(
        help="The destination ref in full: refs/heads/main (unknown when absent: gates block)."
    )(func)


def ref_option(*decls: str, help: str, multiple: bool = False) -> Callable[[F], F]:
    """A --ref option, whose values are full ref names or globs: a short one is refused
    as a usage error naming the full form (core/refnames.py says why)."""
    return click.option("--ref", *decls, multiple=multiple, help=help, callback=_full_ref_names)


def _full_ref_names(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from failgate_hooks.core.refnames import ref_pattern_problem

    names = value if isinstance(value, tuple) else () if value is None else (value,)
    for name in names:
        problem = ref_pattern_problem(name)
        if problem is not None:
            raise UsageError(f"--ref: {problem}")
    return value


def sandbox_option(func: F) -> F:
    return click.option(
        "--sandbox",
        is_flag=True,
        help="Run verifiers in bubblewrap: no home, work tree or network (needs bwrap).",
    )(func)


def verbose_option(func: F) -> F:
    """--verbose, whose help says what it adds to the text (render/text.py:render_text)."""
    return click.option(
        "--verbose",
        is_flag=True,
        help="In the text (--json always has it all): list each accepted relaxation when no "
        "protected revision was read, where they are otherwise only counted; and why each "
        "signed statement of evidence looked at did not count.",
    )(func)


def print_decision(
    decision: Any, as_json: bool, *, verbose: bool, advice: str | None = None
) -> None:
    """The decision on standard output; `advice` replaces check's when nothing is protected."""
    from failgate_hooks.render.text import CHECK_ADVICE, render_json, render_text

    if as_json:
        echo_json(render_json(decision))
    else:
        text = render_text(
            decision,
            color=sys.stdout.isatty(),
            verbose=verbose,
            unprotected_advice=advice or CHECK_ADVICE,
        )
        echo(text)
