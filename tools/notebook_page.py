"""Run the example notebook and write its docs page: ``python tools/notebook_page.py``.

``docs/examples/notebook.ipynb`` is committed with its outputs, and ``docs/notebooks.md`` shows
its cells and outputs between two marker lines (the rest of that page is written by hand). This
script runs the notebook in a fresh kernel (nbclient; this checkout first on the kernel's path),
takes out what varies between runs (a widget's model id, memory addresses, timings, the
Python version), writes it back, and regenerates the page's part from it. ``tests/test_notebook_docs.py`` checks
that the page matches the committed notebook, and that running the notebook again gives the
committed outputs.

The conversion is small and deterministic: Markdown cells as they are (headings two levels down,
under the page's "An example notebook"), code cells in fenced blocks, text outputs in fenced blocks (escaped
there by Markdown), HTML and SVG outputs inline. Those come from mctsviz's own display
functions, which escape every string from a trace; a widget shows the frame it carries for
pages without a kernel. ``python tools/notebook_page.py --page-only`` rewrites only the page.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's mctsviz, as in the kernel that runs the notebook
NOTEBOOK = ROOT / "docs" / "examples" / "notebook.ipynb"
PAGE = ROOT / "docs" / "notebooks.md"
BEGIN = "<!-- notebook: begin (written by tools/notebook_page.py from docs/examples/notebook.ipynb: edit the notebook, not this part) -->"
END = "<!-- notebook: end -->"

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# A plain-text repr's memory address ("<graphviz.graphs.Digraph at 0x7f...>").
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")
#: Output kinds in the order the page prefers them.
_PREFERRED = ("text/html", "image/svg+xml", "image/png", "text/plain")
# pymdownx.snippets includes a file wherever a line holds this marker, even inside a code block.
_SNIPPET = re.compile(r"-+8<-+")
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")


# -- running ------------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    """The versions the outputs depend on: mctsviz (in provenance), Graphviz and matplotlib (their SVG)."""
    import matplotlib

    import mctsviz

    try:
        done = subprocess.run(["dot", "-V"], capture_output=True, text=True, check=True)
        dot = (done.stderr or done.stdout).strip()
    except (OSError, subprocess.CalledProcessError):
        dot = "missing"
    return {"mctsviz": mctsviz.__version__, "graphviz": dot, "matplotlib": matplotlib.__version__}


def execute(notebook: Any, timeout: int = 300) -> Any:
    """A copy of ``notebook`` run from a clean start in a fresh Python kernel (see :func:`normalise`)."""
    from nbclient import NotebookClient

    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute(env=env)
    return notebook


def normalise(notebook: Any) -> Any:
    """``notebook`` (changed in place) with what differs between two runs taken out.

    Its metadata becomes the kernel's name and the versions the outputs depend on; memory
    addresses leave plain-text reprs; a widget's view (a random model id whose state lives
    only in the kernel that made it) leaves its output, which keeps the frame the widget
    carries for front ends without a kernel.
    """
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "mctsviz": versions(),
    }
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            data.pop(WIDGET_MIME, None)
            if "text/plain" in data:
                data["text/plain"] = _ADDRESS.sub(">", data["text/plain"])
    return notebook


# -- the page -----------------------------------------------------------------------------------


def notebook_markdown(notebook: Any) -> str:
    """The cells and outputs of ``notebook`` as Markdown for MkDocs.

    Raises:
        ValueError: a cell raised an error, or a cell or output holds a snippet marker.
    """
    parts: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(_demote_headings(cell.source.strip()))
        elif cell.cell_type == "code":
            parts.append(_fence(cell.source.strip(), "python"))
            parts.extend(_output(output) for output in cell.outputs)
    text = "\n\n".join(part for part in parts if part) + "\n"
    if _SNIPPET.search(text):
        raise ValueError("the notebook holds a snippet marker (--8<--), which MkDocs would replace by a file")
    return text


def _output(output: Any) -> str:
    kind = output.output_type
    if kind == "stream":
        return _fence(output.text.rstrip("\n"), "text")
    if kind == "error":
        raise ValueError(f"a cell raised {output.ename}: {output.evalue}; the committed notebook runs clean")
    data = output.get("data", {})
    mime = next((m for m in _PREFERRED if m in data), None)
    if mime is None:
        raise ValueError(f"no output kind the page can show among {sorted(data)}")
    if mime == "text/plain":
        return _fence(data[mime].rstrip("\n"), "text")
    if mime == "image/png":
        markup = f'<img alt="a figure" src="data:image/png;base64,{"".join(data[mime].split())}">'
    elif mime == "image/svg+xml":
        from mctsviz.render.notebook import svg_markup

        markup = svg_markup(data[mime])
    else:
        markup = data[mime]
    # A raw HTML block: blank lines inside would end it for Markdown.
    lines = [line for line in markup.strip().splitlines() if line.strip()]
    return '<div class="mctsviz-notebook-output" style="overflow-x:auto">\n' + "\n".join(lines) + "\n</div>"


def _fence(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _demote_headings(source: str) -> str:
    out, fenced = [], False
    for line in source.splitlines():
        if _FENCE_OPEN.match(line):
            fenced = not fenced
        out.append("##" + line if not fenced and line.startswith("#") else line)
    return "\n".join(out)


def page_with(page: str, region: str) -> str:
    """``page`` with the text between its markers replaced by ``region``.

    Raises:
        ValueError: the page lacks the markers.
    """
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{PAGE.name} lacks the marker lines {BEGIN!r} and {END!r}")
    return page[: start + len(BEGIN)] + "\n\n" + region + "\n" + page[end:]


def write_page(notebook: Any) -> None:
    PAGE.write_text(page_with(PAGE.read_text(encoding="utf-8"), notebook_markdown(notebook)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page-only", action="store_true", help="rewrite docs/notebooks.md from the committed notebook, without running it")
    args = parser.parse_args(argv)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    if not args.page_only:
        notebook = normalise(execute(notebook))
        nbformat.write(notebook, NOTEBOOK)
    write_page(notebook)
    print(f"wrote {PAGE.relative_to(ROOT)}" + ("" if args.page_only else f" and {NOTEBOOK.relative_to(ROOT)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
