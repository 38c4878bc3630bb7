"""Policy/value networks: gradients, network files as untrusted input, self-play training."""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.nets.encoding import ENCODINGS, encoding_for
from mctsviz.nets.evaluator import NetworkEvaluator
from mctsviz.nets.netfile import MAX_FILE_BYTES, load_network, network_bytes, save_network
from mctsviz.nets.network import Adam, gradients, init_network, loss
from mctsviz.search import search
from mctsviz.selfplay import TrainingOptions, train

TICTACTOE = ENCODINGS["tictactoe-planes"]
TINY = TrainingOptions(games=6, games_per_generation=3, iterations=8, hidden=(8,), steps=5, batch=8, eval_games=2, seed=3)


def _batch(rng: np.random.Generator, size: int = 5):
    """Random positions: features, legal masks with at least one move, targets on the legal moves."""
    x = rng.integers(0, 2, (size, 18)).astype(float)
    legal = rng.random((size, 9)) < 0.6
    legal[:, 0] = True
    pi = rng.random((size, 9)) * legal
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 0.0, 1.0], size)
    return x, legal, pi, z


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    net = init_network(18, (6, 5), 9, rng)
    # Larger head weights than at the start, so every term of the loss has a sizeable slope.
    net.policy[0][:] = rng.normal(0, 0.5, net.policy[0].shape)
    net.value[0][:] = rng.normal(0, 0.5, net.value[0].shape)
    x, legal, pi, z = _batch(rng)
    _, grads = gradients(net, x, legal, pi, z, decay=0.01)
    step = 1e-6
    worst = 0.0
    for (name, weight), grad in zip(net.arrays().items(), grads.arrays().values()):
        assert grad.shape == weight.shape, name
        for index in np.ndindex(weight.shape):
            keep = weight[index]
            weight[index] = keep + step
            up = loss(net, x, legal, pi, z, decay=0.01).total
            weight[index] = keep - step
            down = loss(net, x, legal, pi, z, decay=0.01).total
            weight[index] = keep
            numeric = (up - down) / (2 * step)
            worst = max(worst, abs(numeric - grad[index]))
    assert worst < 1e-6


def test_policy_is_zero_on_illegal_moves_and_adam_lowers_the_loss():
    rng = np.random.default_rng(1)
    net = init_network(18, (16,), 9, rng)
    x, legal, pi, z = _batch(rng, 32)
    p = net.predict(x, legal)[0]
    assert np.all(p[~legal] == 0) and np.allclose(p.sum(axis=1), 1)
    before = loss(net, x, legal, pi, z).total
    optimizer = Adam(net, rate=0.01)
    for _ in range(50):
        optimizer.step(net, gradients(net, x, legal, pi, z)[1])
    assert loss(net, x, legal, pi, z).total < before * 0.8


def test_symmetries_map_a_position_to_its_rotations():
    game = games.load("tictactoe")
    state = game.next_state(game.initial_state(), 0)  # X in the top-left corner
    x, legal, _ = TICTACTOE.features(state)
    moved = {tuple(TICTACTOE.transform(x[None], legal[None], np.zeros((1, 9)), perm)[0][0, 9:]) for perm in TICTACTOE.symmetries}
    # The opponent's plane (X, as O is to move) has X in each of the four corners, nowhere else.
    assert sorted(tuple(np.flatnonzero(m)) for m in moved) == [(0,), (2,), (6,), (8,)]
    assert len(TICTACTOE.symmetries) == 8


def test_network_file_round_trips_byte_for_byte(tmp_path):
    net = init_network(18, (8,), 9, np.random.default_rng(2))
    digest = save_network(tmp_path / "a.npz", net, TICTACTOE, {"seed": 2})
    loaded = load_network(tmp_path / "a.npz")
    assert loaded.sha256 == digest == hashlib.sha256((tmp_path / "a.npz").read_bytes()).hexdigest()
    assert loaded.training == {"seed": 2}
    for (name, a), b in zip(net.arrays().items(), loaded.network.arrays().values()):
        assert np.array_equal(a.astype(np.float32), b), name
    assert network_bytes(loaded.network, TICTACTOE, {"seed": 2}) == (tmp_path / "a.npz").read_bytes()
    # numpy reads it without pickles
    with np.load(tmp_path / "a.npz", allow_pickle=False) as archive:
        assert archive["trunk0.w"].shape == (18, 8)


