"""A KataGo analysis-engine response as a trace of one snapshot.

A file may hold several responses (one per line, or pretty-printed over several lines): KataGo
answers each query's turns separately, and reports errors and warnings as responses of their
own. One final response is imported, chosen by ``turn`` and ``query_id``; KataGo's warnings, and
its errors when no analysis is left, are passed on in its own words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..options import SearchOptions
from ..trace import limits
from ..trace.events import Event
from .imported import ImportedTree, check_count, check_finite, check_text, read_bytes

__all__ = [
    "BOARD_SERIES",
    "MOVE_NUMBERS",
    "MOVE_SERIES",
    "MOVE_TEXTS",
    "ROOT_NUMBERS",
    "ROOT_TEXTS",
    "WINRATE_PERSPECTIVES",
    "import_katago_analysis",
    "import_katago_file",
    "katago_responses",
]

WINRATE_PERSPECTIVES = ("sidetomove", "black", "white")
#: The most responses a file lists in a note or an error.
_LISTED = 12


def katago_responses(data: bytes, what: str) -> Iterator[tuple[int, Any]]:
    """Each JSON value in ``data`` with the line it starts on: one per line, or pretty-printed."""
    if limits.json_too_deep(data):
        raise MctsvizError(f"{what}: values nested more than {limits.MAX_DEPTH} levels deep")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MctsvizError(f"{what}: not UTF-8 text (byte {exc.start})") from None
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return
        line = text.count("\n", 0, position) + 1
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise MctsvizError(f"{what}: line {exc.lineno}: not JSON ({exc.msg})") from None
        yield line, value


def import_katago_file(
    path: str | Path,
    *,
    winrates_as: str = "sidetomove",
    to_move: str | None = None,
    turn: int | None = None,
    query_id: str | None = None,
    on_note: Callable[[str], None] | None = None,
    board_size: tuple[int, int] | None = None,
    query: str | Path | None = None,
) -> list[Event]:
    """The trace of a KataGo analysis response read from a file.

    The candidates are the final responses (``isDuringSearch`` false) with ``moveInfos``, those
    of ``query_id`` and ``turn`` where given; the last candidate is imported, and when several
    were left ``on_note`` hears which turns the file holds. KataGo's warnings go to ``on_note``;
    with no candidate, KataGo's own errors are the message. ``query``: the file of the query
    KataGo answered (JSON), whose moves give the stones on the board.
    """
    note = on_note or (lambda _message: None)
    candidates: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    present: list[tuple[str, Any]] = []
    for line, response in katago_responses(read_bytes(path), str(path)):
        if not isinstance(response, dict):
            raise MctsvizError(f"{path}: line {line}: not a KataGo response (a JSON object)")
        if "error" in response:
            errors.append(_reported(response, "error"))
            continue
        if "warning" in response:
            note(f"{path}: line {line}: KataGo warned: {_reported(response, 'warning')}")
            continue
        if "moveInfos" not in response or response.get("isDuringSearch", False):
            continue
        present.append((str(response.get("id", ""))[:64], response.get("turnNumber")))
        if query_id is not None and str(response.get("id")) != query_id:
            continue
        if turn is not None and response.get("turnNumber") != turn:
            continue
        candidates.append((line, response))
    if not candidates:
        wanted = "".join([f" of id {query_id!r}" if query_id is not None else "", f" for turn {turn}" if turn is not None else ""])
        if errors:
            raise MctsvizError(f"{path}: no KataGo analysis{wanted}; KataGo reported: {'; '.join(errors[:3])}")
        if present:
            raise MctsvizError(f"{path}: no final KataGo analysis{wanted}; the file holds {_listing(present)}")
        raise MctsvizError(f"{path}: no final KataGo analysis response (a JSON object with moveInfos)")
    line, chosen = candidates[-1]
    if len(candidates) > 1:
        note(
            f"{path}: {len(candidates)} analyses ({_listing(present)}); imported the last, id {str(chosen.get('id', ''))[:64]!r} "
            f"turn {chosen.get('turnNumber')} (line {line}); choose another with --turn N or --id ID"
        )
    for message in errors:
        note(f"{path}: KataGo reported an error: {message}")
    asked = None if query is None else _query_for(query, chosen.get("id"))
    return import_katago_analysis(chosen, winrates_as=winrates_as, to_move=to_move, on_note=on_note, board_size=board_size, query=asked)


def _query_for(path: str | Path, query_id: Any) -> Any:
    """The query of ``query_id`` in a file of KataGo queries (one per line, as KataGo reads them,
    or one pretty-printed), or its only query."""
    queries = [query for _, query in katago_responses(read_bytes(path), str(path))]
    matching = [q for q in queries if isinstance(q, dict) and q.get("id") == query_id]
    if len(matching) == 1 or (not matching and len(queries) == 1):
        return (matching or queries)[0]
    raise MctsvizError(
        f"{path}: {len(matching) or 'no'} queries of id {str(query_id)[:64]!r} among its {len(queries)}: give the file of the one KataGo answered"
    )


def _reported(response: dict[str, Any], kind: str) -> str:
    """KataGo's error or warning text, with the field and query it names."""
    text = " ".join(str(response.get(kind)).split())[:300]
    where = [f"{name} {str(response[name])[:64]!r}" for name in ("field", "id") if name in response]
    return text + (f" ({', '.join(where)})" if where else "")


