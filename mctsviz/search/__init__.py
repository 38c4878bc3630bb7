"""The instrumented search: ``search()``, its policies, and the memory a learner keeps."""

from __future__ import annotations

from .engine import EXPANSIONS, REWARDS, ROLLOUTS, SQRT2, ChildStats, Memory, SearchResult, Tree, search
from .policies import FINAL_RULES, LOG_VARIANTS, POLICIES, Q_VARIANTS, TIE_BREAKS, puct, ucb1

__all__ = [
    "EXPANSIONS",
    "FINAL_RULES",
    "LOG_VARIANTS",
    "POLICIES",
    "Q_VARIANTS",
    "REWARDS",
    "ROLLOUTS",
    "SQRT2",
    "TIE_BREAKS",
    "ChildStats",
    "Memory",
    "SearchResult",
    "Tree",
    "puct",
    "search",
    "ucb1",
]
