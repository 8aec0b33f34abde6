"""`make bench`: what the hook costs, and how that grows (issue 11, docs/performance.md)."""
