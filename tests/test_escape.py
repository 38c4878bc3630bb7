"""One escaping function per output kind (mctsviz.escape), each checked against its output's parser."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mctsviz import escape

HOSTILE = [
    "</title><script>window.__pwned=1</script><title>",
    '<img src=x onerror="window.__pwned=1">',
    "{{ 7*7 }} {% raw %}",
    "[x](javascript:alert(1)) ![i](x.png) <b>b</b>",
    "a|b `c` *d* _e_ # f",
    "$x^2$ and $ alone",
    '"q" \\ < > { } ]]> -->',
    "line\nbreak\u2028sep\u2029para\x00nul\x1b[2J",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_output_kind_is_one_line_and_inert(text):
    for out in (escape.terminal(text), escape.html(text), escape.markdown(text), escape.front_matter_title(text), escape.matplotlib(text, None)):
        assert "\n" not in out and "\u2028" not in out and "\x1b" not in out and "\x00" not in out
    assert "<" not in escape.html(text) and ">" not in escape.html(text) and '"' not in escape.html(text)
    assert "<" not in escape.markdown(text) and "](" not in escape.markdown(text).replace("\\]\\(", "")


def test_html_round_trips_through_an_html_parser():
    from html.parser import HTMLParser

    for text in HOSTILE:
        seen: list[str] = []
        parser = HTMLParser(convert_charrefs=True)
        parser.handle_data = seen.append  # type: ignore[method-assign]
        tags: list[str] = []
        parser.handle_starttag = lambda tag, attrs, tags=tags: tags.append(tag)  # type: ignore[method-assign]
        parser.feed(f"<p>{escape.html(text)}</p>")
        parser.close()
        assert tags == ["p"]
        assert "".join(seen) == escape.one_line(text)


def test_front_matter_title_is_a_yaml_string_of_escaped_text():
    yaml = pytest.importorskip("yaml")
    for text in HOSTILE:
        assert yaml.safe_load(f"title: {escape.front_matter_title(text)}\n")["title"] == escape.html(text)


def test_json_for_html_cannot_close_its_script_element():
    value = {"label": "</script><!-- \u2028 & <b>", "n": [1, 2.5]}
    text = escape.json_for_html(value)
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "&" not in text
    assert json.loads(text) == value
    with pytest.raises(ValueError):
        escape.json_for_html(float("nan"))


def test_matplotlib_text_draws_dollars_as_written(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    for i, text in enumerate(HOSTILE):
        ax.text(0, i, escape.matplotlib(text, None))
    fig.savefig(tmp_path / "labels.png")  # an unescaped "$ alone" fails mathtext parsing here
    plt.close(fig)
    assert escape.matplotlib("$x$") == r"\$x\$"


def test_escape_needs_only_the_standard_library():
    code = "import sys, mctsviz.escape; print(','.join(m for m in ('markupsafe', 'jinja2', 'matplotlib', 'graphviz') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == ""


# -- LaTeX ----------------------------------------------------------------------------------------

LATEX_HOSTILE = [
    *HOSTILE,
    "\\input{/etc/passwd}",
    "} % $ # ] , = & _ ^ ~",
    "\\\\[2pt] -- `` '' <|>",
    "caf\u00e9 \u00fc\u00dfe \u2654 \u4e2d \u2212\u221e \u2192 \u00b7 \u2026",
]


@pytest.mark.parametrize("text", LATEX_HOSTILE)
def test_latex_is_ascii_one_line_with_every_special_escaped(text):
    import re

    out = escape.latex(text)
    assert out.isascii() and "\n" not in out
    # No special character stands alone: each is a control symbol or inside a formula we wrote.
    outside_math = re.sub(r"\$(-|\\(cdot|to|infty|times|pm))\$", "", out)
    assert re.search(r"(?<!\\)[#$%&_^~]", outside_math) is None, out
    assert re.sub(r"\{[\[\]]\}", "", out).count("[") == 0 and "]" not in re.sub(r"\{[\[\]]\}", "", out)
    depth = 0
    for ch in re.sub(r"\\[{}]", "", out):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, out
    assert depth == 0, out


def test_latex_examples():
    assert escape.latex("\\input{x}") == "\\textbackslash{}input\\{x\\}"
    assert escape.latex("a,b=c[d]") == "a{,}b{=}c{[}d{]}"
    assert escape.latex("\u2212" + "1 \u2192 \u221e, \u2013") == "$-$1 $\\to$ $\\infty${,} --"
    assert escape.latex("\u00e9\u01d8\u00df\u2654") == "\\'{e}\\'{\\\"{u}}\\ss{}{\\ttfamily U+2654}"
    assert escape.latex("tab\there\x07") == "tab here\\textbackslash{}x07"
    assert escape.latex("x" * 30, 10) == "xxxxxxxxx\\ldots{}"


def test_latex_text_compiles_as_written(tmp_path):
    import shutil

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: apt install texlive-latex-base)")
    # After a line break, where a bare "[" would start an optional argument, and in a box.
    lines = "\n".join(f"x\\\\{escape.latex(text)}\\par\\fbox{{{escape.latex(text)}}}\\par" for text in LATEX_HOSTILE)
    (tmp_path / "t.tex").write_text(f"\\documentclass{{article}}\n\\tracinglostchars=1\n\\begin{{document}}\n{lines}\n\\end{{document}}\n", encoding="ascii")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "t.tex"], cwd=tmp_path, capture_output=True, text=True)
    log = (tmp_path / "t.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-2000:]
    assert (tmp_path / "t.pdf").read_bytes().startswith(b"%PDF") and "(/etc/passwd" not in log
    assert "Missing character" not in log
