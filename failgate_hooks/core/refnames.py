"""Ref names and ref globs are written in full (`refs/heads/main`), never short (`main`).

A push names its destination in full, and every ref a gate's scope or the
configuration lists is matched against that full name: a short `main` matches
nothing, so it would turn a gate off or protect nothing without a word. A short
name is therefore refused where it is written, and never expanded: `main` may
be a branch or a tag, and guessing wrong is the same silence.

The same silence comes from a name that looks right and is not: a space or an
invisible character at its end, a Cyrillic letter in `main`, or `refs/*`, which
matches no branch or tag (`*` stops at `/`). Those are refused too; a typo
(`refs/heads/mian`) cannot be told from a real name, and stays the reviewer's
to see. Pure.
"""

from __future__ import annotations

from failgate_hooks.core.sanitize import clip

REF_PREFIX = "refs/"
# The namespaces under refs/ a short name may already start with (`heads/main`).
_NAMESPACES = ("heads/", "tags/", "remotes/")
# How much of a refused name a message quotes.
_SHOWN = 120


def ref_pattern_problem(name: str) -> str | None:
    """Why `name`, a ref name or a ref glob, cannot name the refs it seems to, with
    what to write instead; None when it is a full name that can match a branch or tag."""
    if name.startswith(REF_PREFIX):
        return _full_name_problem(name)
    return (
        f"expected a full ref name starting with {REF_PREFIX}, got {clip(repr(name), _SHOWN)}: "
        f"a short name matches no ref, so write {full_forms(name)}"
    )


def full_forms(name: str) -> str:
    """The full names a short `name` may have meant, for a hint: both when it is unclear."""
    tail = clip(name.strip("/"), _SHOWN) or "main"
    if tail.startswith(_NAMESPACES):
        return REF_PREFIX + tail
    return f"{REF_PREFIX}heads/{tail} for branches, or {REF_PREFIX}tags/{tail} for tags"


def _full_name_problem(name: str) -> str | None:
    shown = clip(ascii(name), _SHOWN)
    if not name.isascii() or not name.isprintable() or any(c.isspace() for c in name):
        return (
            f"{shown} holds a space, an invisible or a non-ASCII character: it would match "
            "no ref that looks like it; write the name in plain ASCII (a glob such as "
            "refs/heads/caf* reaches a non-ASCII branch)"
        )
    segments = name.split("/")
    if "**" not in name and (len(segments) < 3 or "" in segments[1:]):
        return (
            f"{shown} matches no branch or tag (each is refs/heads/NAME or refs/tags/NAME, "
            "and * stops at /): write refs/heads/..., refs/tags/..., or refs/**"
        )
    return None
