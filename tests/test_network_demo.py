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


def test_the_demo_build_writes_the_networks_part_where_the_gallery_page_finds_it(tmp_path: Path) -> None:
    from mctsviz.demo import build_demo

    docs = tmp_path / "docs"
    build_demo(docs, quick=True, jobs=1, progress=False)
    page = (docs / "gallery" / "generated" / ".networks.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\((gallery/generated/networks/[^)]+)\)", page)
    names = {Path(link).name for link in linked}
    assert {"tree-untrained.svg", "tree-trained.svg", "training-curve.svg"} <= names
    for link in linked:  # relative to docs/gallery.md, which includes the part
        assert (docs / link).is_file(), link
