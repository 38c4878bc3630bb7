"""The instrumented search: ``search()``, its policies, and the memory a learner keeps."""

from __future__ import annotations

from ..options import (
    EXPANSIONS,
    FINAL_RULES,
    LOG_VARIANTS,
    POLICIES,
    Q_VARIANTS,
    REWARDS,
    ROLLOUTS,
    SQRT2,
    TIE_BREAKS,
    SearchOptions,
)
from .engine import ChildStats, Memory, SearchResult, Tree, search
from .engines import ENGINES, kernel_installed
from .executors import which_engine
from .policies import puct, ucb1

__all__ = [
    "ENGINES",
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
    "SearchOptions",
    "SearchResult",
    "Tree",
    "kernel_installed",
    "puct",
    "search",
    "ucb1",
    "which_engine",
]
