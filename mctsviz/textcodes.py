"""Texts numbered by first appearance: each distinct text stored once, named by a small integer.

Action labels (a game has few distinct ones) and the explorer's formatted numbers repeat
millions of times; a column of codes and one table of texts hold them in a few bytes each.
Standard library only.
"""

from __future__ import annotations

__all__ = ["TextCodes"]


class TextCodes:
    """A table of texts and their codes: ``names[code(text)] == text``, codes from 0 in order.

    ``code`` sits in hot loops: a text seen before costs one call and one ``dict.get``, as the
    hand-written method each user had. Call it as ``table.code(text)`` or, in a loop, bound to a
    local (``code = table.code``); a bound method kept as an attribute is slower to call on
    CPython 3.11 (``benchmarks/text_codes.py``).

    Attributes:
        names: the texts, by code.
        codes: each text's code.
    """

    __slots__ = ("codes", "names")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.codes: dict[str, int] = {}

    def code(self, text: str) -> int:
        """The code of ``text``, given the next one when it is new."""
        code = self.codes.get(text)
        if code is None:
            code = self.codes[text] = len(self.names)
            self.names.append(text)
        return code
