"""What an explorer shows a user, measured in the browser: for tests and benchmarks, ours and anyone's.

:data:`MOMENT_PROBE` is a JavaScript function for a browser driver (Playwright's
``page.evaluate(MOMENT_PROBE)``); it reads only the explorer's DOM contract (docs/explorer.md):
the root's ``data-iteration`` and ``data-phase``, each drawn node's ``data-node`` and
``data-role``, the stage marked ``data-stage``. It answers, for the first explorer on the page::

    iteration, phase     the moment shown
    stage                the stage's box on screen [left, top, right, bottom], CSS px
    nodes                per visible node: [id, roles, inside the stage (0/1), label px, overflows (0/1)]

A node's label size is its text's font size times the camera's zoom; it overflows when a text
of it is wider than its box on screen. :func:`follows` checks a moment's answer against the
nodes the iteration must show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["MOMENT_PROBE", "Sight", "follows"]

MOMENT_PROBE = """
() => {
  const root = document.querySelector('.mvx');
  const stage = root.querySelector('[data-stage]').getBoundingClientRect();
  const nodes = [];
  for (const g of root.querySelectorAll('[data-node]')) {
    if (g.classList.contains('mvx-hidden')) continue;
    const box = g.querySelector('rect').getBoundingClientRect();
    const inside = box.left >= stage.left - 0.5 && box.right <= stage.right + 0.5 && box.top >= stage.top - 0.5 && box.bottom <= stage.bottom + 0.5;
    let px = Infinity, overflows = 0;
    for (const t of g.querySelectorAll(':scope > text')) {
      const ctm = t.getScreenCTM();
      const zoom = ctm ? Math.hypot(ctm.a, ctm.b) : 1;
      px = Math.min(px, parseFloat(getComputedStyle(t).fontSize) * zoom);
      const r = t.getBoundingClientRect();
      if (r.width > box.width + 0.5) overflows = 1;
    }
    nodes.push([+g.getAttribute('data-node'), g.getAttribute('data-role') || '', inside ? 1 : 0, px === Infinity ? 0 : px, overflows]);
  }
  return {iteration: +root.getAttribute('data-iteration'), phase: root.getAttribute('data-phase'),
          stage: [stage.left, stage.top, stage.right, stage.bottom], nodes};
}
"""


class Sight:
    """One moment's probe answer (:data:`MOMENT_PROBE`), read.

    Args:
        answer: what the probe returned.
    """

    def __init__(self, answer: dict[str, Any]) -> None:
        self.iteration: int = int(answer["iteration"])
        self.phase: str = str(answer["phase"])
        self.inside = {int(n[0]): bool(n[2]) for n in answer["nodes"]}
        self.roles = {int(n[0]): set(str(n[1]).split()) for n in answer["nodes"]}
        on_stage = [n for n in answer["nodes"] if n[2]]
        #: The smallest label on the stage, in CSS px (0 when no node is on it).
        self.smallest_label: float = min((float(n[3]) for n in on_stage), default=0.0)
        #: Visible nodes on the stage whose text is wider than their box.
        self.overflowing: int = sum(int(n[4]) for n in on_stage)

    def with_role(self, role: str) -> set[int]:
        """The visible nodes carrying ``role``."""
        return {node for node, roles in self.roles.items() if role in roles}


def follows(sight: Sight, path_end: int, new: Iterable[int], simulated: int) -> list[str]:
    """What the moment fails to show of its iteration: the path's end always; the new nodes
    from the expansion on; the simulated node from the simulation on. Empty when it shows all,
    each inside the stage."""
    phase = ("select", "expand", "simulate", "backprop").index(sight.phase)
    want = {path_end: "the path's end"}
    if phase >= 1:
        want.update({node: "a new node" for node in new})
    if phase >= 2:
        want[simulated] = "the simulated node"
    problems = []
    for node, what in want.items():
        if node not in sight.inside:
            problems.append(f"{what} {node} is not drawn")
        elif not sight.inside[node]:
            problems.append(f"{what} {node} is outside the stage")
    return problems
