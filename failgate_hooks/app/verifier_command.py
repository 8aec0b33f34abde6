"""What `record --verify` accepts: an argv that can run as written, never a shell line.

A verifier runs without a shell, so `a | b` would run `a` with the arguments
`|` and `b`, and fail later with a message about a missing file; a program that
is not there would be recorded silently and hold the gate for the wrong reason.
Both are caught here, before anything is written.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping

from failgate_hooks.core.errors import UsageError
from failgate_hooks.verify.process import verifier_env

SHELL_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ";;", ">", ">>", "<", "<<", "(", ")"})


def verifier_argv(
    text: str, *, root: str | None, environ: Mapping[str, str], force: bool = False
) -> tuple[str, ...]:
    """The argv `--verify TEXT` names, or a usage error that says what to write instead."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--verify {text!r}: {exc}") from None
    if not argv:
        raise UsageError("--verify: give the command to run")
    if force:
        return argv
    operators = [token for token in tokens if token in SHELL_OPERATORS]
    if operators:
        shell_form = f"sh -c {shlex.quote(text)}"
        shown = f'"{shell_form}"' if '"' not in shell_form else shlex.quote(shell_form)
        raise UsageError(
            f"--verify {text!r} uses the shell operator {operators[0]!r}, but a verifier runs "
            "without a shell",
            hint=f"to run it through one, say so: --verify {shown} "
            "(or --force to record the argv as it is)",
        )
    program = argv[0]
    if not _findable(program, root, environ):
        raise UsageError(
            f"--verify: the program {program!r} is neither on the verifier's PATH nor a file "
            "of the repository",
            hint="fix the command, commit the script first, or --force to record it anyway",
        )
    return argv


def _findable(program: str, root: str | None, environ: Mapping[str, str]) -> bool:
    """Whether the verifier could start `program`: a repository file, or on its PATH."""
    if "/" in program:
        return root is not None and os.path.exists(os.path.join(root, program))
    # The PATH the verifier itself will get: the one rule of what leaves it.
    env, _ = verifier_env(environ, env_pass=(), commit="", entity_key="", environment=None)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None
