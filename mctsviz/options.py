"""The search options: one typed record, its defaults, its rules and the one check of its values.

``SearchOptions`` is everything that defines what a search does: the budget, the selection
policy and its constants, the expansion, simulation and reward rules, the final-move rule.
The search takes it (``mctsviz.search.search``), a trace's header stores it, and everything
that offers or reads an option derives it from here: the command line's flags
(``mctsviz search --c``), player specs (``mcts:c=...``), sweep axes and the formulas on a
walkthrough page. The value of ``c`` is the field ``c`` from the command line to the page.

:func:`option_problems` is the one check of option values: the search's keywords, a player
spec and a trace header read from a file all pass through it. The seed (the trace header's
``seed``, not an option) has its rule here too (:func:`seed_problem`).

This module sits below both ``mctsviz.search`` and ``mctsviz.trace`` and uses the standard
library and msgspec only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

import msgspec

from .errors import MctsvizError

__all__ = [
    "BOOLEANS",
    "DEFAULTS",
    "EXPANSIONS",
    "FINAL_RULES",
    "LOG_VARIANTS",
    "NUMBERS",
    "OPTION_NAMES",
    "Outcome",
    "POLICIES",
    "Q_VARIANTS",
    "RECORD_LEVELS",
    "REWARDS",
    "ROLLOUTS",
    "SECOND_VISIT_RULES",
    "SEED_MAX",
    "SQRT2",
    "SearchOptions",
    "TERMINAL_RULES",
    "TIE_BREAKS",
    "build_options",
    "check_seed",
    "number_rule",
    "option_doc",
    "option_problems",
    "seed_problem",
]

SQRT2 = math.sqrt(2.0)

#: The trace's recording levels (a header field beside the options, not a search option).
RECORD_LEVELS = ("full", "compact")

#: A seed is stored in the trace header; MessagePack holds integers in -2**63 .. 2**64 - 1, and
#: ``random.Random`` ignores a seed's sign, so seeds are the unsigned 64-bit integers.
SEED_MAX = 2**64 - 1

#: One simulation's outcome in a script: one number per player.
Outcome = tuple[float, ...]


def _doc(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


class SearchOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The options of one search, as the search used them; a trace header writes every field.

    Build one with keywords (``SearchOptions(c=2.0, expand="all")``) and check it with
    :meth:`checked`, or from plain values with :func:`build_options` (which checks). Fields are
    in the order a trace header writes them; read them as attributes (``options.c``), or all
    of them with :meth:`items`.
    """

    iterations: Annotated[int | None, _doc("the budget in iterations (none: no limit; then seconds must be given); a whole number >= 1")] = 1000
    seconds: Annotated[float | None, _doc("the budget in seconds, > 0; the search stops at whichever budget ends first")] = None
    policy: Annotated[Literal["ucb1", "puct"], _doc("the selection policy: UCB1 (W/n + C·sqrt(ln N / n)) or PUCT (Q + c_puct·P·sqrt(N)/(1 + n))")] = "ucb1"
    c: Annotated[float, _doc("UCB1's exploration constant C, a number >= 0")] = SQRT2
    log: Annotated[Literal["ln-n", "ln-n1"], _doc("UCB1's logarithm: ln N (ln-n) or ln(N + 1) (ln-n1)")] = "ln-n"
    c_puct: Annotated[float, _doc("PUCT's exploration constant c_puct, a number >= 0")] = 1.0
    q: Annotated[Literal["w/n", "w/(1+n)"], _doc("PUCT's Q: W/n (an unvisited child scores fpu) or W/(1 + n)")] = "w/n"
    fpu: Annotated[float, _doc("PUCT's first-play value: the Q of an unvisited child when q is w/n (a finite number)")] = 0.0
    tie_break: Annotated[Literal["first", "random"], _doc("between equal scores: the first child in creation order, or one at random")] = "first"
    terminal: Annotated[
        Literal["formula", "outcome"],
        _doc(
            "how a visited child whose game has ended is scored: by the policy's formula like any child (formula), or by its "
            "outcome, its mean W/n, with no exploration term (outcome: OpenSpiel's MCTSBot); an unvisited one is scored as any child"
        ),
    ] = "formula"
    expand: Annotated[
        Literal["one", "one-random", "all", "second-visit", "second-visit-lazy-root"],
        _doc(
            "one child per visit in legal-action order (one) or at random (one-random); all children at "
            "once, then the best-scored one is simulated (all); or a leaf's first visit evaluates the leaf "
            "and its second expands all children, the root being expanded before iteration 1 (second-visit); "
            "or the same with the root evaluated on iteration 1 and expanded on iteration 2, the children "
            "in any order the engine chose (second-visit-lazy-root: OpenSpiel's MCTSBot)"
        ),
    ] = "one"
    rollout: Annotated[Literal["random", "heuristic"], _doc("the rollout: random moves, or win if possible, else block, else random (heuristic)")] = "random"
    evaluator: Annotated[
        str | None,
        _doc(
            "the evaluator f(state) -> (priors, values) used instead of a rollout, as FILE.py:FUNC or module:name, or a network file NET.npz (recorded as NET.npz#sha256=HEX)"
        ),
    ] = None
    script: Annotated[
        list[Outcome] | dict[str, list[Outcome]] | None,
        _doc(
            "outcomes that replace simulations: a list (the outcome of iteration 1, 2, ...) or a map from "
            "state key to the outcomes of successive simulations from that state; each outcome is one "
            "finite number per player"
        ),
    ] = None
    reward: Annotated[Literal["pm1", "01"], _doc("pm1 credits the game's returns as they are; 01 maps r to (r + 1) / 2 (win 1, draw 0.5, loss 0)")] = "pm1"
    final: Annotated[Literal["visits", "mean"], _doc("the rule for the chosen move: most visits or highest mean (both are reported)")] = "visits"
    transpositions: Annotated[bool, _doc("link an edge to an existing node with the same state key (a DAG)")] = False
    memory: Annotated[bool, _doc("whether node statistics carried over from earlier searches seeded the tree")] = False

    @property
    def policy_name(self) -> str:
        """The selection policy as pages and figures name it: "UCB1" or "PUCT"."""
        return "PUCT" if self.policy == "puct" else "UCB1"

    def items(self) -> Iterator[tuple[str, Any]]:
        """(name, value) of every option, in field order."""
        return ((name, getattr(self, name)) for name in OPTION_NAMES)

    def checked(self) -> SearchOptions:
        """This record with its values normalised, after :func:`option_problems` found none.

        Raises:
            MctsvizError: the first problem, as one line.
        """
        return build_options(msgspec.structs.asdict(self))