def _listing(present: list[tuple[str, Any]]) -> str:
    by_id: dict[str, list[str]] = {}
    for query, turn in present:
        by_id.setdefault(query, []).append(str(turn)[:12])
    parts = [f"id {query!r}: turns {', '.join(turns[:_LISTED])}{' ...' if len(turns) > _LISTED else ''}" for query, turns in list(by_id.items())[:_LISTED]]
    return "; ".join(parts) + ("; ..." if len(by_id) > _LISTED else "")


def import_katago_analysis(
    response: Any,
    *,
    winrates_as: str = "sidetomove",
    to_move: str | None = None,
    on_note: Callable[[str], None] | None = None,
    board_size: tuple[int, int] | None = None,
    query: Any = None,
) -> list[Event]:
    """The trace of one KataGo analysis-engine response: the root and one child per searched move.

    Winrates in [0, 1] become means in [-1, 1] for the player making the move (``2w - 1``).
    KataGo reports them from the perspective its config's ``reportAnalysisWinratesAs`` names:
    ``sidetomove`` (each move's winrate is for the player making it), or ``black``/``white``,
    which needs ``to_move`` ("B" or "W", else ``rootInfo.currentPlayer``). A move marked
    ``isSymmetryOf`` was not searched (KataGo copies a symmetric move's statistics to it): it is
    left out, and ``on_note`` hears how many. The ``pv`` beyond its first move is not imported:
    KataGo reports no statistics for those nodes.

    What else KataGo reported is kept in the header's facts (:data:`MOVE_NUMBERS` and the
    others below), turned like the winrates to the side to move at the root: the root's
    ``rootInfo`` numbers, ``ownership`` (positive for Black where who moves is known) and
    ``policy``, the board's size (``board_size``, else from those arrays or the moves) and, with
    the ``query`` KataGo answered, its stones; each move's score lead, lcb, utility, pv and
    pvVisits, human prior, ...

    Raises:
        MctsvizError: a missing or malformed field, or more moves than a trace holds.
    """
    if winrates_as not in WINRATE_PERSPECTIVES:
        raise MctsvizError(f"winrates_as must be one of {', '.join(WINRATE_PERSPECTIVES)}, not {winrates_as!r}")
    if isinstance(response, dict) and "error" in response:
        raise MctsvizError(f"KataGo reported an error: {_reported(response, 'error')}")
    if not isinstance(response, dict) or not isinstance(response.get("moveInfos"), list) or not isinstance(response.get("rootInfo"), dict):
        raise MctsvizError("not a KataGo analysis response: expected an object with moveInfos (a list) and rootInfo (an object)")
    root_info, moves = response["rootInfo"], response["moveInfos"]
    if len(moves) > limits.MAX_CHILDREN:
        raise MctsvizError(f"{len(moves)} moves, more than the {limits.MAX_CHILDREN} a trace holds")
    flip = False
    if winrates_as != "sidetomove":
        player = to_move if to_move is not None else root_info.get("currentPlayer")
        if player not in ("B", "W"):
            raise MctsvizError(f"winrates reported as {winrates_as}: say who is to move (B or W); the response has no rootInfo.currentPlayer")
        flip = (player == "B") != (winrates_as == "black")

    def mean(winrate: Any) -> float:
        w = check_finite(winrate, "a winrate")
        if not -0.5 <= w <= 1.5:  # lcb-like values stray a little outside [0, 1]; winrates do not
            raise MctsvizError(f"a winrate must be from 0 to 1, not {w}")
        w = 1.0 - w if flip else w
        return 2.0 * w - 1.0

    turn = response.get("turnNumber", 0)
    root_visits = check_count(root_info.get("visits", 0), "rootInfo.visits")
    # rootInfo's winrate is the side to move's; the root is credited to the player before it.
    root_value = -mean(root_info.get("winrate", 0.5)) * root_visits if root_visits else 0.0
    tree = ImportedTree(root_key=f"turn {check_count(turn, 'turnNumber')}", root_visits=root_visits, root_value=root_value, root_player=0, num_players=2)
    copies = 0
    symmetric: list[str] = []
    for number, info in enumerate(sorted(moves, key=lambda m: m.get("order", 0) if isinstance(m, dict) and isinstance(m.get("order", 0), int) else 0)):
        if not isinstance(info, dict):
            raise MctsvizError(f"moveInfos[{number}] is not an object")
        move = check_text(info.get("move"), f"moveInfos[{number}].move")
        if "isSymmetryOf" in info:
            # KataGo's docs: a move equivalent by symmetry to the one named, not explored itself.
            copies += 1
            symmetric.append(f"{move}={check_text(info['isSymmetryOf'], f'moveInfos[{number}].isSymmetryOf')}")
            continue
        visits = check_count(info.get("visits", 0), f"moveInfos[{number}].visits")
        node = tree.add(
            0,
            label=move,
            key=f"{tree.nodes[0].key} {move}",
            prior=info.get("prior", 0.0),
            mover=0,
            terminal=False,
            visits=visits,
            value=mean(info.get("winrate", 0.5)) * visits,
        )
        tree.add_facts(node, **_reported_facts(info, MOVE_NUMBERS, MOVE_SERIES, MOVE_TEXTS, flip=flip, where=f"moveInfos[{number}]"))
    _add_root_facts(tree, response, flip=flip, winrates_as=winrates_as, symmetric=symmetric, to_move=to_move, board_size=board_size, query=query)
    if copies and on_note is not None:
        on_note(f"{copies} moves marked isSymmetryOf (symmetric copies KataGo did not search) were left out")
    return tree.events(engine="katago", game="katago", options=SearchOptions(policy="puct"))


