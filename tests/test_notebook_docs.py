"""The example notebook and its page: the notebook runs clean and gives its committed outputs,
and docs/notebooks.md shows exactly those cells and outputs (tools/notebook_page.py writes both)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebook_page", ROOT / "tools" / "notebook_page.py")
assert _spec is not None and _spec.loader is not None
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)

REGENERATE = "run `python tools/notebook_page.py` and commit docs/examples/notebook.ipynb and docs/notebooks.md"


def committed():
    return nbformat.read(tool.NOTEBOOK, as_version=4)


def test_the_page_shows_the_committed_notebook():
    page = tool.PAGE.read_text(encoding="utf-8")
    assert page == tool.page_with(page, tool.notebook_markdown(committed())), REGENERATE


def test_the_committed_notebook_has_its_outputs_and_nothing_that_varies():
    notebook = committed()
    nbformat.validate(notebook)
    assert set(notebook.metadata) == {"kernelspec", "language_info", "mctsviz"}
    assert set(notebook.metadata["mctsviz"]) == {"mctsviz", "graphviz", "matplotlib"}
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    for cell in code:
        assert cell.outputs and "execution" not in cell.metadata, cell.id
        for output in cell.outputs:
            assert output.output_type == "execute_result", (cell.id, output.output_type)  # no error, warning or print
            assert tool.WIDGET_MIME not in output.data and " at 0x" not in output.data["text/plain"]


def test_the_page_is_linked_from_the_navigation():
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert {"Notebooks": "notebooks.md"} in nav


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _code(source, *outputs):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = list(outputs)
    return cell


def test_the_converter_fences_text_and_inlines_markup():
    text = "<script>alert(1)</script> and ``` a fence"
    notebook = _notebook(
        nbformat.v4.new_markdown_cell("# Title\n\nProse.\n\n```python\n# a comment, not a heading\n```"),
        _code("print(x)", nbformat.v4.new_output("stream", name="stdout", text=text + "\n")),
        _code("x", nbformat.v4.new_output("execute_result", {"text/plain": text}, execution_count=2)),
        _code(
            "svg",
            nbformat.v4.new_output(
                "display_data", {"image/svg+xml": '<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg>\n\n<text>a</text></svg>', "text/plain": "x"}
            ),
        ),
        _code("page", nbformat.v4.new_output("display_data", {"text/html": "<div>\n\n<b>b</b></div>", "text/plain": "x"})),
    )
    page = tool.notebook_markdown(notebook)
    assert page.startswith("### Title\n\nProse.\n\n```python\n# a comment, not a heading\n```\n\n```python\nprint(x)\n```\n\n")
    assert page.count(f"````text\n{text}\n````") == 2  # the fence outgrows the text's own backticks; Markdown escapes the rest
    assert '<div class="mctsviz-notebook-output" style="overflow-x:auto">\n<svg>\n<text>a</text></svg>\n</div>' in page  # no prolog, no blank line
    assert '<div class="mctsviz-notebook-output" style="overflow-x:auto">\n<div>\n<b>b</b></div>\n</div>' in page


def test_the_converter_refuses_what_a_page_must_not_show():
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=[])
    with pytest.raises(ValueError, match="a cell raised ValueError: bad"):
        tool.notebook_markdown(_notebook(_code("1/0", error)))
    snippet = nbformat.v4.new_output("stream", name="stdout", text='--8<-- "/etc/passwd"\n')
    with pytest.raises(ValueError, match="snippet marker"):
        tool.notebook_markdown(_notebook(_code("print()", snippet)))
    with pytest.raises(ValueError, match="lacks the marker lines"):
        tool.page_with("# A page\n", "region")


@pytest.mark.slow
def test_the_notebook_runs_clean_and_gives_its_committed_outputs():
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("anywidget")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    before = committed()
    run = tool.execute(before)
    outputs = {cell.id: cell.outputs for cell in run.cells if cell.cell_type == "code"}
    for cell_id, cell_outputs in outputs.items():
        assert [o.output_type for o in cell_outputs] == ["execute_result"], (cell_id, cell_outputs)
    data = {cell_id: cell_outputs[0].data for cell_id, cell_outputs in outputs.items()}
    assert "<b>Replay</b> of tictactoe: 300 iterations" in data["search"]["text/html"] and "<svg" in data["search"]["text/html"]
    assert data["snapshot"]["image/svg+xml"].startswith("<!-- Generated by graphviz")
    assert "<svg" in data["render"]["image/svg+xml"]
    assert data["plot"]["image/svg+xml"].startswith("<svg")
    assert tool.WIDGET_MIME in data["scrubber"] and "<svg" in data["scrubber"]["text/html"]  # the live widget, and its frame
    assert data["step"]["text/plain"] == "'iteration 7 of 300 · expand: the new node'"

    after = tool.normalise(run)
    if after.metadata["mctsviz"] != before.metadata["mctsviz"]:
        pytest.skip(f"the outputs were made with {before.metadata['mctsviz']}, this machine has {after.metadata['mctsviz']}: {REGENERATE}")
    for old, new in zip(before.cells, after.cells):
        assert old == new, f"cell {old.id} gives other outputs than the committed ones: {REGENERATE}"
    assert nbformat.writes(after) == nbformat.writes(before)