#: The option names, in field (and header) order.
OPTION_NAMES: tuple[str, ...] = SearchOptions.__struct_fields__
DEFAULTS = SearchOptions()


def _field_info() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    choices: dict[str, tuple[str, ...]] = {}
    docs: dict[str, str] = {}
    for name, hint in get_type_hints(SearchOptions, include_extras=True).items():
        base, *extras = get_args(hint)
        docs[name] = next(m.description or "" for m in extras if isinstance(m, msgspec.Meta))
        if get_origin(base) is Literal:
            choices[name] = get_args(base)
    return choices, docs


#: The allowed values of each option that is a choice (from the record's ``Literal`` types).
CHOICES, _DOCS = _field_info()

POLICIES = CHOICES["policy"]
LOG_VARIANTS = CHOICES["log"]
Q_VARIANTS = CHOICES["q"]
TIE_BREAKS = CHOICES["tie_break"]
#: How a visited child whose game has ended is scored (``mctsviz.search.policies.ended_outcome``).
TERMINAL_RULES = CHOICES["terminal"]
EXPANSIONS = CHOICES["expand"]
ROLLOUTS = CHOICES["rollout"]
REWARDS = CHOICES["reward"]
FINAL_RULES = CHOICES["final"]
#: The expansion rules under which a leaf's first visit evaluates it and its second expands it.
SECOND_VISIT_RULES = ("second-visit", "second-visit-lazy-root")

#: Numeric options: (whole number?, minimum, minimum allowed?, none allowed?). Every number must
#: be finite (NaN and infinities would poison every score, and JSON cannot store them).
NUMBERS: dict[str, tuple[bool, float, bool, bool]] = {
    "iterations": (True, 1, True, True),
    "seconds": (False, 0, False, True),
    "c": (False, 0, True, False),
    "c_puct": (False, 0, True, False),
    "fpu": (False, -math.inf, True, False),
}
BOOLEANS = ("transpositions", "memory")


def option_doc(name: str) -> str:
    """The one-line description of option ``name`` (for help texts and docs)."""
    return _DOCS[name]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number_rule(name: str) -> str:
    """The rule of a numeric option in words: ``"a number >= 0"``."""
    whole, minimum, inclusive, _ = NUMBERS[name]
    kind = "a whole number" if whole else ("a finite number" if minimum == -math.inf else "a number")
    if minimum == -math.inf:
        return kind
    return f"{kind} {'>=' if inclusive else '>'} {minimum:g}"


def _number_problem(name: str, value: Any) -> str | None:
    whole, minimum, inclusive, nullable = NUMBERS[name]
    if value is None and nullable:
        return None
    ok = _is_number(value) and math.isfinite(value)
    if ok and whole:
        ok = float(value).is_integer()
    if ok:
        ok = value >= minimum if inclusive else value > minimum
    return None if ok else f": expected {number_rule(name)}"


