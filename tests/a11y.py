"""Accessibility checks in the browser: axe-core (vendored in tests/vendor/axe-core) against WCAG 2.1 AA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
#: WCAG 2.0 and 2.1, levels A and AA: what course materials must meet.
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

_RUN = """
async (tags) => {
  const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
  return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary) }));
}
"""


def serious_violations(page: Any) -> list[str]:
    """The page's serious and critical WCAG 2.1 AA violations, one line each (empty when none).

    The page's context must bypass its Content-Security-Policy (``bypass_csp=True``) for the
    checker's script to run in it.
    """
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(_RUN, WCAG_AA)
    return [f"{v['impact']}: {v['id']} ({v['help']}): {'; '.join(v['nodes'])}" for v in found if v["impact"] in ("serious", "critical")]
