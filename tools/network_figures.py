"""The figures of docs/networks.md: one position searched before and after training, and the curve.

The work is :func:`mctsviz.network_demo.before_after` (the demo site's gallery shows the same);
this writes its figures and page part into docs/figures/networks/.

Usage::

    python tools/network_figures.py [--record RECORD.json]   # writes docs/figures/networks/
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mctsviz.network_demo import SHIPPED_RECORD, before_after, before_after_page

OUT = Path(__file__).resolve().parents[1] / "docs" / "figures" / "networks"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", default=str(SHIPPED_RECORD), help="the shipped network's training record (for the curve)")
    args = parser.parse_args()
    made = before_after(OUT, args.record)
    # A dot file: MkDocs makes no page of it.
    (OUT / ".before-after.md").write_text(before_after_page(made, "figures/networks/"), encoding="utf-8")
    print(f"wrote {OUT} (position {made.key})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
