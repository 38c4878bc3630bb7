"""The replay scrubber's view in a real browser (Debian's chromium, headless), against the real widget.

No Jupyter runs here: a small stand-in for anywidget's model carries state between the ES
module in the page and the Python widget, as the kernel's comm would. What the view saves is
applied with ``set_state`` (as a front end's update is), what it sends goes to the widget's
message handler, and the widget's new state goes back to the page.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_site_browser import CHROMIUM  # noqa: E402

from mctsviz.render import notebook  # noqa: E402
from mctsviz.testing import recorded_replay  # noqa: E402

pytest.importorskip("anywidget")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"),
    pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed"),
]

SYNCED = ("iteration", "phase", "iterations", "phases", "svg", "position", "error")

# anywidget's model, as far as the view uses it: get, set, save_changes, send, on, off.
_MOUNT = """
async ([source, state]) => {
  window.saved = [];
  window.sent = [];
  const listeners = {};
  const pending = {};
  window.model = {
    get: (key) => state[key],
    set: (key, value) => { state[key] = value; pending[key] = value; },
    save_changes: () => { window.saved.push({ ...pending }); for (const key of Object.keys(pending)) delete pending[key]; },
    send: (message) => window.sent.push(message),
    on: (event, listener) => (listeners[event] ||= []).push(listener),
    off: (event, listener) => { listeners[event] = (listeners[event] || []).filter((f) => f !== listener); },
    update: (changes) => {
      for (const [key, value] of Object.entries(changes)) {
        if (JSON.stringify(state[key]) === JSON.stringify(value)) continue;
        state[key] = value;
        for (const listener of listeners["change:" + key] || []) listener();
      }
    },
    listenerCount: () => Object.values(listeners).reduce((n, list) => n + list.length, 0),
  };
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const widget = (await import(url)).default;
  const el = document.createElement("div");
  document.body.append(el);
  window.cleanup = widget.render({ model: window.model, el });
}
"""

_VIEW = """
() => {
  const tree = document.querySelector(".mctsviz-scrubber img");
  return {
    slider: [document.querySelector("input[type=range]").max, document.querySelector("input[type=range]").value],
    pressed: Array.from(document.querySelectorAll(".mctsviz-scrubber-phases button[aria-pressed=true]")).map((b) => b.textContent),
    position: document.querySelector(".mctsviz-scrubber-position").textContent,
    error: document.querySelector(".mctsviz-scrubber-error").textContent,
    src: tree.getAttribute("src"),
    loaded: tree.complete && tree.naturalWidth > 0,
    images: document.images.length,
  };
}
"""


def _state(widget) -> dict:
    return {name: getattr(widget, name) for name in SYNCED}


def _sync(page, widget) -> dict:
    """Apply what the view saved and sent to the widget, push the widget's state back; the view."""
    for changes in page.evaluate("() => window.saved.splice(0)"):
        widget.set_state(changes)
    for message in page.evaluate("() => window.sent.splice(0)"):
        widget._on_message(widget, message, [])
    page.evaluate("(state) => window.model.update(state)", _state(widget))
    page.wait_for_function("() => { const t = document.querySelector('.mctsviz-scrubber img'); return t.complete && t.naturalWidth > 0; }")
    return page.evaluate(_VIEW)


def _shows(view, widget) -> None:
    assert view["slider"] == [str(widget.iterations), str(widget.iteration)]
    assert view["pressed"] == [widget.phase]
    assert view["position"] == widget.position and view["error"] == ""
    assert view["src"].startswith("data:image/svg+xml;charset=utf-8,") and unquote(view["src"].split(",", 1)[1]) == widget.svg
    assert view["loaded"] and view["images"] == 1


def test_the_view_shows_the_widgets_frame_and_drives_it(tab):
    widget = notebook.ReplayScrubber(recorded_replay("tictactoe", iterations=30, seed=2), iteration=4, phase="select")
    page = tab.page
    page.goto("about:blank")
    page.evaluate(_MOUNT, [notebook.ReplayScrubber._esm, _state(widget)])
    view = _sync(page, widget)
    _shows(view, widget)

    page.click("button:text-is('next ▶')")
    assert page.evaluate("() => window.sent") == [{"type": "step", "delta": 1}]
    _shows(_sync(page, widget), widget)
    assert (widget.iteration, widget.phase) == (4, "expand")

    page.click("button:text-is('◀ prev')")
    page.click("button:text-is('◀ prev')")
    _shows(_sync(page, widget), widget)
    assert (widget.iteration, widget.phase) == (3, "backprop")

    page.click("button:text-is('simulate')")
    assert page.evaluate("() => window.saved") == [{"phase": "simulate"}]
    _shows(_sync(page, widget), widget)
    assert (widget.iteration, widget.phase) == (3, "simulate")

    slider = page.locator("input[type=range]")
    slider.focus()
    slider.fill("17")  # sets the value and fires input and change, as a drag that stops there
    assert page.evaluate("() => window.saved") == [{"iteration": 17}]
    _shows(_sync(page, widget), widget)
    assert (widget.iteration, widget.phase) == (17, "simulate")
    assert tab.problems == [] and tab.dialogs == []

    page.evaluate("() => window.cleanup()")
    assert page.evaluate("() => window.model.listenerCount()") == 0


def test_the_view_shows_text_as_text(tab):
    widget = notebook.ReplayScrubber(recorded_replay("tictactoe", iterations=5, seed=2), iteration=2)
    page = tab.page
    page.goto("about:blank")
    page.evaluate(_MOUNT, [notebook.ReplayScrubber._esm, _state(widget)])
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    page.evaluate("(text) => window.model.update({ position: text, error: text })", hostile)
    view = page.evaluate(_VIEW)
    assert view["position"] == hostile and view["error"] == hostile and view["images"] == 1
    # An SVG that held a script runs nothing: the view shows it as an image.
    page.evaluate('() => window.model.update({ svg: \'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(3)</script></svg>\' })')
    page.wait_for_function("() => { const t = document.querySelector('.mctsviz-scrubber img'); return t.complete && t.naturalWidth === 10; }")
    assert tab.dialogs == [] and tab.problems == []
