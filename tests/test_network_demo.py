"""The demo site's networks part: one position searched before and after training, and the curve."""

from __future__ import annotations

import re
from pathlib import Path

from mctsviz.demo import network_pages

DOCS = Path(__file__).resolve().parents[1] / "docs"
PREFIX = "gallery/generated/networks/"


def test_the_networks_part_shows_both_trees_the_priors_the_diff_and_the_curve() -> None:
    pages = network_pages(PREFIX)
    page = pages[".networks.md"]
    assert isinstance(page, str)
    for name in ("tree-untrained", "tree-trained", "priors-untrained", "priors-trained", "training-curve"):
        figure = pages[f"networks/{name}.svg"]
        assert isinstance(figure, bytes) and figure.lstrip().startswith((b"<?xml", b"<svg"))
        assert f"]({PREFIX}{name}.svg)" in page
    assert "mctsviz diff untrained.jsonl trained.jsonl" in page
    # The two searches' tables, each ending with the move it chose.
    assert len(re.findall(r"chosen move: \d", page)) == 2
    # The searches' timings would make the page differ from build to build.
    assert not re.search(r"iterations in [0-9.]+ s", page)
    assert network_pages(PREFIX) == pages  # byte-identical


def test_the_gallery_page_includes_the_networks_part() -> None:
    assert '--8<-- "gallery/generated/.networks.md"' in (DOCS / "gallery.md").read_text(encoding="utf-8")
