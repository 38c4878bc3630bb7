"""The spec of an OpenSpiel game: its name and parameters parsed, and checked against bounds.

``parse_spec`` reads ``breakthrough(rows=6,columns=6)``; ``check_parameters`` checks the values
against the game's own parameter specification (their types, as its defaults have them) and
against mctsviz's bounds, since a spec (or a trace's header) is untrusted and OpenSpiel's C++
does not check every size.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import MctsvizError

__all__ = ["MAX_PARAMETERS", "MAX_PARAMETER_INT", "MAX_PARAMETER_TEXT", "check_parameters", "parse_spec"]

#: Bounds on what a spec (or a trace's header) may ask OpenSpiel to build.
MAX_PARAMETERS = 16
MAX_PARAMETER_INT = 1000
MAX_PARAMETER_TEXT = 100

_NAME = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")  # OpenSpiel names start with a digit too (2048)
_PARAMETER = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,63})=([^,()=]*)")
_INT = re.compile(r"[+-]?[0-9]{1,10}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"breakthrough(rows=6,columns=6)"`` -> ``("breakthrough", {"rows": 6, "columns": 6})``.

    Values are read as OpenSpiel writes them: ``true``/``false``, whole numbers, decimals, else
    text. A game as a parameter (``game=tic_tac_toe()``) is not accepted.

    Raises:
        MctsvizError: the text is not a game name with optional ``(key=value,...)``.
    """
    text = spec.strip()
    name, _, rest = text.partition("(")
    if not _NAME.fullmatch(name):
        raise MctsvizError(f"OpenSpiel game {spec[:120]!r}: expected a name like connect_four, optionally with (key=value,...)")
    params: dict[str, Any] = {}
    if rest:
        if not rest.endswith(")") or "(" in rest[:-1] or ")" in rest[:-1]:
            raise MctsvizError(f"OpenSpiel game {spec[:120]!r}: parameters are (key=value,...) with plain values (no nested games)")
        body = rest[:-1].strip()
        for item in body.split(",") if body else []:
            match = _PARAMETER.fullmatch(item.strip())
            if match is None:
                raise MctsvizError(f"OpenSpiel game {spec[:120]!r}: parameter {item.strip()[:40]!r} is not key=value")
            params[match.group(1)] = _value(match.group(2).strip())
    return name, params


def _value(text: str) -> Any:
    if text in ("true", "false", "True", "False"):
        return text.lower() == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def check_parameters(name: str, params: dict[str, Any], spec_defaults: dict[str, Any]) -> dict[str, Any]:
    """The parameters, checked against the game's own specification and our bounds."""
    if len(params) > MAX_PARAMETERS:
        raise MctsvizError(f"OpenSpiel game {name!r}: {len(params)} parameters, more than {MAX_PARAMETERS}")
    checked: dict[str, Any] = {}
    for key, value in params.items():
        if key not in spec_defaults:
            known = ", ".join(sorted(spec_defaults)) or "none"
            raise MctsvizError(f"OpenSpiel game {name!r} has no parameter {str(key)[:40]!r} (its parameters: {known})")
        default = spec_defaults[key]
        if isinstance(default, dict):
            raise MctsvizError(f"OpenSpiel game {name!r}: parameter {key!r} takes a game, which mctsviz does not load")
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
            # OpenSpiel's C++ does not check every size (connect_four(rows=0) crashes the
            # process): a parameter whose default is positive must stay positive.
            low = 1 if default >= 1 else 0 if default == 0 else -MAX_PARAMETER_INT
            if ok and not low <= value <= MAX_PARAMETER_INT:
                raise MctsvizError(f"OpenSpiel game {name!r}: parameter {key}={value} is outside {low}-{MAX_PARAMETER_INT}")
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
            if ok and not abs(value) <= 1e9:
                raise MctsvizError(f"OpenSpiel game {name!r}: parameter {key}={value} is not a finite number of reasonable size")
        else:
            ok = isinstance(value, str) and len(value) <= MAX_PARAMETER_TEXT
        if not ok:
            raise MctsvizError(f"OpenSpiel game {name!r}: parameter {key}={str(value)[:40]!r} should be {_type_name(default)}, like its default {default!r}")
        checked[key] = value
    return checked


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    return f"text of at most {MAX_PARAMETER_TEXT} characters"
