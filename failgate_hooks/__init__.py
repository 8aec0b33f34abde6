"""failgate: a remembered failure, made into a gate that refuses the push."""

from __future__ import annotations

__version__ = "0.1.0"
