"""The trace file format: versions, the two codecs, header checks and the JSON Schema.

A trace is JSON Lines (the default) or MessagePack frames (a ``.msgpack`` file name; see
``mctsviz.trace.io``); both carry the same events with the same fields. In JSON Lines each line
is one event, the ``Header`` first; each line is the event's
msgspec encoding: an object tagged by ``"kind"`` holding the event's fields in declaration
order (a ``Score`` is an array in field order). A field with a default (``null`` for what only
the ``full`` level records, the zero statistics of a ``NewChild`` created without memory) may be
left out: readers fill the default back in, so both forms decode to the same event.
``docs/trace-format.md`` documents every field.

Versions: ``SCHEMA_VERSION`` is the version this library writes. A reader accepts every version
from ``MIN_SCHEMA_VERSION`` up to it and refuses newer ones with a message saying so. Changing
the events' shape means bumping ``SCHEMA_VERSION``, adding a migration of the older lines here,
and keeping an old trace in ``tests/fixtures/traces`` that must still load.

* Version 11: a full-level block may be ``derived`` (``mctsviz.trace.derived``): a snapshot of
  the statistics and children of the nodes it reads, as they stood when it began, instead of
  its score tables and before values, which the reader folds back under the header's options
  (:func:`header_terms`); versions 1-10 read as they did.
* Version 10: a block may hold full-level iterations (``full``: each step's score table, the
  expansion's, the rollout's moves and the before values of the updates as columns,
  ``mctsviz.trace.fullblocks``), which read back as the same events; events are unchanged,
  and a block without ``full`` is version 4's, so versions 1-9 read as they did.
* Version 9: game traces may hold chance's moves (``mctsviz.trace.game``); one-search traces
  are version 8's.
* Version 8: the options record's ``terminal`` (how a visited child whose game has ended is
  scored: ``formula`` or OpenSpiel's ``outcome``). A header of an older version has no such
  option and reads as ``terminal="formula"``, the only rule its search knew; every event is
  version 6's.
* Version 7: game traces (``mctsviz.trace.game``), a container holding one one-search trace
  per move; the one-search traces inside are version 6's, unchanged.
* Version 6: chance nodes. A ``NewChild`` may say ``chance`` (chance moves there; its
  children's priors are the outcomes' probabilities) and an ``Expand`` may have the rule
  ``"chance"`` (every outcome added at once, one drawn). Both are additions: a trace without
  chance nodes is version 5's, so versions 1-5 read as they did.
* Version 5: the header may name the engine a finished tree was ``imported`` from; such a
  trace holds its tree as expansions of iteration 0 and no iterations. Every other trace is
  version 4's, so versions 1-4 read as they did.
* Version 4 (mctsviz 0.4): a MessagePack frame may hold a ``Block``, compact iterations as
  typed columns (``mctsviz.trace.blocks``); the events themselves are unchanged, so version 3
  lines and frames read as they are.
* Version 3 (mctsviz 0.3): the header's ``options`` is the typed record
  :class:`mctsviz.options.SearchOptions` (every field written, each checked by the rules the
  search applies); the seed is an integer from 0 to 2**64 - 1; returns and rewards are finite.
* Version 2 (mctsviz 0.2): a ``Score`` is an array ``[node, action, visits, value, prior,
  exploit, explore, score]``; MessagePack traces.
* Version 1 (mctsviz 0.1): a ``Score`` is an object; read through the ``_V1`` records below and
  migrated on reading.

Versions 1 and 2 wrote the options as an object with the same keys as version 3's record; they
migrate by passing through the record's check (:func:`check_header`), so a damaged option in
an old trace is refused as it is in a new one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

import msgspec

from ..errors import MctsvizError
from ..escape import terminal as terminal_text
from ..games import parameter_problem
from ..options import DEFAULTS, OPTION_NAMES, build_options, option_problems, seed_problem
from ..scoring import score_rows
from .derived import ScoreTerms
from .events import (
    FORMAT_NAME,
    RECORD_LEVELS,
    SCHEMA_VERSION,
    Backprop,
    Block,
    Decision,
    Event,
    Expand,
    Header,
    NewChild,
    Score,
    Select,
    Simulate,
    Step,
)
from .limits import MAX_CHILDREN, MAX_DEPTH, MAX_PLAYERS, MAX_TEXT, json_too_deep, msgpack_too_deep

__all__ = [
    "DECODE_ERRORS",
    "JSON_ENCODER",
    "MAX_FACT_MARKS",
    "MAX_FACT_NAME",
    "MAX_FACT_NAMES",
    "MAX_FACT_SERIES",
    "MIN_SCHEMA_VERSION",
    "MSGPACK_ENCODER",
    "SCHEMA_FILE",
    "check_header",
    "decode_event",
    "decode_frame",
    "decode_header",
    "decode_header_frame",
    "describe_decode_error",
    "encode_event",
    "encode_lines",
    "event_decoders",
    "facts_problems",
    "header_problems",
    "header_terms",
    "json_schema",
    "json_schema_text",
    "shipped_schema_text",
]


def header_terms(header: Header) -> ScoreTerms:
    """The formula a header's search scored children by (it reads derived full-level blocks)."""
    return functools.partial(score_rows, header.options)


