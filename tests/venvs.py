"""A fresh virtual environment that sees the running interpreter's packages (standard library only).

``venv``'s ``system_site_packages`` means the *base* interpreter's site-packages: run from inside
a virtual environment (README's ``pip install -e '.[test]'`` in one), the new environment would
miss every package installed there. A ``.pth`` file adds the running interpreter's own
site-packages after the new environment's, so what is installed into it comes first.
"""

from __future__ import annotations

import site
import subprocess
import venv
from pathlib import Path


def venv_seeing_these_packages(env_dir: Path) -> Path:
    """Create a virtual environment in ``env_dir`` that also sees this interpreter's packages; its python."""
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    found = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True, capture_output=True, text=True)
    purelib = Path(found.stdout.strip())
    # addsitedir, not a bare path: the .pth files there (editable installs of dependencies) count too.
    lines = [f"import site; site.addsitedir({folder!r})\n" for folder in site.getsitepackages()]
    (purelib / "_running_interpreter_packages.pth").write_text("".join(lines), encoding="utf-8")
    return python
