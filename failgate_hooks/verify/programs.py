"""Where a command's program and the Python it runs live, read from the files.

Never asked of the program: a pushed commit may choose it (a `#!` line can name
a file it wrote), and what it says cannot be let to decide what the sandbox
shows or which names a verifier's Python has installed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# A program's name that says it is a Python (`python3`, `python3.12`, `pypy3`).
PYTHON_NAME = re.compile(r"(python|pypy)[0-9.]*\Z")


def pyvenv_settings(config: str) -> list[tuple[str, str]] | None:
    """The settings of a virtualenv's pyvenv.cfg in their order, each key lowercased as
    Python reads it, or None when there is none (no virtualenv). Python takes the first
    `home` for its base prefix, and site the last `include-system-site-packages`."""
    try:
        with open(config, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(64 * 1024).splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        key, sep, value = line.partition("=")
        if sep:
            found.append((key.strip().lower(), value.strip()))
    return found


def find_program(name: str, *, cwd: str, path: str) -> str:
    """Where `name` is run from, as exec would find it; FileNotFoundError or PermissionError."""
    if "/" in name:
        candidates = [os.path.join(cwd, name)]
    else:
        candidates = [os.path.join(cwd, folder or ".", name) for folder in path.split(os.pathsep)]
    denied = None
    for candidate in candidates:
        if os.path.isfile(candidate):
            if os.access(candidate, os.X_OK):
                return os.path.abspath(candidate)
            denied = candidate
    if denied is not None:
        raise PermissionError(13, "Permission denied", denied)
    raise FileNotFoundError(2, "No such file or directory", name)


def program_and_interpreter(program: str, *, cwd: str, env: Mapping[str, str]) -> list[str]:
    """The program, and the interpreter its `#!` line names (through `env`), if any."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return [program]
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    if not words:
        return [program]
    interpreter = words[0]
    if os.path.basename(interpreter) == "env":
        names = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        if not names:
            return [program, interpreter]
        try:
            found = find_program(names[0], cwd=cwd, path=env.get("PATH", os.defpath))
        except OSError:
            return [program, interpreter]
        return [program, interpreter, found]
    return [program, interpreter]