#: The oldest schema version this library reads.
MIN_SCHEMA_VERSION = 1
#: The version whose headers first hold the option ``terminal`` (older ones read as its default).
TERMINAL_SINCE = 8

#: The JSON Schema file shipped beside this module (``mctsviz schema`` prints it).
SCHEMA_FILE = "trace.schema.json"

JSON_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Event)
#: MessagePack: the same records as the JSON (maps keyed by field name, tagged by ``kind``); a
#: frame holds an array of events.
MSGPACK_ENCODER = msgspec.msgpack.Encoder()
_MSGPACK_FRAME_DECODER = msgspec.msgpack.Decoder(list[Event])
#: Since version 4 a frame may hold blocks (compact iterations as columns, ``mctsviz.trace.blocks``).
_MSGPACK_BLOCK_FRAME_DECODER = msgspec.msgpack.Decoder(list[Event | Block])

#: Exceptions msgspec raises for a line it cannot decode (invalid UTF-8 raises the latter).
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError)


def encode_event(event: Any) -> bytes:
    """One event as one line of JSON (without the newline)."""
    return JSON_ENCODER.encode(event)


def encode_lines(events: Iterable[Any]) -> bytes:
    """Events as JSON Lines, each line ending in a newline."""
    return JSON_ENCODER.encode_lines(events)


def decode_event(line: bytes) -> Event:
    """Decode one line of the current version into an event (raises one of ``DECODE_ERRORS``)."""
    event: Event = _DECODER.decode(line)
    return event


def decode_frame(payload: bytes | memoryview) -> Sequence[Event | Block]:
    """Decode one MessagePack frame's payload into its events and blocks (raises one of ``DECODE_ERRORS``)."""
    return _MSGPACK_BLOCK_FRAME_DECODER.decode(payload)


def event_decoders(version: int) -> tuple[Callable[[bytes], Event], Callable[[bytes | memoryview], Sequence[Event | Block]]]:
    """The line and frame decoders for a trace of schema ``version``; older events are migrated.

    Blocks are read in traces of version 4 and later only (no older writer made one).
    """
    if version >= 4:
        return _DECODER.decode, _MSGPACK_BLOCK_FRAME_DECODER.decode
    if version >= 2:
        return _DECODER.decode, _MSGPACK_FRAME_DECODER.decode
    return _decode_v1_line, _decode_v1_frame


# -- version 1 ---------------------------------------------------------------------------------