def _rezip(data: bytes, change) -> bytes:
    """The archive ``data`` with its members changed by ``change(name, bytes) -> bytes | None``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = change(info.filename, src.read(info))
            if body is not None:
                dst.writestr(info.filename, body)
    return out.getvalue()


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=True)
    return buffer.getvalue()


DAMAGES = {
    "truncated": lambda d: d[: len(d) // 2],
    "not a zip": lambda d: b"hello" * 100,
    "missing member": lambda d: _rezip(d, lambda n, b: None if n == "value.b.npy" else b),
    "wrong shape": lambda d: _rezip(d, lambda n, b: _npy(np.zeros((3, 3), "<f4")) if n == "trunk0.w.npy" else b),
    "huge shape": lambda d: _rezip(d, lambda n, b: b[:10] + b[10:].replace(b"(18, 8)", b"(99999999999, 8)") if n == "trunk0.w.npy" else b),
    "pickled object": lambda d: _rezip(d, lambda n, b: _npy(np.array([{"a": 1}], dtype=object)) if n == "policy.b.npy" else b),
    "nan weight": lambda d: _rezip(d, lambda n, b: _npy(np.full(8, np.nan, "<f4")) if n == "trunk0.b.npy" else b),
    "huge hidden": lambda d: _rezip(d, lambda n, b: _npy(np.frombuffer(b'{"format": "mctsviz-network", "version": 1, "game": "tictactoe", '
                                                                          b'"encoding": "tictactoe-planes", "inputs": 18, "hidden": [100000000], '
                                                                          b'"actions": 9}', np.uint8)) if n == "meta.npy" else b),
}  # fmt: skip


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_network_file_gets_one_line(tmp_path, damage, capsys):
    from mctsviz.cli import main

    net = init_network(18, (8,), 9, np.random.default_rng(2))
    path = tmp_path / "bad.npz"
    path.write_bytes(DAMAGES[damage](network_bytes(net, TICTACTOE)))
    with pytest.raises(MctsvizError) as caught:
        load_network(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert main(["search", "tictactoe", "--iterations", "5", "--policy", "puct", "--evaluator", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "network file" in err and "Traceback" not in err


def test_an_oversized_network_file_is_refused_before_it_is_read(tmp_path, capsys):
    from mctsviz.cli import main

    path = tmp_path / "big.npz"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    assert main(["search", "tictactoe", "--iterations", "5", "--evaluator", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than" in err


def test_evaluator_gives_priors_over_legal_moves_and_values_for_the_mover():
    game = games.load("tictactoe")
    net = init_network(18, (8,), 9, np.random.default_rng(4))
    net.value[1][:] = 2.0  # a network sure the player to move wins
    evaluate = NetworkEvaluator(net, TICTACTOE)
    state = game.next_state(game.initial_state(), 4)  # O to move
    priors, values = evaluate(state)
    assert sorted(priors) == [0, 1, 2, 3, 5, 6, 7, 8] and abs(sum(priors.values()) - 1) < 1e-12
    assert values[1] > 0.9 and values[0] == -values[1]
    with pytest.raises(MctsvizError, match="cannot read the state"):
        evaluate("not a state")


def test_a_search_records_the_network_file_with_its_checksum(tmp_path):
    path = tmp_path / "net.npz"
    digest = save_network(path, init_network(18, (8,), 9, np.random.default_rng(5)), TICTACTOE)
    result = search(games.load("tictactoe"), iterations=30, policy="puct", expand="all", evaluator=str(path))
    assert result.options.evaluator == f"{path}#sha256={digest}"
    assert abs(sum(c.prior for c in result.children) - 1) < 1e-9
    # the recorded name loads the same file, and refuses another
    search(games.load("tictactoe"), iterations=5, policy="puct", evaluator=result.options.evaluator)
    save_network(path, init_network(18, (8,), 9, np.random.default_rng(6)), TICTACTOE)
    with pytest.raises(MctsvizError, match="differs from the one recorded"):
        search(games.load("tictactoe"), iterations=5, policy="puct", evaluator=result.options.evaluator)


def test_training_is_deterministic_for_a_seed(tmp_path):
    first, record = train(TINY)
    second, again = train(TINY)
    assert network_bytes(first, TICTACTOE) == network_bytes(second, TICTACTOE)
    assert [g.scores for g in record.generations] == [g.scores for g in again.generations]
    assert [g.loss for g in record.generations] == [g.loss for g in again.generations]
    assert [g.games for g in record.generations] == [0, 3, 6]
    other, _ = train(TrainingOptions(**{**{f: getattr(TINY, f) for f in TINY.__struct_fields__}, "seed": 4}))
    assert network_bytes(other, TICTACTOE) != network_bytes(first, TICTACTOE)


def test_no_encoding_for_a_game_is_one_line():
    with pytest.raises(MctsvizError, match="no network encoding for the game 'nim'"):
        encoding_for("nim")


def test_train_command_writes_a_network_a_record_and_a_curve(tmp_path, capsys):
    from mctsviz.cli import main
    from mctsviz.selfplay import read_record

    net = tmp_path / "net.npz"
    args = ["train", "tictactoe", "-o", str(net), "--games", "4", "--generation-games", "2", "--iterations", "6", "--hidden", "8", "--steps", "3"]
    assert main([*args, "--eval-games", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"evaluator={net}" in out and "against minimax" in out
    record = read_record(tmp_path / "net.training.json")
    assert [g.generation for g in record.generations] == [0, 1, 2]
    assert record.generations[0].loss is None and record.generations[-1].loss > 0
    assert record.network_sha256 == load_network(net).sha256
    assert set(record.generations[-1].scores) == {"random", "minimax"}
    assert main(["render", "training", str(tmp_path / "net.training.json"), "-o", str(tmp_path / "curve.svg")]) == 0
    assert (tmp_path / "curve.svg").read_text().count("<path") > 5
    # the network plays in a match from its file
    assert main(["match", f"mcts:policy=puct,expand=all,iterations=6,evaluator={net}", "random", "--games", "2", "--no-progress"]) == 0


def test_a_damaged_training_record_gets_one_line(tmp_path, capsys):
    from mctsviz.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "mctsviz-training", "version": 1, "options": {"games": "many"}, "generations": []}')
    assert main(["render", "training", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a training record" in err


def test_plot_training_draws_on_the_axes_it_is_given():
    from mctsviz.render import new_figure, plot_training

    _, record = train(TINY)
    _, (ax,) = new_figure()
    assert plot_training(record, ax=ax) is ax
    assert [line.get_label() for line in ax.get_lines()][:2] == ["score against random", "score against minimax"]
    assert plot_training(record).figure is not ax.figure


def test_the_shipped_network_is_small_and_holds_minimax_to_draws():
    from mctsviz.nets import network_path
    from mctsviz.selfplay import NetPlayer, score_against

    assert network_path("net:tictactoe").stat().st_size < 8 << 10
    loaded = load_network("net:tictactoe")
    assert loaded.network.hidden == (32,) and loaded.training["options"]["games"] == 1000
    player = NetPlayer(NetworkEvaluator(loaded.network, TICTACTOE), {"iterations": 50, "policy": "puct", "c_puct": 1.5, "expand": "all"})
    # the target: no loss in 200 games against minimax (random ties), half of them as O
    score = score_against(games.load("tictactoe"), player, "minimax", 200, seed=7)
    assert score.losses == 0 and score.games == 200


def test_a_shipped_network_is_named_the_same_on_every_machine(tmp_path, capsys):
    from mctsviz.cli import main
    from mctsviz.verify import verify

    trace = tmp_path / "run.jsonl"
    args = ["search", "tictactoe", "--policy", "puct", "--expand", "all", "--iterations", "20", "--evaluator", "net:tictactoe", "--no-progress"]
    assert main([*args, "--trace", str(trace)]) == 0
    assert '"evaluator":"net:tictactoe#sha256=' in trace.read_text()
    assert verify(trace).ok and "network" not in verify(trace).not_checked
    capsys.readouterr()
    assert main(["search", "tictactoe", "--iterations", "5", "--evaluator", "net:chess"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "nim"], "no network encoding for the game 'nim'"),
        (["train", "tictactoe", "-o", "net.txt"], "must end in .npz"),
        (["train", "tictactoe", "-o", "n.npz", "--record", "n.npz"], "both be written to n.npz"),
        (["train", "tictactoe", "--hidden", "64,0"], "expected a whole number"),
    ],
)
def test_train_refuses_bad_input_in_one_line(args, message, capsys, tmp_path, monkeypatch):
    from mctsviz.cli import main

    monkeypatch.chdir(tmp_path)
    try:
        code = main(args)
    except SystemExit as exit:  # argparse's own errors
        code = exit.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not list(tmp_path.iterdir())


def test_a_network_path_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    with pytest.raises(MctsvizError, match="not a regular file"):
        load_network(fifo)
    with pytest.raises(MctsvizError, match="not a regular file"):
        from mctsviz.selfplay import read_record

        read_record(fifo)


def test_members_adding_up_past_the_limit_are_refused_before_they_are_read(tmp_path):
    from mctsviz.nets import netfile

    data = network_bytes(init_network(18, (8,), 9, np.random.default_rng(2)), TICTACTOE)
    padding = b"\0" * (MAX_FILE_BYTES // 4)  # compresses to almost nothing
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
        for i in range(5):
            dst.writestr(f"pad{i}.npy", padding)
    (tmp_path / "padded.npz").write_bytes(out.getvalue())
    assert len(out.getvalue()) < netfile.MAX_FILE_BYTES
    with pytest.raises(MctsvizError, match="bytes unpacked"):
        load_network(tmp_path / "padded.npz")
