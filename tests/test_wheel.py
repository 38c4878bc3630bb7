"""The wheel holds everything the package needs, and works installed outside the repository.

The wheel is built from this checkout, checked with ``twine check``, and installed (without
dependencies) into a fresh virtual environment in a temporary folder; the environment sees the
running interpreter's site-packages for the dependencies (also when the tests run inside a
virtual environment, see ``tests/venvs.py``), never this checkout. From a folder outside the
repository it then runs a search that writes a trace, renders a tree, writes walkthrough pages
and builds them with MkDocs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from venvs import venv_seeing_these_packages

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _package_data_files() -> list[str]:
    """Every non-Python file under mctsviz/ that the package reads at run time."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "mctsviz").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, and two test
    # workers building in the checkout at once would trip over each other.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "mctsviz", source / "mctsviz", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    (found,) = out.glob("mctsviz-*.whl")
    return found


def test_the_wheel_holds_every_template_asset_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in _package_data_files() if f not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert "mctsviz/py.typed" in names
    print(f"\n{wheel.name}: {len(names)} files, {len(_package_data_files())} data files, all present")


def test_the_core_install_pulls_no_drawing_library(wheel):
    """``pip install mctsviz`` brings msgspec and tqdm; figures and the site are extras."""
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = sorted(r.split(">")[0].split("=")[0] for r in requires if "extra ==" not in r)
    assert core == ["msgspec", "tqdm"]
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Provides-Extra:")}
    assert {"render", "site", "all"} <= extras
    assert any(r.startswith("graphviz") and 'extra == "render"' in r for r in requires)


def test_twine_check_passes(wheel):
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    print("\n" + done.stdout.strip())


def test_the_installed_wheel_searches_renders_and_builds_a_site(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    python = venv_seeing_these_packages(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    # pip of this interpreter installs into the venv with --prefix-free target: use the venv's own.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)], check=True, capture_output=True, text=True, env=env
    )
    work = tmp_path / "outside"
    work.mkdir()

    def run(*args: str) -> str:
        done = subprocess.run([str(python), *args], cwd=work, capture_output=True, text=True, env=env)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    where = run("-c", "import mctsviz, sys; print(mctsviz.__file__); print(mctsviz.__version__)").split()
    assert Path(where[0]).is_relative_to(env_dir), f"mctsviz came from {where[0]}, not the wheel"
    out = [f"mctsviz {where[1]} from {Path(where[0]).parent}"]
    searched = run("-m", "mctsviz", "search", "tictactoe", "--iterations", "60", "--seed", "1", "--trace", "run.jsonl")
    out.append(next(line for line in searched.splitlines() if "chosen move" in line))
    run("-m", "mctsviz", "render", "tree", "run.jsonl", "--iteration", "60", "-o", "tree.svg")
    assert (work / "tree.svg").read_bytes().startswith(b"<?xml")
    run("-m", "mctsviz", "site", "run.jsonl", "-o", "docs/walkthroughs", "--iterations", "1-3", "--no-progress")
    (work / "docs" / "index.md").write_text("# Runs\n\n[The walkthrough](walkthroughs/run/index.md)\n", encoding="utf-8")
    (work / "mkdocs.yml").write_text(
        "site_name: runs\nuse_directory_urls: false\ntheme:\n  name: material\n  font: false\n"
        "markdown_extensions:\n  - tables\n  - attr_list\n  - md_in_html\n",
        encoding="utf-8",
    )
    run("-m", "mkdocs", "build", "-q")
    pages = sorted(p.name for p in (work / "site" / "walkthroughs" / "run").glob("*.html"))
    assert "index.html" in pages and "iteration-01.html" in pages and "slider.html" in pages
    out.append(f"site: {len(pages)} walkthrough pages ({', '.join(pages[:3])}, ...)")
    print("\n" + "\n".join(out))


def test_a_venv_made_from_inside_a_venv_sees_the_packages_installed_there(tmp_path):
    """README's test command in a fresh virtual environment: the wheel's venv must see its packages."""
    outer = tmp_path / "outer"
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(outer)
    outer_python = outer / "bin" / "python"
    purelib = subprocess.run([str(outer_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True)
    Path(purelib.stdout.strip(), "only_in_the_outer_venv.py").write_text("HERE = True\n", encoding="utf-8")
    script = (
        "import sys, subprocess, pathlib\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from venvs import venv_seeing_these_packages\n"
        f"python = venv_seeing_these_packages(pathlib.Path({str(tmp_path / 'inner')!r}))\n"
        "done = subprocess.run([str(python), '-c', 'import only_in_the_outer_venv, sys; print(sys.prefix)'], capture_output=True, text=True)\n"
        "print(done.returncode, done.stdout.strip(), done.stderr.strip()[-200:])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(outer_python), "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["0", str(tmp_path / "inner")], done.stdout + done.stderr
