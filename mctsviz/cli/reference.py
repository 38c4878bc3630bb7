"""The command reference page: every ``mctsviz`` command's ``--help`` text, as Markdown.

``docs/cli-reference.md`` is this module's output, committed, so that the site builds with any
MkDocs-compatible tool and no build hook (a test keeps the file equal to the parser). After
changing a command's options, write it again with::

    python -m mctsviz.cli.reference docs/cli-reference.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Iterator, Sequence

__all__ = ["HELP_WIDTH", "cli_reference", "main", "python_version"]

#: The width the help text is wrapped at (argparse reads it from COLUMNS).
HELP_WIDTH = 96


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _subcommands(sub, f"{prefix} {name}")


def python_version() -> str:
    """The Python the page was written with (argparse's layout changes between versions)."""
    return ".".join(platform.python_version_tuple()[:2])


def cli_reference() -> str:
    """The whole page: a heading, then one section per command with its help text in a code block."""
    from . import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        parser = build_parser()
        parts = [
            "# Command reference",
            "",
            f"<!-- Written by `python -m mctsviz.cli.reference docs/cli-reference.md` with Python {python_version()}; do not edit. -->",
            "",
            "The help text of every command, as `mctsviz` itself prints it.",
            "",
            "## mctsviz",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
            "",
        ]
        for name, sub in _subcommands(parser, "mctsviz"):
            parts += [f"## {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the page to the path given (atomically), or print it."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = cli_reference()
    if not args:
        sys.stdout.write(text)
        return 0
    from ..fileutil import atomic_write

    atomic_write(args[0], text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