class _ScoreV1(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """A version-1 ``Score``: an object, not an array."""

    node: int
    action: str
    visits: int
    value: float
    prior: float
    exploit: float | None
    explore: float | None
    score: float | None


class _StepV1(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    node: int
    chosen: int
    parent_visits: int
    scores: tuple[_ScoreV1, ...] | None = None


class _SelectV1(msgspec.Struct, frozen=True, tag="select", tag_field="kind", gc=False, forbid_unknown_fields=True):
    iteration: int
    path: tuple[int, ...]
    steps: tuple[_StepV1, ...] | None = None


class _ExpandV1(msgspec.Struct, frozen=True, tag="expand", tag_field="kind", gc=False, forbid_unknown_fields=True):
    iteration: int
    parent: int
    children: tuple[NewChild, ...]
    simulate_from: int
    rule: str
    scores: tuple[_ScoreV1, ...] | None = None


_EventV1 = Header | _SelectV1 | _ExpandV1 | Simulate | Backprop | Decision
_V1_LINE_DECODER = msgspec.json.Decoder(_EventV1)
_V1_FRAME_DECODER = msgspec.msgpack.Decoder(list[_EventV1])


def _scores_from_v1(scores: tuple[_ScoreV1, ...] | None) -> tuple[Score, ...] | None:
    if scores is None:
        return None
    return tuple(Score(*msgspec.structs.astuple(s)) for s in scores)


def _upgrade_v1(event: _EventV1) -> Event:
    if isinstance(event, _SelectV1):
        steps = None if event.steps is None else tuple(Step(s.node, s.chosen, s.parent_visits, _scores_from_v1(s.scores)) for s in event.steps)
        return Select(event.iteration, event.path, steps)
    if isinstance(event, _ExpandV1):
        return Expand(event.iteration, event.parent, event.children, event.simulate_from, event.rule, _scores_from_v1(event.scores))
    return event


def _decode_v1_line(line: bytes) -> Event:
    return _upgrade_v1(_V1_LINE_DECODER.decode(line))


def _decode_v1_frame(payload: bytes | memoryview) -> list[Event]:
    return [_upgrade_v1(event) for event in _V1_FRAME_DECODER.decode(payload)]


def describe_decode_error(exc: Exception) -> str:
    """A short reason for a line that does not decode, fit for a one-line message."""
    # msgspec quotes a bad key or value as it is: keep a newline in one from breaking the line.
    text = str(exc).replace("\r", "\\r").replace("\n", "\\n")
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if text.startswith("Invalid value") and "`$.kind`" in text:
        kind = text.split("'")[1] if "'" in text else "?"
        return f"unknown event kind {kind!r}"
    if text == "Input data was truncated":
        return "the JSON ends early (a truncated line)"
    if "1.7976931348623157e+308" in text and " - at `" in text:  # the bounds of ``events.Finite``
        return f"a number that is not finite (NaN or an infinity) at {text.rsplit(' - at ', 1)[1]}"
    if text.startswith("JSON is malformed"):
        return f"not valid JSON ({text[len('JSON is malformed: ') :]})"
    return terminal_text(text[0].lower() + text[1:]) if text else type(exc).__name__


# -- the header ------------------------------------------------------------------------------


def decode_header(line: bytes) -> Header:
    """Decode and check a trace's first line.

    Raises:
        MctsvizError: a message without the file name (the caller adds file and line): the
            line is not a header, comes from a newer schema, or misses an option replay needs.
    """
    if json_too_deep(line):
        raise MctsvizError(f"not a trace header: values nested more than {MAX_DEPTH} levels deep")
    try:
        probe = msgspec.json.decode(line)
    except DECODE_ERRORS as exc:
        if line.lstrip()[:1] != b"{" or b"\x00" in line:
            raise MctsvizError("not a trace: the first line is not a JSON header (binary or other data)") from None
        raise MctsvizError(f"not a trace header: {describe_decode_error(exc)}") from None
    return check_header(probe)


def decode_header_frame(payload: bytes | memoryview) -> Header:
    """Decode and check a MessagePack trace's first frame (an array holding the header).

    Raises:
        MctsvizError: as :func:`decode_header`.
    """
    if msgpack_too_deep(payload):
        raise MctsvizError(f"not a trace header: values nested more than {MAX_DEPTH} levels deep")
    try:
        probe = msgspec.msgpack.decode(payload)
    except DECODE_ERRORS as exc:
        raise MctsvizError(f"not a trace header: {describe_decode_error(exc)}") from None
    if not isinstance(probe, list) or len(probe) != 1:
        raise MctsvizError("not a trace: the first frame must hold the header event alone")
    return check_header(probe[0])


def check_header(probe: Any) -> Header:
    """Check a decoded header (plain data), version first, and convert it to a ``Header``.

    Versions 1 and 2 stored the options as an untyped object with the keys of
    :class:`~mctsviz.options.SearchOptions`; they migrate by passing through the same check
    as version 3's record (:func:`mctsviz.options.build_options`).

    Raises:
        MctsvizError: the data is not a header, comes from a newer schema, or a field breaks
            its rule (see :func:`header_problems`).
    """
    if not isinstance(probe, dict) or probe.get("kind") != "header":
        found = probe.get("kind") if isinstance(probe, dict) else type(probe).__name__
        raise MctsvizError(f"not a trace: the first line must be a header event, found {found!r}")
    if probe.get("format") != FORMAT_NAME:
        raise MctsvizError(f"not a trace: format {probe.get('format')!r} where {FORMAT_NAME!r} was expected")
    version = probe.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise MctsvizError(f"bad schema_version {version!r}: expected an integer")
    if version > SCHEMA_VERSION:
        raise MctsvizError(
            f"schema version {version} comes from a newer mctsviz (this one reads versions {MIN_SCHEMA_VERSION}-{SCHEMA_VERSION}); upgrade mctsviz to read it"
        )
    if version < MIN_SCHEMA_VERSION:
        raise MctsvizError(f"schema version {version} is older than any this mctsviz reads ({MIN_SCHEMA_VERSION}-{SCHEMA_VERSION})")
    raw_options: Any = probe.get("options")
    if version < TERMINAL_SINCE and isinstance(raw_options, dict) and "terminal" not in raw_options:
        raw_options = {**raw_options, "terminal": DEFAULTS.terminal}  # the only rule older searches had
    problems = option_problems(raw_options, complete=True, header=True) if "options" in probe else []
    if problems:
        raise MctsvizError(f"bad header: {problems[0]}")
    seed = probe.get("seed")
    if "seed" in probe and seed_problem(seed):
        raise MctsvizError(f"bad header: {seed_problem(seed)}")
    if "options" in probe:
        probe = {**probe, "options": build_options(raw_options, complete=True)}
    try:
        header = msgspec.convert(probe, Header)
    except msgspec.ValidationError as exc:
        raise MctsvizError(f"bad header: {describe_decode_error(exc)}") from None
    problems = header_problems(header)
    if problems:
        raise MctsvizError(f"bad header: {problems[0]}")
    return header


def header_problems(header: Header) -> list[str]:
    """What in ``header`` breaks its documented rule (empty when it is sound).

    Checks every field a reader relies on: the recording level, the player numbers, the root
    and its statistics, the seed (:func:`mctsviz.options.seed_problem`) and every option
    (:func:`mctsviz.options.option_problems`, the check the search applies to its options),
    and that a built-in game has every parameter it is given
    (:func:`mctsviz.games.parameter_problem`).
    """
    problems = []
    if header.record not in RECORD_LEVELS:
        problems.append(f"record level {header.record!r} is not one of {', '.join(RECORD_LEVELS)}")
    if not 1 <= header.num_players <= MAX_PLAYERS:
        problems.append(f"num_players {header.num_players} must be from 1 to {MAX_PLAYERS}")
    if not 0 <= header.root_mover < max(header.num_players, 1):
        problems.append(f"root_mover {header.root_mover} is not a player of {header.num_players}")
    if not 0 <= header.root_player < max(header.num_players, 1):
        problems.append(f"root_player {header.root_player} is not a player of {header.num_players}")
    # The root is credited with the return of the player who moved into it (mctsviz) or of the
    # player to move there (OpenSpiel's MCTSBot): the root's value steers no choice.
    if header.num_players > 1 and header.root_mover not in ((header.root_player - 1) % header.num_players, header.root_player):
        problems.append(f"root_mover {header.root_mover} is neither the player before root_player {header.root_player} nor root_player")
    if header.root_visits < 0:
        problems.append(f"root_visits {header.root_visits} is negative")
    if header.root_visits == 0 and header.root_value != 0:
        problems.append(f"root_value {header.root_value!r} with no root visits")
    if not header.options.memory and header.imported is None and (header.root_visits or header.root_value):
        problems.append("root statistics (root_visits, root_value) without the memory option (or an imported tree)")
    if header.imported is not None and not 1 <= len(header.imported) <= 64:
        problems.append("imported must name the engine in 1 to 64 characters")
    if header.facts:
        problems.extend(facts_problems(header))
    if not header.root:
        problems.append("an empty root key")
    for field in ("game", "root"):
        if len(getattr(header, field)) > MAX_TEXT:
            problems.append(f"{field} is longer than {MAX_TEXT} characters")
    if not header.game:
        problems.append("an empty game name")
    seed = seed_problem(header.seed)
    if seed:
        problems.append(seed)
    parameters = parameter_problem(header.game, header.game_params)
    if parameters:
        problems.append(parameters)
    problems.extend(option_problems(dict(header.options.items()), complete=True, header=True))
    return problems


#: The most names, numbers in a series, and marks an imported node's facts may hold.
MAX_FACT_NAMES = 64
MAX_FACT_SERIES = MAX_CHILDREN
MAX_FACT_MARKS = 16
MAX_FACT_NAME = 64


def facts_problems(header: Header) -> list[str]:
    """What in the header's ``facts`` breaks the rule: only in an imported tree, one entry per
    node (at most one per possible child of the root's and the root), bounded names and sizes."""
    facts = header.facts
    if header.imported is None:
        return ["facts without imported: only an imported tree's header holds an engine's facts"]
    if len(facts) > MAX_CHILDREN + 1:
        return [f"facts about {len(facts)} nodes, more than {MAX_CHILDREN + 1}"]
    seen: set[int] = set()
    for entry in facts:
        if entry.node < 0 or entry.node in seen:
            return [f"facts: node {entry.node} is negative or listed twice"]
        seen.add(entry.node)
        names = [*entry.numbers, *entry.series, *entry.texts, *entry.marks]
        if len(names) > MAX_FACT_NAMES or len(entry.marks) > MAX_FACT_MARKS:
            return [f"facts of node {entry.node}: more than {MAX_FACT_NAMES} names or {MAX_FACT_MARKS} marks"]
        if any(not 1 <= len(name) <= MAX_FACT_NAME for name in names):
            return [f"facts of node {entry.node}: a name must have 1 to {MAX_FACT_NAME} characters"]
        if any(len(values) > MAX_FACT_SERIES for values in entry.series.values()):
            return [f"facts of node {entry.node}: a series longer than {MAX_FACT_SERIES} numbers"]
        if any(len(text) > MAX_TEXT for text in entry.texts.values()):
            return [f"facts of node {entry.node}: a text longer than {MAX_TEXT} characters"]
    return []


# -- the JSON Schema ---------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one trace line, generated from the event records."""
    schema = msgspec.json.schema(Event)
    # Every option has a default for the search's keywords, but a header must write them all
    # (but terminal, which headers before version 8 have not: check_header fills it in).
    schema["$defs"]["SearchOptions"]["required"] = [name for name in OPTION_NAMES if name != "terminal"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{FORMAT_NAME} line (schema version {SCHEMA_VERSION})",
        "description": (
            "One line of an mctsviz trace (JSON Lines). The first line is a header; then, per "
            "iteration, a select, an expand, a simulate and a backprop event; a decision ends "
            "the trace. Fields with a default may be left out. The events of a MessagePack trace "
            "have the same shape; its frames may also hold blocks (compact iterations as typed "
            "columns, since schema version 4), which no JSON line holds. See docs/trace-format.md."
        ),
        **schema,
    }


def json_schema_text() -> str:
    """The JSON Schema as the text of the shipped ``trace.schema.json``."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


def shipped_schema_text() -> str:
    """The text of the ``trace.schema.json`` file installed with the package."""
    return resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
