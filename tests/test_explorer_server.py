"""The served explorer: answers equal to the replayed tree folded alike, a server that binds
127.0.0.1 only, reads nothing but its own trace, answers bad requests with one JSON line and stops
cleanly; the CLI serves big traces and stops on Ctrl-C; a hostile trace runs nothing in Chromium.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_site_browser import CHROMIUM  # noqa: E402

from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.explorer import explorer_data  # noqa: E402
from mctsviz.explorer.probe import MOMENT_PROBE, Sight, follows  # noqa: E402
from mctsviz.explorer.served import ServedTrace, fold  # noqa: E402
from mctsviz.explorer.server import ExplorerServer  # noqa: E402
from mctsviz.games.explicit import ExplicitTree  # noqa: E402
from mctsviz.replay import Replay, TreeSnapshot  # noqa: E402
from mctsviz.seek import index_path, open_indexed  # noqa: E402
from mctsviz.testing import hostile_tree, recorded_search  # noqa: E402
from mctsviz.text.names import NodeNames  # noqa: E402
from mctsviz.text.numbers import format_exact  # noqa: E402
from mctsviz.trace.io import read_trace  # noqa: E402
from mctsviz.trace.writer import write_trace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _trace(folder: Path, game: Any = "tictactoe", **options: Any) -> Path:
    _, events = recorded_search(game, **options)
    return write_trace(folder / "run.jsonl", events)


@pytest.fixture(scope="module")
def ttt(tmp_path_factory):
    """A 400-iteration tic-tac-toe trace, served from a background thread, and its replay."""
    path = _trace(tmp_path_factory.mktemp("served"), iterations=400, seed=3)
    indexed = open_indexed(path)
    assert indexed is not None
    server = ExplorerServer(ServedTrace(indexed, budget=40))
    with indexed, server:
        yield server, Replay(read_trace(path))


@pytest.fixture(scope="module")
def dag(tmp_path_factory):
    """The same with transpositions: edges linked to nodes first created under another parent."""
    path = _trace(tmp_path_factory.mktemp("served-dag"), iterations=300, seed=3, transpositions=True)
    indexed = open_indexed(path)
    assert indexed is not None
    server = ExplorerServer(ServedTrace(indexed, budget=40))
    with indexed, server:
        yield server, Replay(read_trace(path))


def _get(server: ExplorerServer, target: str, *, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{server.port}")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _api_meta(server: ExplorerServer) -> dict[str, Any]:
    status, _, body = _get(server, "/api/meta")
    assert status == 200, body
    meta: dict[str, Any] = json.loads(body)
    return meta


def _api(server: ExplorerServer, query: str) -> dict[str, Any]:
    status, headers, body = _get(server, "/api/tree?" + query)
    assert status == 200, body
    assert headers["content-type"] == "application/json; charset=utf-8"
    answer: dict[str, Any] = json.loads(body)
    return answer


# -- what the API answers -------------------------------------------------------------------


def _reference_fold(tree: TreeSnapshot, final: TreeSnapshot, root: int, budget: int) -> list[int]:
    """Best first by final visits, then by id, written the slow and obvious way."""
    taken: list[int] = []
    frontier = {root}
    while frontier and len(taken) < budget:
        best = min(frontier, key=lambda x: (-final.visits(x), x))
        frontier.remove(best)
        taken.append(best)
        frontier.update(c for c in tree.children_ids(best) if tree.node(c).parent == best)
    return taken


def _way(tree: TreeSnapshot, node: int) -> list[int]:
    chain = [node]
    while chain[-1]:
        chain.append(tree.node(chain[-1]).parent)
    return chain


def _resolved(record: dict[str, Any], strings: list[str]) -> dict[str, Any]:
    """An iteration record with its string indexes replaced by the texts (tables differ per answer)."""

    def rows(rs: list[list[int]]) -> list[list[Any]]:
        return [[r[0], *(strings[x] for x in r[1:8]), r[8], r[9]] for r in rs]

    def choice(step: list[Any]) -> list[Any]:
        return [step[0], strings[step[1]], step[2], strings[step[3]], rows(step[4])]

    return {
        "path": record["path"],
        "new": record["new"],
        "sim": record["sim"],
        "steps": [choice(s) for s in record["steps"]],
        "exp": choice(record["exp"]) if record["exp"] else None,
        "up": [[u[0], u[1], strings[u[2]], strings[u[3]], u[4], strings[u[5]]] for u in record["up"]],
        "text": [strings[t] for t in record["text"]],
    }


def _expected(rp: Replay, iteration: int, phase: str, root: int, budget: int, pins: tuple[int, ...] = ()) -> set[int]:
    """The nodes an answer draws: the fold, and the way from ``root`` to each pinned node under it
    (the path, the new nodes from the expansion on, and ``pins``) that exists."""
    tree = rp.snapshot(iteration, phase)
    # Ranked by the visits after the iteration: the same nodes in its four phases.
    expected = set(_reference_fold(tree, rp.snapshot(iteration, "backprop"), root, budget))
    pinned = list(pins)
    if iteration:
        events = rp.events(iteration)
        pinned += events.select.path
        if phase != "select":
            pinned += [c.node for c in events.expand.children if not c.existing] + [events.simulate.node]
    for node in pinned:
        way = _way(tree, node) if node < len(tree) else []
        if root in way:
            expected.update(way[: way.index(root) + 1])
    return expected


@pytest.mark.parametrize(("trace", "iteration"), [("ttt", 0), ("ttt", 1), ("ttt", 2), ("ttt", 57), ("ttt", 199), ("ttt", 400), ("dag", 150), ("dag", 300)])
@pytest.mark.parametrize("phase", ["select", "expand", "simulate", "backprop"])
def test_the_answer_is_the_replayed_tree_folded_alike_with_the_files_texts(request, trace, iteration, phase):
    server, rp = request.getfixturevalue(trace)
    answer = _api(server, f"i={iteration}&p={phase}")
    phase = phase if iteration else "backprop"
    tree = rp.snapshot(iteration, phase)
    assert (answer["iteration"], answer["phase"], answer["count"]) == (iteration, phase, len(tree))
    expected = _expected(rp, iteration, phase, 0, 40)
    nodes, drawn = answer["nodes"], answer["drawn"]
    assert nodes["id"][:drawn] == sorted(expected)
    strings = answer["strings"]
    names = NodeNames.of(rp)
    for node, stats, more, name in zip(nodes["id"], nodes["stats"], nodes["more"], nodes["name"]):
        assert stats[0] == tree.visits(node) and strings[stats[1]] == format_exact(tree.value(node))
        assert more[0] == sum(1 for c in tree.children_ids(node) if tree.node(c).parent == node and c not in expected)
        assert name == names(node)
    links = sorted([n, c, 0] for n in expected for c in tree.children_ids(n) if tree.node(c).parent != n and c in expected)
    assert sorted(answer["links"]) == links and (trace == "ttt" or iteration < 200 or links)
    # Every node the panel names is in the answer, and the record is the one-file explorer's.
    listed = set(nodes["id"])
    if iteration:
        offline = explorer_data(rp)
        record = answer["iter"]
        assert _resolved(record, strings) == _resolved(offline["iters"][iteration - 1], offline["strings"])
        assert {r[0] for s in record["steps"] for r in s[4]} <= listed and set(record["path"]) <= listed
    else:
        assert answer["iter"] is None


def test_requests_at_once_get_the_answers_they_get_one_by_one(tmp_path):
    path = _trace(tmp_path, iterations=3100, seed=6)
    indexed = open_indexed(path, every=1024)
    assert indexed is not None
    with indexed, ExplorerServer(ServedTrace(indexed, budget=30)) as server:
        queries = [f"i={k}&p={p}" for k in (3, 3090, 1500, 1501, 700, 2600, 2100) for p in ("select", "backprop")]
        alone = [_api(server, q) for q in queries]
        # One open trace that each answer moves (checkpoints, a reader): the lock keeps them apart.
        with ThreadPoolExecutor(max_workers=6) as pool:
            together = list(pool.map(lambda q: _api(server, q), queries * 3))
    assert together == alone * 3


def test_a_subtree_an_opened_fold_and_a_pinned_node(ttt):
    server, rp = ttt
    tree, final = rp.snapshot(300), rp.final()
    child = max(tree.children_ids(0), key=lambda c: (tree.visits(c), -c))
    sub = _api(server, f"i=300&node={child}&n=7")
    assert sub["root"] == child and sub["nodes"]["id"][: sub["drawn"]] == sorted(_expected(rp, 300, "backprop", child, 7))
    # A node deep in a fold is drawn with the way down to it; a fold opened adds its subtree.
    deep = max(range(len(tree)), key=lambda n: (len(_way(tree, n)), -n))
    pinned = _api(server, f"i=300&n=5&pin={deep}")
    assert pinned["nodes"]["id"][: pinned["drawn"]] == sorted(_expected(rp, 300, "backprop", 0, 5, (deep,)))
    opened = _api(server, f"i=300&n=5&open={child}")
    assert set(_reference_fold(tree, tree, child, 5)) <= set(opened["nodes"]["id"][: opened["drawn"]])
    # A node not born yet is named (the panel says it does not exist yet) but not drawn.
    later = _api(server, f"i=10&n=5&pin={len(final) - 1}")
    assert len(final) - 1 in later["nodes"]["id"][later["drawn"] :]


class _Counting:
    """A tree that counts the nodes whose children are asked for."""

    def __init__(self, tree: TreeSnapshot) -> None:
        self.tree, self.asked = tree, 0

    def children_ids(self, node: int) -> tuple[int, ...]:
        self.asked += 1
        return self.tree.children_ids(node)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tree, name)


def test_folding_looks_only_at_the_nodes_it_takes(ttt):
    _, rp = ttt
    tree = _Counting(rp.final())
    taken = fold(tree, 0, 25)  # type: ignore[arg-type]
    assert len(taken) == 25 and tree.asked == 25 < len(rp.final()) // 10


# -- what the server refuses ----------------------------------------------------------------


def test_it_binds_the_loopback_address_only(ttt):
    server, _ = ttt
    assert server.httpd.server_address[0] == "127.0.0.1" and server.url == f"http://127.0.0.1:{server.port}/"
    with pytest.raises(OSError):  # another loopback address of this machine: nothing listens there
        socket.create_connection(("127.0.0.2", server.port), timeout=2).close()


@pytest.mark.parametrize(
    "target",
    [
        "/../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/assets/../../../../etc/passwd",
        "/assets/%2e%2e/served.py",
        "/assets/mctsviz-explorer.js/../../server.py",
        "//etc/passwd",
        "/etc/passwd",
        "http://127.0.0.1/etc/passwd",
        "/api/../../etc/passwd",
        "/api/tree/../../../etc/passwd?i=1",
    ],
)
def test_no_path_reaches_the_file_system(ttt, target):
    server, _ = ttt
    status, headers, body = _get(server, target)
    assert 400 <= status < 500
    assert headers["content-type"] == "application/json; charset=utf-8" and headers["x-content-type-options"] == "nosniff"
    assert list(json.loads(body)) == ["error"] and body.count(b"\n") == 0
    assert b"root:" not in body and b"import" not in body


def test_a_file_named_in_the_query_changes_nothing(ttt):
    server, _ = ttt
    assert _api(server, "i=3&p=expand&trace=/etc/passwd&path=../../etc/passwd") == _api(server, "i=3&p=expand")


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("", 400),
        ("p=select", 400),
        ("i=", 400),
        ("i=-1", 400),
        ("i=1.5", 400),
        ("i=abc", 400),
        ("i=401", 400),
        ("i=99999999999999999999", 400),
        ("i=1&i=2", 400),
        ("i=1&p=start", 400),
        ("i=1&p=<script>", 400),
        ("i=1&n=0", 400),
        ("i=1&n=2001", 400),
        ("i=1&n=1000000000", 400),
        ("i=1&node=100000", 400),
        ("i=1&node=300", 400),  # a node not born by iteration 1
        ("i=1&open=a", 400),
        ("i=1&pin=1,2,3,4,5,6,7,8,9", 400),
        ("i=1&open=" + ",".join(["1"] * 65), 400),
        ("&".join(f"x{i}=1" for i in range(40)), 400),
    ],
)
def test_bad_queries_get_a_4xx_with_one_line_of_json(ttt, query, status):
    server, _ = ttt
    got, headers, body = _get(server, "/api/tree?" + query)
    assert got == status, body
    message = json.loads(body)["error"]
    assert message and "\n" not in message and "Traceback" not in message
    assert headers["x-content-type-options"] == "nosniff"


def test_other_methods_hosts_and_garbage_are_refused(ttt):
    server, _ = ttt
    assert _get(server, "/", method="POST")[0] == 405
    assert _get(server, "/api/meta", method="DELETE")[0] == 405
    assert _get(server, "/", host="evil.example:80")[0] == 403  # DNS rebinding
    assert _get(server, "/", host=f"localhost:{server.port}")[0] == 200
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"NOT A REQUEST\r\n\r\n")
        reply = b""
        while chunk := raw.recv(65536):  # the server closes the connection after it
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 400 " in head.split(b"\r\n")[0] and list(json.loads(body)) == ["error"]


def test_the_page_and_assets_have_their_types_and_a_strict_policy(ttt):
    server, _ = ttt
    status, headers, body = _get(server, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "unsafe-inline" not in policy and headers["x-content-type-options"] == "nosniff"
    assert b'data-mvx-api="api/"' in body
    status, headers, script = _get(server, "/assets/mctsviz-explorer.js")
    assert status == 200 and headers["content-type"] == "text/javascript; charset=utf-8"
    assert script == (ROOT / "mctsviz/explorer/assets/mctsviz-explorer.js").read_bytes()
    meta = json.loads(_get(server, "/api/meta")[2])
    assert meta["iterations"] == 400 and meta["budget"] == 40 and meta["count"] > 100


def test_it_stops_cleanly_and_frees_its_port(tmp_path):
    path = _trace(tmp_path, iterations=30, seed=1)
    indexed = open_indexed(path)
    assert indexed is not None
    with indexed:
        server = ExplorerServer(ServedTrace(indexed))
        server.start()
        thread = server._thread
        assert thread is not None and thread.is_alive()
        with pytest.raises(MctsvizError, match="cannot serve on 127.0.0.1"):  # the port is taken: one line, no traceback
            ExplorerServer(ServedTrace(indexed), server.port)
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=5)  # a browser's idle keep-alive connection
        assert _get(server, "/api/tree?i=30")[0] == 200
        server.stop()
        idle.close()
        assert not thread.is_alive()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
        again = ExplorerServer(ServedTrace(indexed), server.port)  # the port is free again
        again.close()


def test_damage_found_in_the_trace_while_serving_is_a_500_with_one_line(tmp_path):
    path = _trace(tmp_path, iterations=2100, seed=4)
    indexed = open_indexed(path, every=1024, on_warning=lambda message: None)
    assert indexed is not None
    with indexed, ExplorerServer(ServedTrace(indexed)) as server:
        data = bytearray(path.read_bytes())
        data[3000:6000] = b"#" * 3000  # early iterations, read again for a jump back from the end
        path.write_bytes(bytes(data))
        status, _, body = _get(server, "/api/tree?i=5")
        assert status == 500 and body.count(b"\n") == 0 and "Traceback" not in json.loads(body)["error"]
        assert _get(server, "/api/tree?i=2100")[0] == 200  # the server goes on


# -- the command ----------------------------------------------------------------------------


def test_view_serves_on_a_fixed_port_or_the_next_free_one(tmp_path):
    from mctsviz.explorer.server import DEFAULT_PORT

    path = _trace(tmp_path, iterations=20, seed=2)
    indexed = open_indexed(path)
    assert indexed is not None
    with indexed:
        served = ServedTrace(indexed)
        first = ExplorerServer(served, DEFAULT_PORT, next_free=True)
        try:
            # A second run while the first still serves: the next free port, not a failure.
            second = ExplorerServer(served, first.port, next_free=True)
            try:
                assert first.port >= DEFAULT_PORT and second.port > first.port
            finally:
                second.close()
            # Without next_free (an explicit --port), a taken port is one clear error.
            with pytest.raises(MctsvizError, match=f"cannot serve on 127.0.0.1:{first.port}"):
                ExplorerServer(served, first.port)
        finally:
            first.close()


def test_view_writes_one_file_for_a_small_trace_and_serves_an_indexed_one_until_ctrl_c(tmp_path, capsys):
    path = _trace(tmp_path, iterations=50, seed=2)
    assert main(["view", str(path), "-o", str(tmp_path / "run.html"), "--no-progress"]) == 0
    assert (tmp_path / "run.html").is_file() and not index_path(path).exists()
    with pytest.raises(SystemExit) as bad_port:
        main(["view", str(path), "--port", "99999"])
    assert bad_port.value.code == 2 and "--port" in capsys.readouterr().err
    open_indexed(path).close()  # an index: view serves without --serve
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mctsviz", "view", str(path), "--no-browser", "-k", "7", "--phase", "expand"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"serving {path} at http://127.0.0.1:") and line.rstrip().endswith("/ (Ctrl-C stops)")
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/")
        page = connection.getresponse().read()
        assert b'data-mvx-iteration="7" data-mvx-phase="expand"' in page
        connection.close()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and out.strip() == "stopped" and "Traceback" not in err


# -- in a browser ----------------------------------------------------------------------------


browser = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")


def _moment(page: Any) -> str:
    page.wait_for_function("() => { const e = document.querySelector('.mvx'); return e.hasAttribute('data-mvx-ready') && !e.hasAttribute('aria-busy'); }")
    return str(page.get_attribute(".mvx", "data-mvx-moment"))


@pytest.mark.browser
@browser
def test_a_served_hostile_trace_steps_and_runs_nothing(tmp_path, tab):
    path = _trace(tmp_path, ExplicitTree.from_dict(hostile_tree()), iterations=6, c=2.0, expand="second-visit")
    rp = Replay(read_trace(path))
    names = NodeNames.of(rp)
    indexed = open_indexed(path)
    assert indexed is not None
    with indexed, ExplorerServer(ServedTrace(indexed, title="<img src=x onerror=alert(1)></title>{{ x }}")) as server:
        page = tab.page
        page.goto(server.url + "#i=3&p=select")
        assert _moment(page) == "3:select"
        drawn = page.locator(".mvx-node").count()
        assert drawn == len(rp.snapshot(3, "select"))
        for key, moment in [
            ("ArrowRight", "3:expand"),
            ("ArrowRight", "3:simulate"),
            ("ArrowRight", "3:backprop"),
            ("ArrowRight", "4:select"),
            ("ArrowLeft", "3:backprop"),
        ]:
            page.keyboard.press(key)
            assert _moment(page) == moment
            k, phase = moment.split(":")
            assert page.locator(".mvx-node").count() == len(rp.snapshot(int(k), phase))
        # Each step fetched the moment after it ahead, in its direction: 4:expand, never shown, after the step to 4:select.
        page.wait_for_function("() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('/api/tree?i=4&p=expand&n=250'))")
        page.keyboard.press("End")
        assert _moment(page) == "6:backprop"
        for node in range(1, len(rp.final())):
            page.evaluate(f"document.querySelector('.mvx').mvx.select({node})")
            page.wait_for_function(
                f"() => document.querySelector('.mvx-node-name') && document.querySelector('.mvx-node-name').textContent === {json.dumps(names(node))}"
            )
        assert "<img src=x onerror=alert(1)>" in page.locator("h1").inner_text()
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate("document.querySelectorAll('img, iframe, object, [onerror], [onclick]').length") == 0
        assert page.url.startswith(server.url)
        problems = [p for p in tab.problems if not p.startswith(f"outside request: {server.url}")]
        assert tab.dialogs == [] and problems == []


@pytest.mark.browser
@browser
def test_a_fold_opens_from_the_server_and_the_scrubber_jumps(ttt, tab):
    server, rp = ttt
    page = tab.page
    page.goto(server.url + "#i=350&p=backprop")
    assert _moment(page) == "350:backprop"
    before = page.locator(".mvx-node").count()
    fold_parent = page.locator(".mvx-fold").first.get_attribute("data-parent")
    page.locator(".mvx-fold").first.dispatch_event("click")
    page.wait_for_function(f"() => document.querySelectorAll('.mvx-node').length > {before}")
    tree = rp.snapshot(350)
    kids = [c for c in tree.children_ids(int(str(fold_parent))) if tree.node(c).parent == int(str(fold_parent))]
    assert all(page.locator(f".mvx-node[data-node='{c}']").count() == 1 for c in kids)
    page.evaluate("() => { const s = document.querySelector('.mvx-scrubber'); s.value = '120'; s.dispatchEvent(new Event('input')); }")
    assert _moment(page) == "120:backprop"
    page.fill(".mvx-jump", "77")  # the field names an iteration: Enter goes there
    page.press(".mvx-jump", "Enter")
    assert _moment(page) == "77:backprop"
    page.fill(".mvx-jump", "120")
    page.press(".mvx-jump", "Enter")
    assert _moment(page) == "120:backprop"
    assert page.locator(".mvx-node").count() >= min(40, len(rp.snapshot(120)))
    assert [p for p in tab.problems if not p.startswith(f"outside request: {server.url}")] == []


_SCREEN_PLACE = """
(node) => { const r = document.querySelector(`.mvx-node[data-node='${node}'] rect`).getBoundingClientRect(); return [r.left, r.top]; }
"""


@pytest.mark.browser
@browser
def test_served_keys_after_enter_folds_that_keep_their_place_and_a_view_that_follows(ttt, chromium):
    server, rp = ttt
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    try:
        page = context.new_page()
        page.goto(server.url + "#i=350&p=backprop")
        assert _moment(page) == "350:backprop"
        # After Enter in the iteration field, the arrow keys step again.
        page.fill(".mvx-jump", "1")
        page.press(".mvx-jump", "Enter")
        assert _moment(page) == "1:backprop"
        page.keyboard.press("ArrowRight")
        assert _moment(page) == "2:select"
        page.keyboard.press("ArrowLeft")
        assert _moment(page) == "1:backprop"
        # A jump to iteration 1 shows its nodes on the stage (it once showed an empty one).
        events = rp.events(1)
        sight = Sight(page.evaluate(MOMENT_PROBE))
        assert follows(sight, events.select.path[-1], [c.node for c in events.expand.children], events.simulate.node) == []
        for k in (5, 120, 399):
            page.fill(".mvx-jump", str(k))
            page.press(".mvx-jump", "Enter")
            assert _moment(page) == f"{k}:backprop"
            events = rp.events(k)
            sight = Sight(page.evaluate(MOMENT_PROBE))
            assert follows(sight, events.select.path[-1], [c.node for c in events.expand.children], events.simulate.node) == []
            assert sight.smallest_label >= 10 and sight.overflowing == 0
        # Each node's box says its short N · W, as the server wrote it.
        answer = _api(server, "i=399&p=backprop&n=40")
        box = answer["nodes"]["stats"]
        shown = page.eval_on_selector_all(
            ".mvx-node:not(.mvx-hidden)", "gs => gs.map(g => [+g.getAttribute('data-node'), g.querySelector('.mvx-stats').textContent])"
        )
        ids = answer["nodes"]["id"]
        assert shown and all(text == answer["strings"][box[ids.index(node)][4]] for node, text in shown), shown
        # Opening "+n more" keeps its parent where it was on screen.
        fold = page.locator(".mvx-fold:not(.mvx-hidden)").first
        parent = int(str(fold.get_attribute("data-parent")))
        where = page.evaluate(_SCREEN_PLACE, parent)
        before = page.locator(".mvx-node").count()
        fold.dispatch_event("click")
        page.wait_for_function(f"() => document.querySelectorAll('.mvx-node').length > {before}")
        _moment(page)
        after = page.evaluate(_SCREEN_PLACE, parent)
        assert abs(after[0] - where[0]) < 1 and abs(after[1] - where[1]) < 1, (where, after)
        # Play at 100 iterations a second shows whole iterations and gets on.
        page.fill(".mvx-jump", "10")
        page.press(".mvx-jump", "Enter")
        assert _moment(page) == "10:backprop"
        page.select_option(".mvx-speed", label="100 iterations/s")
        page.click(".mvx-play")
        page.wait_for_function("() => +document.querySelector('.mvx').getAttribute('data-iteration') >= 60", timeout=10000)
        page.click(".mvx-play")
        moment = _moment(page)
        assert moment.endswith(":backprop")
        page.select_option(".mvx-speed", label="to the end")
        page.click(".mvx-play")
        assert _moment(page) == "400:backprop"
        # Boards, drawn from the server's positions.
        page.locator(".mvx").focus()
        page.keyboard.press("b")
        cells = page.eval_on_selector_all(".mvx-node:not(.mvx-hidden)", "gs => gs.map(g => g.querySelectorAll('.mvx-board .mvx-cell').length)")
        assert cells and set(cells) == {9}
    finally:
        context.close()


def _glyphs(codes: str, boards: dict[str, Any]) -> list[str]:
    return [boards["glyphs"][boards["codes"].index(ch)] for ch in codes]


def test_served_boards_are_the_one_files_boards(ttt):
    server, rp = ttt
    offline = explorer_data(rp)["boards"]
    assert _api_meta(server)["boards"] == {"rows": 3, "cols": 3}
    for query in ("i=200&p=expand", "i=3&p=select", "i=400&p=backprop&n=90"):
        answer = _api(server, query)
        boards = answer["boards"]
        assert len(boards["cells"]) == len(answer["nodes"]["id"])
        for node, cells, moved in zip(answer["nodes"]["id"], boards["cells"], boards["moved"]):
            assert _glyphs(cells, boards) == _glyphs(offline["cells"][node], offline) and moved == offline["moved"][node]
