"""MkDocs hooks of the mctsviz site (``hooks:`` in mkdocs.yml): local code, nothing fetched.

``<!-- mctsviz:cli-reference -->`` in a page becomes the ``--help`` text of every ``mctsviz``
command and subcommand, taken from the parser itself at build time, so the command reference
never drifts from the code.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import Any

CLI_REFERENCE = "<!-- mctsviz:cli-reference -->"
#: The width the help text is wrapped at (argparse reads it from COLUMNS).
HELP_WIDTH = 96


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _subcommands(sub, f"{prefix} {name}")


def cli_reference() -> str:
    """Markdown: one section per command, with its help text in a code block."""
    from mctsviz.cli import build_parser  # absolute: MkDocs loads this file by path, outside the package

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        parser = build_parser()
        parts = ["### mctsviz", "", "```text", parser.format_help().rstrip(), "```", ""]
        for name, sub in _subcommands(parser, "mctsviz"):
            parts += [f"### {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: fill in the command reference where a page asks for it."""
    if CLI_REFERENCE in markdown:
        markdown = markdown.replace(CLI_REFERENCE, cli_reference())
    return markdown