def _outcome_problem(value: Any) -> str | None:
    if _is_number(value):
        return None if math.isfinite(value) else f"bad scripted outcome {value!r}: returns must be finite numbers"
    if isinstance(value, (list, tuple)) and value and all(_is_number(x) for x in value):
        return None if all(math.isfinite(x) for x in value) else f"bad scripted outcome {list(value)!r}: returns must be finite numbers"
    return f"bad scripted outcome {value!r}: expected a number or a list of numbers"


def _script_problem(script: Any) -> str | None:
    if script is None:
        return None
    if isinstance(script, Mapping):
        for key, outcomes in script.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                return f"bad script key {key!r}: expected a state key"
            if not isinstance(outcomes, (list, tuple)):
                return f"bad script entry for {key!r}: expected a list of outcomes"
            for value in outcomes:
                problem = _outcome_problem(value)
                if problem:
                    return problem
        return None
    if isinstance(script, (list, tuple)):
        for value in script:
            problem = _outcome_problem(value)
            if problem:
                return problem
        return None
    return f"bad script {type(script).__name__}: expected a list of outcomes (by iteration) or a map by state key"


def option_problems(values: Mapping[str, Any], *, complete: bool = False, header: bool = False) -> list[str]:
    """What is wrong with these option values (empty when they are sound): the one check.

    Args:
        values: option names to plain values (a trace header's ``options``, keywords, a spec).
        complete: every option must be present (a trace header writes them all).
        header: word each problem as a header field (``option c=-1.0: ...``) rather than as a
            value given to the search (``bad c -1.0: ...``).
    """
    if not isinstance(values, Mapping):
        return [f"bad options {type(values).__name__}: expected a map from option name to value"]
    problems = []
    unknown = sorted(repr(k) for k in values if k not in OPTION_NAMES)
    if unknown:
        problems.append(f"unknown option(s) {', '.join(unknown)}; valid: {', '.join(OPTION_NAMES)}")
    if complete:
        missing = [name for name in OPTION_NAMES if name not in values]
        if missing:
            problems.append(f"option(s) {', '.join(missing)} missing")
    for name, value in values.items():
        rule = None
        if name in CHOICES:
            if not isinstance(value, str) or value not in CHOICES[name]:
                rule = f"; choose one of: {', '.join(CHOICES[name])}"
        elif name in NUMBERS:
            rule = _number_problem(name, value)
        elif name in BOOLEANS:
            if not isinstance(value, bool):
                rule = ": expected true or false"
        elif name == "evaluator":
            if value is not None and (not isinstance(value, str) or not value):
                rule = ": expected its name (FILE.py:FUNC) or none"
        elif name == "script":
            script = _script_problem(value)
            if script:
                problems.append(f"option script: {script}" if header else script)
        if rule:
            problems.append(f"option {name}={value!r}{rule}" if header else f"bad {name} {value!r}{rule}")
    if values.get("iterations", DEFAULTS.iterations) is None and values.get("seconds") is None:
        problems.append("give a budget: iterations or seconds")
    return problems


def _normalised_script(script: Any) -> Any:
    def outcome(v: Any) -> tuple[float, ...]:
        return (float(v),) if _is_number(v) else tuple(float(x) for x in v)

    if script is None:
        return None
    if isinstance(script, Mapping):
        return {str(k): [outcome(v) for v in vals] for k, vals in script.items()}
    return [outcome(v) for v in script]


def build_options(values: Mapping[str, Any], *, complete: bool = False) -> SearchOptions:
    """A checked ``SearchOptions`` from plain values; absent options take their defaults.

    Numbers become floats where the field is a float, and a script's outcomes become tuples of
    floats (a bare number is a one-player outcome).

    Raises:
        MctsvizError: the first of :func:`option_problems`, as one line.
    """
    problems = option_problems(values, complete=complete)
    if problems:
        raise MctsvizError(problems[0])
    plain = dict(values)
    for name in ("seconds", "c", "c_puct", "fpu"):
        if plain.get(name) is not None:
            plain[name] = float(plain[name])
    if plain.get("iterations") is not None:
        plain["iterations"] = int(plain["iterations"])
    if "script" in plain:
        plain["script"] = _normalised_script(plain["script"])
    return msgspec.convert(plain, SearchOptions)


def seed_problem(seed: Any) -> str | None:
    """What is wrong with a search's seed, or None: it must be an integer in 0 .. 2**64 - 1."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        return f"bad seed {seed!r}: expected an integer"
    if not 0 <= seed <= SEED_MAX:
        return f"bad seed {seed}: expected an integer from 0 to 2**64 - 1 (what a trace can store)"
    return None


def check_seed(seed: Any) -> int:
    """The seed, after :func:`seed_problem` found nothing.

    Raises:
        MctsvizError: the problem, as one line.
    """
    problem = seed_problem(seed)
    if problem:
        raise MctsvizError(problem)
    return int(seed)
