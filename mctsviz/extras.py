"""The optional parts of mctsviz and the libraries each needs: the extras of ``pip install``.

The core (games, search, traces, replay, ``inspect``, ``verify``) needs only msgspec and tqdm.
Figures need the ``render`` extra, the walkthrough site the ``site`` extra, the notebook scrubber
widget the ``notebook`` extra; a command that needs one says so in one line (exit code 2)
instead of failing on an import deep inside.
"""

from __future__ import annotations

import importlib.util

from .errors import MctsvizError

__all__ = ["EXTRAS", "missing_modules", "require_extra"]

#: The modules each extra brings (import names, not distribution names).
EXTRAS: dict[str, tuple[str, ...]] = {
    "render": ("graphviz", "matplotlib", "numpy"),
    # Policy/value networks: training (mctsviz train) and network evaluators (NET.npz).
    "learn": ("numpy",),
    "site": ("graphviz", "matplotlib", "numpy", "jinja2", "markupsafe", "mkdocs", "material"),
    "notebook": ("graphviz", "matplotlib", "numpy", "anywidget", "IPython"),
    # Sweeps, tournaments and matches on a Dask cluster (--scheduler).
    "dask": ("dask", "distributed"),
    "chess": ("chess",),
    "openspiel": ("pyspiel",),
}


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    missing = []
    for name in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a module blocked by sys.modules[name] = None
            found = False
        if not found:
            missing.append(name)
    return missing


def require_extra(extra: str, what: str) -> None:
    """Raise a one-line MctsvizError naming the install command when ``extra`` is not installed.

    Raises:
        MctsvizError: ``what`` (a command, like "mctsviz render") needs modules that are missing.
    """
    missing = missing_modules(extra)
    if missing:
        raise MctsvizError(f"{what} needs the {extra!r} extra ({', '.join(missing)} not installed): pip install 'mctsviz[{extra}]'")
