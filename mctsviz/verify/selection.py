"""Selection: the path, where it stops, each choice and the recorded scores."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..search import policies
from ..trace.events import Score, Select
from .diagnosis import ENDED_RULE_KEYS, UNKNOWN_BY_KIND, Children, most_likely, score_causes, selection_causes
from .report import close_enough
from .state import CheckerState

__all__ = ["FIRST_CHECKS", "SelectionChecks"]

#: The checks whose first violation may get its cause past the report's limit (an index each).
FIRST_CHECKS = ("selection", "expansion", "scores", "update", "reward")


class SelectionChecks(CheckerState):
    """Selection: the path, where it stops, each choice and the recorded scores."""

    # -- selection ------------------------------------------------------------------------

    def _selection(self, select: Select) -> bool:
        iteration, path = select.iteration, select.path
        if not path:
            self.flag("path", iteration, None, "a path from the root", "an empty path", "the selection path is empty")
            return False
        if path[0] != 0:
            self.flag("path", iteration, path[0], 0, path[0], "the selection path does not start at the root")
            return False
        steps = select.steps
        if self.full and steps is None:
            self.flag("scores", iteration, None, "recorded steps", None, "a full-level trace without selection scores")
        elif steps is not None and len(steps) != len(path) - 1:
            self.flag("scores", iteration, None, len(path) - 1, len(steps), "one recorded step per move down the path")
            steps = None
        terminal, untried_left, visits, value, kids_of = self.terminal, self.untried_left, self.visits, self.value, self.kids
        count_untried = self.one_at_a_time and self.rules
        options = self.options
        # Compact UCB1 with the first-child tie-break, the usual case, is settled here by the
        # policy's own argmax loop; anything else (and any wrong choice) by _choice.
        quick = steps is None and options.policy == "ucb1" and options.tie_break == "first" and options.terminal == "formula"
        if quick and self.marks is not None and self._marked(iteration):
            # Every step took the first child of highest UCB1 (mctsviz.verify.compiled): only
            # where selection stops is left to check.
            for node in path[:-1]:
                if terminal[node] or (count_untried and untried_left[node] != 0):
                    self._stop_check(node, iteration, last=False)
            self._stop_check(path[-1], iteration, last=True)
            return True
        argmax_of, c, log = policies.ucb1_argmax_of, options.c, options.log
        for i in range(len(path) - 1):
            node, chosen = path[i], path[i + 1]
            kids = kids_of(node)
            if chosen not in kids:
                self.flag("path", iteration, chosen, f"a child of node {node}", chosen, "the path leaves the tree's edges")
                return False
            # A node with children goes on unless terminal or (one child at a time) with an
            # untried action, or an untried count still unknown: only then the full check.
            if terminal[node] or (count_untried and untried_left[node] != 0):
                self._stop_check(node, iteration, last=False)
            if quick:
                best = argmax_of(kids, value, visits, visits[node], c=c, log=log)
                if best and kids[best[0]] == chosen:
                    continue
            self._choice(node, kids, chosen, iteration, "selection", steps[i] if steps else None)
        self._stop_check(path[-1], iteration, last=True)
        return True

    def _marked(self, iteration: int, bit: int = 1) -> bool:
        """Whether the compiled marks settled ``bit`` of ``iteration`` (1: its selection, 2: its rewards)."""
        assert self.marks is not None
        first, marks = self.marks
        offset = iteration - first
        return 0 <= offset < len(marks) and marks[offset] & bit != 0

    def _stop_check(self, node: int, iteration: int, *, last: bool) -> None:
        """Selection goes on exactly while the node is not terminal, has children and (one
        child at a time) has no untried action."""
        goes_on = not self.terminal[node] and self.first_edge[node] >= 0
        if self.one_at_a_time and self.rules:
            goes_on = goes_on and not self.has_untried(node)
        elif self.one_at_a_time:
            return  # without the game, whether a node is fully expanded is unknown
        if goes_on == last:
            what = "stops" if last else "goes on"
            if last:  # not terminal, with children and nothing untried
                why = f"node {node} is fully expanded ({len(self.kids(node))} children, no untried action): selection goes on to its best child"
            elif self.terminal[node]:
                why = f"node {node} is terminal: selection stops there"
            else:
                why = f"node {node} still has an untried action: selection stops there to expand it"
            self.flag("stop", iteration, node, "go on" if last else "stop", what, f"selection {what} at node {node}, but {why}")

    def _choice(self, node: int, kids: list[int], chosen: int, iteration: int, check: str, step: Any) -> None:
        """Is ``chosen`` the best of ``kids`` under the options (and do recorded scores agree)?"""
        options = self.options
        parent_visits = self.visits[node]
        if step is None and self._chose_best(kids, chosen, parent_visits):
            return  # the usual case, settled by the policy's argmax loop (the same floating-point operations)
        terminal = self.terminal
        terms = [policies.score_terms(options, self.value[k], self.visits[k], parent_visits, self.prior[k], bool(terminal[k])) for k in kids]
        scores = [t[2] for t in terms]
        top = max(scores)
        best = [k for k, s in zip(kids, scores) if s == top]
        if options.tie_break == "random":
            ok = chosen in best
        else:
            ok = chosen == best[0]
        if not ok:
            detail = ", ".join(f"{k}: {s:.4g}" for k, s in zip(kids, scores))
            name = options.policy_name
            mine = scores[kids.index(chosen)] if chosen in kids else None
            said = f"selection took child {chosen} at node {node} (N = {parent_visits})"
            if mine is not None:
                said += f", which scores {name} {mine:.4g}, but child {best[0]} scores {top:.4g}, the highest"
                if mine == top:
                    said += f" too: between equal scores the tie-break '{options.tie_break}' takes child {best[0]}"
                    # A tie the other rule for ended games breaks (OpenSpiel's, undeclared) is its doing.
                    ended = [cause for cause in selection_causes(options, self._children_of(node, kids), chosen) if cause[0] in ENDED_RULE_KEYS]
                    if ended:
                        self._note_causes("selection", said, f"; scores {detail}", ended, check)
                else:
                    self._note_causes("selection", said, f"; scores {detail}", selection_causes(options, self._children_of(node, kids), chosen), check)
            self.flag(
                check,
                iteration,
                node,
                best[0] if len(best) == 1 or options.tie_break != "random" else best,
                chosen,
                f"{said}; scores {detail}",
            )
        if step is None:
            return
        recorded = step.scores if check == "selection" else step
        if check == "selection":
            if step.node != node or step.chosen != chosen:
                self.flag("scores", iteration, node, (node, chosen), (step.node, step.chosen), "the recorded step is not the path's")
            if step.parent_visits != parent_visits:
                self.flag("scores", iteration, node, parent_visits, step.parent_visits, "the recorded parent visits")
        if recorded is None:
            if self.full:
                self.flag("scores", iteration, node, "recorded scores", None, "a full-level step without scores")
            return
        self._compare_scores(recorded, kids, terms, iteration, node)

    def _chose_best(self, kids: list[int], chosen: int, parent_visits: int) -> bool:
        """Whether ``chosen`` is a child the tie-break may take among the best-scored ``kids``."""
        options = self.options
        if options.terminal != "formula":
            best = policies.best_scored(options, kids, self.value, self.visits, self.prior, self.terminal, parent_visits)
        elif options.policy == "puct":
            child_visits = list(map(self.visits.__getitem__, kids))
            child_values = list(map(self.value.__getitem__, kids))
            priors = list(map(self.prior.__getitem__, kids))
            best = policies.puct_argmax(child_values, child_visits, priors, parent_visits, c_puct=options.c_puct, q=options.q, fpu=options.fpu)
        else:
            best = policies.ucb1_argmax_of(kids, self.value, self.visits, parent_visits, c=options.c, log=options.log)
        if not best:
            return False
        if options.tie_break == "random":
            return chosen in [kids[i] for i in best]
        return chosen == kids[best[0]]

    def _note_causes(self, kind: str, said: str, rest: str, causes: list[tuple[str, str]], check: str | None = None) -> None:
        """Count the mistakes that explain a wrong step of ``kind`` (a choice, a recorded score,
        a recorded update); the violation about to be flagged gets the likeliest one's words
        when the whole trace has been read (:meth:`name_causes`). ``check`` is the violation's
        check when it is not ``kind`` (a choice among new children is an expansion's)."""
        self.wrong_steps[kind] = self.wrong_steps.get(kind, 0) + 1
        keyed = [(f"{kind}: {key}", words) for key, words in causes]
        for key, _ in keyed:
            self.explained[key] = self.explained.get(key, 0) + 1
        report = self.report
        if len(report.violations) < report.limit:
            self.unexplained.append((len(report.violations), kind, said, rest, keyed))
        elif (check or kind) not in report.failed:  # the first of its check, shown by a grader's family past the limit
            self.unexplained.append((-1 - list(FIRST_CHECKS).index(check or kind), kind, said, rest, keyed))

    def name_causes(self) -> None:
        """Add to each wrong step kept the mistake that explains the most wrong steps of its kind in the trace."""
        for index, kind, said, rest, causes in self.unexplained:
            # A formula's mistakes that fit as many steps are all said; a backup's are listed
            # the most specific first (a draw lost by both players is a draw scored as a loss).
            words = most_likely(causes, self.explained, self.wrong_steps.get(kind, 0), UNKNOWN_BY_KIND[kind], ties=kind in ("selection", "scores"))
            if words is None:
                continue
            report = self.report
            if kind in ("selection", "scores") and (report.failed.get("reward") or report.failed.get("update-path") or report.failed.get("update")):
                # Wrong backups make wrong values: what explains the choices may be their doing.
                if words == UNKNOWN_BY_KIND[kind]:
                    words += " (the wrong backups flagged in this trace change the values it chose with: fix those first)"
                else:
                    words += "; or the wrong backups flagged in this trace, which change the values it chose with: fix those first"
            if index < 0:
                check = FIRST_CHECKS[-1 - index]
                report.first_of_check[check] = dataclasses.replace(report.first_of_check[check], message=f"{said} ({words}){rest}")
                continue
            violation = report.violations[index]
            report.violations[index] = named = dataclasses.replace(violation, message=f"{said} ({words}){rest}")
            if report.first_of_check.get(violation.check) is violation:
                report.first_of_check[violation.check] = named
        self.unexplained = []

    def _children_of(self, node: int, kids: list[int]) -> Children:
        """A node's children's statistics, for naming the likely cause of a wrong choice."""
        return Children(
            node=node,
            kids=kids,
            parent_visits=self.visits[node],
            visits=[self.visits[k] for k in kids],
            value=[self.value[k] for k in kids],
            prior=[self.prior[k] for k in kids],
            terminal=[bool(self.terminal[k]) for k in kids],
            parent_started=self.visits0[node] + self.ends[node],
            started=[self.visits0[k] + self.ends[k] for k in kids],
            root_visits=self.visits[0],
            parent_ended=self.ends[node],
            ended=[self.ends[k] for k in kids],
        )

    def _compare_scores(self, recorded: tuple[Score, ...], kids: list[int], terms: list[tuple[float, float, float]], iteration: int, node: int) -> None:
        if [s.node for s in recorded] != kids:
            self.flag("scores", iteration, node, kids, [s.node for s in recorded], "the recorded children")
            return
        labels = self.edge_labels(node)
        if len(labels) != len(kids):  # the caller's kids are not the node's edges: no label to compare
            labels = [s.action for s in recorded]
        for s, k, label, terms_of_k in zip(recorded, kids, labels, terms):
            if s.action != label:
                self.flag("scores", iteration, k, label, s.action, f"recorded move of child {k} under node {node}")
                return
            # +infinity is recorded as null, all three terms together.
            exploit, explore, score = (None, None, None) if terms_of_k[2] == math.inf else terms_of_k
            # The score before its terms: an engine that gives a bare score has its terms
            # split by the tracer, so a wrong score is the number to name.
            pairs = (
                ("visits", self.visits[k], s.visits),
                ("value", self.value[k], s.value),
                ("prior", self.prior[k], s.prior),
                ("score", score, s.score),
                ("exploit", exploit, s.exploit),
                ("explore", explore, s.explore),
            )
            for name, want, got in pairs:
                if not close_enough(want, got):
                    if name == "score":
                        self._wrong_scores(recorded, kids, terms, iteration, node, k)
                    else:
                        self.flag("scores", iteration, k, want, got, f"recorded {name} of child {k} under node {node}")
                    return

    def _wrong_scores(self, recorded: tuple[Score, ...], kids: list[int], terms: list[tuple[float, float, float]], iteration: int, node: int, k: int) -> None:
        """A recorded score that is not the declared formula's: flagged with the mistakes whose
        formula gives every recorded score of the step (named when the trace is read)."""
        name = self.options.policy_name
        want, got = terms[kids.index(k)][2], recorded[kids.index(k)].score
        shown = [f"{s.node}: {_shown(s.score)}" for s in recorded]
        said = f"the engine scored child {k} at node {node} (N = {self.visits[node]}) {_shown(got)}, but {name} under the declared options gives {_shown(want)}"
        self._note_causes(
            "scores", said, f"; recorded scores {', '.join(shown)}", score_causes(self.options, self._children_of(node, kids), [s.score for s in recorded])
        )
        self.flag("scores", iteration, k, None if want == math.inf else want, got, f"{said}; recorded scores {', '.join(shown)}")


def _shown(score: float | None) -> str:
    """A score as a student reads it (None and infinity: inf)."""
    return "inf" if score is None or score == math.inf else f"{score:.4g}"