#: What a ``moveInfos`` entry holds besides ``move``, ``visits`` and ``prior``, kept as facts
#: (KataGo's analysis-engine documentation names them); ``winrate`` is also the node's mean.
MOVE_NUMBERS = (
    "winrate",
    "order",
    "scoreLead",
    "scoreMean",
    "scoreSelfplay",
    "scoreStdev",
    "lcb",
    "utility",
    "utilityLcb",
    "humanPrior",
    "edgeVisits",
    "weight",
    "edgeWeight",
    "playSelectionValue",
)
MOVE_SERIES = ("pvVisits", "pvEdgeVisits")
MOVE_TEXTS = ("pv",)
#: What ``rootInfo`` holds besides ``visits``.
ROOT_NUMBERS = (
    "winrate",
    "scoreLead",
    "scoreSelfplay",
    "scoreStdev",
    "utility",
    "lcb",
    "weight",
    "rawWinrate",
    "rawLead",
    "rawScoreSelfplay",
    "rawScoreSelfplayStdev",
    "rawNoResultProb",
    "rawStWrError",
    "rawStScoreError",
    "rawVarTimeLeft",
    "humanWinrate",
    "humanScoreMean",
    "humanScoreStdev",
)
ROOT_TEXTS = ("currentPlayer", "thisHash", "symHash")
#: The response's per-point arrays (row-major from the top-left; the policies end with passing).
BOARD_SERIES = ("ownership", "ownershipStdev", "policy", "humanPolicy")
#: Numbers for a player, turned when KataGo reports them for the other one: scores and
#: utilities change sign, winrates and their bounds become 1 - w.
_NEGATED = frozenset({"scoreLead", "scoreMean", "scoreSelfplay", "utility", "utilityLcb", "rawLead", "rawScoreSelfplay", "humanScoreMean"})
_COMPLEMENTED = frozenset({"winrate", "lcb", "rawWinrate", "humanWinrate"})


