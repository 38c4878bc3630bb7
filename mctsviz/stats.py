"""Honest statistics for matches, sweeps and tournaments: Wilson intervals and Elo differences.

A score counts a win 1, a draw 0.5 and a loss 0. :func:`score_interval` gives the 95% Wilson
score interval of a player's mean score over ``n`` games, treating the score total
(wins + draws/2) as the number of successes in ``n`` trials:

    centre = (p + z²/2n) / (1 + z²/n),  half = z/(1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)

(E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
*JASA* 22, 1927; recommended over the normal interval by A. Agresti and B. A. Coull,
"Approximate is better than 'exact' for interval estimation of binomial proportions",
*The American Statistician* 52, 1998). Unlike the normal interval p ± 1.96·s/√n it never
collapses to a point: 10 wins in 10 games give [0.722, 1], not 1 ± 0.

Draws: a game's score lies in [0, 1], and among such variables with mean p the Bernoulli one
(wins and losses only) has the largest variance, p(1 - p). Counting a draw as half a success
therefore gives an interval at least as wide as the one a trinomial (win/draw/loss) model
would, so the coverage of the Wilson interval is kept, at the cost of being a little
conservative when there are many draws.

Elo: in the logistic Elo model a rating difference D gives the expected score
s = 1 / (1 + 10^(-D/400)), so D = -400·log10(1/s - 1) (A. Elo, *The Rating of Chessplayers,
Past and Present*, 1978; the logistic form is the one FIDE and most rating tools use). D is
increasing in s, so the Wilson bounds of the score map to bounds of D with the same coverage;
a score of 0 or 1 gives an infinite bound.

This module uses the standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import MctsvizError

__all__ = ["EloInterval", "ScoreInterval", "Z95", "elo_difference", "intervals_overlap", "score_interval", "wilson_interval"]

#: z of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class ScoreInterval:
    """A mean score over ``games`` games and its Wilson interval [low, high]."""

    score: float
    low: float
    high: float
    games: int

    @property
    def elo(self) -> EloInterval:
        """The Elo difference this score implies, with the interval from the score's bounds."""
        return EloInterval(elo_difference(self.score), elo_difference(self.low), elo_difference(self.high))

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in [low, high]."""
        return self.low <= value <= self.high

    def format(self, digits: int = 3) -> str:
        """``0.750 [0.694, 0.799]``."""
        return f"{self.score:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class EloInterval:
    """An Elo difference and its interval; infinite where the score bound is 0 or 1."""

    elo: float
    low: float
    high: float

    def format(self) -> str:
        """``+191 [+150, +236]``; ``inf`` where a bound is unbounded."""
        return f"{_signed(self.elo)} [{_signed(self.low)}, {_signed(self.high)}]"


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value):+d}"


def wilson_interval(successes: float, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``games`` (draws may count 0.5).

    Raises:
        MctsvizError: no games, or successes outside [0, games].
    """
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise MctsvizError(f"no games to score (games={games!r})")
    if not 0 <= successes <= games:
        raise MctsvizError(f"a score total of {successes!r} is outside 0..{games}")
    p = successes / games
    z2n = z * z / games
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / games + z2n / (4 * games))
    # Clip the rounding noise at p = 0 and p = 1, where a bound is exactly 0 or 1.
    return max(0.0, centre - half) if p > 0 else 0.0, min(1.0, centre + half) if p < 1 else 1.0


def score_interval(wins: int, draws: int, games: int, z: float = Z95) -> ScoreInterval:
    """A player's mean score (win 1, draw 0.5, loss 0) over ``games`` and its Wilson interval."""
    total = wins + 0.5 * draws
    low, high = wilson_interval(total, games, z)
    return ScoreInterval(total / games, low, high, games)


def elo_difference(score: float) -> float:
    """The logistic Elo difference implied by a mean score: -400·log10(1/s - 1).

    Returns ``-inf`` for a score of 0 and ``inf`` for 1.

    Raises:
        MctsvizError: a score outside [0, 1].
    """
    if not 0 <= score <= 1:
        raise MctsvizError(f"a score of {score!r} is outside 0..1")
    if score == 0:
        return -math.inf
    if score == 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no -0 at a score of 0.5


def intervals_overlap(a: ScoreInterval, b: ScoreInterval) -> bool:
    """Whether two intervals share a point (then the data do not tell their scores apart)."""
    return a.low <= b.high and b.low <= a.high
