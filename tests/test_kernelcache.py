"""The kernel's numba cache is dropped when any kernel source changes, not only the function's own file."""

from __future__ import annotations

import shutil

import pytest

from mctsviz.search import kernelcache


@pytest.fixture
def sources(tmp_path, monkeypatch):
    """A copy of the kernel's sources in a folder of its own, its cache under NUMBA_CACHE_DIR."""
    folder = tmp_path / "search"
    folder.mkdir()
    for module in kernelcache.KERNEL_MODULES:
        shutil.copy(kernelcache.Path(kernelcache.__file__).with_name(f"{module}.py"), folder / f"{module}.py")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    (cache,) = kernelcache.cache_folders(folder)
    cache.mkdir(parents=True)
    return folder, cache


def _entries(cache):
    return sorted(path.name for path in cache.iterdir())


def _compiled(cache):
    """Entries as numba writes them after compiling, and the one for another module's function."""
    names = ["kernel.run_iterations-662.py311.nbi", "kernel.run_iterations-662.py311.1.nbc", "wirecodec.encode_iterations-40.py311.nbi", "other.f-1.py311.nbi"]
    for name in names:
        (cache / name).write_bytes(b"x")


def test_an_edit_to_kernelgames_alone_drops_the_kernels_cache(sources):
    folder, cache = sources
    kernelcache.make_cache_current(folder)
    _compiled(cache)
    assert kernelcache.is_cached("kernel", "run_iterations", folder)
    assert kernelcache.make_cache_current(folder) == []  # sources unchanged: the cache stays
    with (folder / "kernelgames.py").open("a") as games:
        games.write("\n# an edit\n")
    assert not kernelcache.is_cached("kernel", "run_iterations", folder)  # kernel.py itself is unchanged
    removed = kernelcache.make_cache_current(folder)
    assert sorted(path.name for path in removed) == [
        "kernel.run_iterations-662.py311.1.nbc",
        "kernel.run_iterations-662.py311.nbi",
        "wirecodec.encode_iterations-40.py311.nbi",
    ]
    stamp = f"mctsviz-kernel-sources-{kernelcache.sources_digest(folder)[:16]}.stamp"
    assert _entries(cache) == sorted([stamp, "other.f-1.py311.nbi"])  # one stamp, the old one gone


def test_the_digest_covers_every_kernel_module(sources):
    folder, _ = sources
    before = kernelcache.sources_digest(folder)
    for module in kernelcache.KERNEL_MODULES:
        path = folder / f"{module}.py"
        text = path.read_bytes()
        path.write_bytes(text + b"\n")
        assert kernelcache.sources_digest(folder) != before, module
        path.write_bytes(text)
    assert kernelcache.sources_digest(folder) == before


def test_an_unwritable_or_missing_cache_is_left_alone(tmp_path, monkeypatch):
    folder = tmp_path / "search"
    folder.mkdir()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nowhere"))
    assert kernelcache.make_cache_current(folder) == []
    assert not (tmp_path / "nowhere").exists()
    assert not kernelcache.is_cached("kernel", "run_iterations", folder)


def test_the_package_cache_holds_the_current_stamp_once_the_kernel_is_imported():
    pytest.importorskip("numba")
    from mctsviz.search import kernel  # noqa: F401 - importing it makes the cache current

    folders = [cache for cache in kernelcache.cache_folders() if cache.is_dir()]
    stamp = f"mctsviz-kernel-sources-{kernelcache.sources_digest()[:16]}.stamp"
    assert any((cache / stamp).exists() for cache in folders)
