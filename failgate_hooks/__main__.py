"""`python -m failgate_hooks` runs the `failgate` command."""

from __future__ import annotations

from failgate_hooks.cli import run

run()
