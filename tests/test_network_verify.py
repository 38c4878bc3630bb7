"""verify recomputes a network evaluator's priors and values from the network file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mctsviz.cli import main
from mctsviz.nets.encoding import ENCODINGS
from mctsviz.nets.netfile import save_network
from mctsviz.nets.network import init_network
from mctsviz.verify import verify

TICTACTOE = ENCODINGS["tictactoe-planes"]


@pytest.fixture
def traced(tmp_path, monkeypatch):
    """A network file with opinionated priors and values, and a full trace searched with it."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(11)
    net = init_network(18, (8,), 9, rng)
    net.policy[0][:] = rng.normal(0, 1.0, net.policy[0].shape)
    net.value[0][:] = rng.normal(0, 1.0, net.value[0].shape)
    save_network("net.npz", net, TICTACTOE)
    # From a position with a mark: on the empty board the network's priors are uniform (no input, no signal).
    args = [
        "search",
        "tictactoe",
        "--state",
        "....X....",
        "--policy",
        "puct",
        "--expand",
        "all",
        "--iterations",
        "60",
        "--evaluator",
        "net.npz",
        "--no-progress",
    ]
    assert main([*args, "--trace", "run.jsonl"]) == 0
    return tmp_path / "run.jsonl"


def _events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_verify_recomputes_priors_and_values_from_the_network_file(traced):
    report = verify(traced)
    assert report.ok and "network" not in report.not_checked
    header = _events(traced)[0]
    assert header["options"]["evaluator"].startswith("net.npz#sha256=")


def test_a_value_the_network_does_not_give_is_flagged(traced):
    events = _events(traced)
    simulate = next(e for e in events if e["kind"] == "simulate" and e["method"] == "evaluator")
    # the same outcome for both players, so the backups stay the recorded ones' own sums
    simulate["returns"] = [round(simulate["returns"][0], 2), round(simulate["returns"][1], 2)]
    _write(traced, events)
    report = verify(traced)
    assert any(v.check == "simulation" and "network's values" in v.message for v in report.violations)


def test_a_prior_the_network_does_not_give_is_flagged(traced):
    events = _events(traced)
    # a new child's prior at the root, where no simulation records the priors: only the network
    # file can tell the right ones
    expand = next(e for e in events if e["kind"] == "expand")
    assert expand["parent"] == 0 and expand["children"][0]["prior"] != expand["children"][1]["prior"]
    expand["children"][0]["prior"], expand["children"][1]["prior"] = expand["children"][1]["prior"], expand["children"][0]["prior"]
    _write(traced, events)
    report = verify(traced)
    assert any(v.check == "prior" for v in report.violations)


def test_verify_refuses_another_network_file_in_one_line(traced, capsys):
    save_network("net.npz", init_network(18, (8,), 9, np.random.default_rng(12)), TICTACTOE)
    assert main(["verify", str(traced)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "differs from the one recorded" in err


def test_without_the_file_verify_says_what_it_did_not_check(traced):
    (traced.parent / "net.npz").unlink()
    report = verify(traced)
    assert report.ok and "net.npz is not here" in report.not_checked["network"]
