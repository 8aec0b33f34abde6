"""`python -m failgate_hooks` runs the `failgate` command."""

from __future__ import annotations

from failgate_hooks.commands.cli import run

run()