def _reported_facts(
    info: dict[str, Any], numbers: tuple[str, ...], series: tuple[str, ...], texts: tuple[str, ...], *, flip: bool, where: str
) -> dict[str, Any]:
    """The fields of ``info`` named in ``numbers``, ``series`` and ``texts`` that it holds, checked."""
    kept_numbers = {}
    for name in numbers:
        if name in info:
            value = check_finite(info[name], f"{where}.{name}")
            if flip and name in _NEGATED:
                value = -value
            elif flip and name in _COMPLEMENTED:
                value = 1.0 - value
            kept_numbers[name] = value
    kept_series = {name: info[name] for name in series if name in info}
    kept_texts = {}
    for name in texts:
        if name in info:
            text = info[name]
            if isinstance(text, list) and all(isinstance(v, str) for v in text):
                text = " ".join(text)  # a pv: its moves
            kept_texts[name] = check_text(text, f"{where}.{name}")
    return {"numbers": kept_numbers, "series": kept_series, "texts": kept_texts}


def _add_root_facts(
    tree: ImportedTree,
    response: dict[str, Any],
    *,
    flip: bool,
    winrates_as: str,
    symmetric: list[str],
    to_move: str | None,
    board_size: tuple[int, int] | None,
    query: Any,
) -> None:
    """The root's facts: rootInfo's numbers, the board (size, stones, ownership, policy), the
    players' colours, the symmetric copies left out and the range of the means."""
    from .goboard import board_size as size_of
    from .goboard import position_from_query

    facts = _reported_facts(response["rootInfo"], ROOT_NUMBERS, (), ROOT_TEXTS, flip=flip, where="rootInfo")
    texts: dict[str, str] = facts["texts"]
    series: dict[str, Any] = {name: response[name] for name in BOARD_SERIES if name in response}
    for name, values in series.items():
        if not isinstance(values, list) or len(values) > limits.MAX_CHILDREN:
            raise MctsvizError(f"{name} must be a list of at most {limits.MAX_CHILDREN} numbers")
    moves = [str(info.get("move", "")) for info in response["moveInfos"] if isinstance(info, dict)]
    stones = None
    if query is not None:
        stones, query_to_move = position_from_query(query, response.get("turnNumber"))
        board_size = board_size or (stones.width, stones.height)
        to_move = to_move or query_to_move
    width, height = size_of(moves, ownership=series.get("ownership"), policy=series.get("policy"), given=board_size)
    for name, extra in (("ownership", 0), ("ownershipStdev", 0), ("policy", 1), ("humanPolicy", 1)):
        if name in series and len(series[name]) != width * height + extra:
            raise MctsvizError(f"{name} has {len(series[name])} numbers; a {width}x{height} board has {width * height + extra}")
    if stones is not None:
        if (stones.width, stones.height) != (width, height):
            raise MctsvizError(f"the query's board is {stones.width}x{stones.height}, not {width}x{height}")
        texts["stones"] = "/".join("".join(s or "." for s in row) for row in stones.stones)
    player = to_move or texts.get("currentPlayer")
    player = player if player in ("B", "W") else None
    # Ownership is reported from the winrates' perspective: turned to Black's where who moves is known.
    if "ownership" in series:
        # Positive for the colour of reportAnalysisWinratesAs (the side to move by default).
        positive = {"black": "B", "white": "W"}.get(winrates_as, player)
        if positive == "W":
            series["ownership"] = [-check_finite(v, "an ownership value") for v in series["ownership"]]
        texts["ownershipOf"] = "Black" if positive is not None else "the side to move"
    if player is not None:
        colours = ("Black", "White") if player == "B" else ("White", "Black")
        texts["players"] = f"P1 {colours[0]} (to move), P2 {colours[1]}"
    if symmetric:
        texts["isSymmetryOf"] = " ".join(symmetric)
    # Winrates in [0, 1] are means in [-1, 1]; verify checks every mean against that.
    series["value_range"] = [-1.0, 1.0]
    tree.add_facts(0, numbers={**facts["numbers"], "boardXSize": width, "boardYSize": height}, series=series, texts=texts)
