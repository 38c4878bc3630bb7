"""Network files: the weights of a :class:`~mctsviz.nets.network.Network`, read as untrusted input.

A network file is an ``.npz`` archive (a zip of ``.npy`` arrays, ``numpy.load(path,
allow_pickle=False)`` reads it) holding, in this order:

* ``meta``: a uint8 array, the UTF-8 bytes of a JSON object: ``{"format": "mctsviz-network",
  "version": 1, "game": "tictactoe", "encoding": "tictactoe-planes", "inputs": 18,
  "hidden": [64], "actions": 9, "training": {...}}`` (``training``: how it was made, free form);
* ``trunk0.w``, ``trunk0.b``, ``trunk1.w``, ... : each hidden layer's weights (inputs x units)
  and biases, little-endian float32;
* ``policy.w``, ``policy.b`` (last hidden layer x actions) and ``value.w``, ``value.b``
  (last hidden layer x 1).

The archive is written byte for byte the same for the same weights (fixed member dates).

A file is checked before anything is allocated from it: its size, its number of members and
their sizes (at most :data:`MAX_FILE_BYTES` in all, unpacked), the meta's numbers (at most :data:`MAX_LAYERS` hidden layers of at most
:data:`MAX_UNITS` units), and every array's header (its dtype and exact shape) before its data
is read. Objects (pickles) are never read. A damaged file raises one ``MctsvizError`` line.

A trace records a network evaluator as ``PATH#sha256=HEX`` (the SHA-256 of the file's bytes),
and loading that name refuses a file whose bytes differ.
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MctsvizError
from ..fileutil import atomic_write
from . import network_path, split_spec
from .encoding import ENCODINGS, Encoding
from .network import Network

__all__ = ["FORMAT", "MAX_FILE_BYTES", "NetworkFile", "load_network", "network_bytes", "save_network"]

FORMAT = "mctsviz-network"
VERSION = 1
#: A network file's size at most: a few dense layers are kilobytes, not megabytes.
MAX_FILE_BYTES = 8 << 20
MAX_LAYERS = 8
MAX_UNITS = 1024
MAX_META_BYTES = 64 << 10
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can store: no clock in the bytes


@dataclass(frozen=True)
class NetworkFile:
    """A network read from a file, with what the file says about it.

    Attributes:
        network: the weights (float64 in memory).
        encoding: how the network reads positions of its game.
        sha256: the hex SHA-256 of the file's bytes.
        training: how the network was made (the file's ``meta.training``), free form.
    """

    network: Network
    encoding: Encoding
    sha256: str
    training: dict[str, Any] = field(default_factory=dict)


def network_bytes(net: Network, encoding: Encoding, training: dict[str, Any] | None = None) -> bytes:
    """The bytes of the network file for ``net`` (deterministic: the same weights, the same bytes)."""
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "game": encoding.game,
        "encoding": encoding.name,
        "inputs": net.inputs,
        "hidden": list(net.hidden),
        "actions": net.actions,
        "training": training or {},
    }
    members = {"meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
    members.update({name: np.ascontiguousarray(a, dtype="<f4") for name, a in net.arrays().items()})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, array in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, version=(1, 0), allow_pickle=False)
            archive.writestr(info, buffer.getvalue())
    return out.getvalue()


def save_network(path: str | Path, net: Network, encoding: Encoding, training: dict[str, Any] | None = None) -> str:
    """Write ``net`` to ``path`` (through a temporary file); return its SHA-256."""
    data = network_bytes(net, encoding, training)
    atomic_write(path, data)
    return hashlib.sha256(data).hexdigest()


def load_network(spec: str | Path) -> NetworkFile:
    """Read a network file (``PATH``, or ``PATH#sha256=HEX`` to insist on those bytes;
    ``net:NAME`` is a network shipped in the package).

    Raises:
        MctsvizError: no such file, a file too large, damaged or of another kind, or bytes
            other than the checksum names; one line.
    """
    path, expected = split_spec(str(spec))
    file = network_path(path)
    too_big = f"more than the {MAX_FILE_BYTES:,} bytes a network file may hold"
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):  # a pipe or a device would block or never end
            raise MctsvizError(f"network file {path}: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise MctsvizError(f"network file {path}: {info.st_size:,} bytes, {too_big}")
        with open(file, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)  # the file may have grown since
        if len(data) > MAX_FILE_BYTES:
            raise MctsvizError(f"network file {path}: {too_big}")
    except OSError as exc:
        raise MctsvizError(f"network file {path}: cannot read it ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if expected is not None and digest != expected:
        raise MctsvizError(
            f"network file {path} differs from the one recorded: its sha256 is {digest[:16]}..., the recorded one {expected[:16]}... "
            "(the priors and values cannot be recomputed from it)"
        )
    try:
        return _parse(data, digest)
    except MctsvizError as exc:
        raise MctsvizError(f"network file {path}: {exc}") from None
    except (zipfile.BadZipFile, ValueError, KeyError, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
        # zipfile and numpy's header reader raise these on damaged bytes
        raise MctsvizError(f"network file {path}: damaged ({type(exc).__name__}: {str(exc)[:200]})") from None


def _parse(data: bytes, digest: str) -> NetworkFile:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        if len(infos) > 2 * MAX_LAYERS + 5:
            raise MctsvizError(f"{len(infos)} members, more than a network has: not a network file")
        unpacked = sum(info.file_size for info in infos)
        if unpacked > MAX_FILE_BYTES:
            raise MctsvizError(f"{unpacked:,} bytes unpacked, more than the {MAX_FILE_BYTES:,} a network may hold")
        members = {}
        for info in infos:
            if info.file_size > MAX_FILE_BYTES or info.filename in members or not info.filename.endswith(".npy"):
                raise MctsvizError(f"unexpected member {info.filename!r} ({info.file_size:,} bytes): not a network file")
            with archive.open(info) as stream:
                members[info.filename[:-4]] = stream.read(MAX_FILE_BYTES + 1)
    if "meta" not in members:
        raise MctsvizError("no meta: not a network file")
    meta = _meta(_array(members["meta"], "meta", np.dtype(np.uint8), None))
    encoding = ENCODINGS[meta["encoding"]]
    widths = [encoding.inputs, *meta["hidden"]]
    shapes: dict[str, tuple[int, ...]] = {}
    for i in range(len(meta["hidden"])):
        shapes[f"trunk{i}.w"], shapes[f"trunk{i}.b"] = (widths[i], widths[i + 1]), (widths[i + 1],)
    shapes["policy.w"], shapes["policy.b"] = (widths[-1], encoding.actions), (encoding.actions,)
    shapes["value.w"], shapes["value.b"] = (widths[-1], 1), (1,)
    extra = sorted(set(members) - set(shapes) - {"meta"})
    missing = [name for name in shapes if name not in members]
    if extra or missing:
        raise MctsvizError(f"members {', '.join(missing) or 'none'} missing, {', '.join(extra) or 'none'} unexpected")
    arrays = {name: _array(members[name], name, np.dtype("<f4"), shape).astype(np.float64) for name, shape in shapes.items()}
    trunk = [(arrays[f"trunk{i}.w"], arrays[f"trunk{i}.b"]) for i in range(len(meta["hidden"]))]
    net = Network(trunk, (arrays["policy.w"], arrays["policy.b"]), (arrays["value.w"], arrays["value.b"]))
    return NetworkFile(net, encoding, digest, meta.get("training") or {})


def _array(data: bytes, name: str, dtype: np.dtype, shape: tuple[int, ...] | None) -> np.ndarray:
    """One ``.npy`` member, its header checked before its data is read (``shape`` None: any 1-D)."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        found_shape, fortran, found_dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        found_shape, fortran, found_dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise MctsvizError(f"array {name}: .npy version {version} is not read")
    if found_dtype != dtype or fortran:
        raise MctsvizError(f"array {name}: dtype {found_dtype} (fortran order {fortran}), expected {dtype}")
    if shape is None:
        if len(found_shape) != 1 or found_shape[0] > MAX_META_BYTES:
            raise MctsvizError(f"array {name}: shape {found_shape}, expected at most {MAX_META_BYTES:,} bytes")
        shape = found_shape
    elif tuple(found_shape) != shape:
        raise MctsvizError(f"array {name}: shape {tuple(found_shape)}, expected {shape}")
    count = int(np.prod(shape, dtype=np.int64))
    body = data[stream.tell() :]
    if len(body) != count * dtype.itemsize:
        raise MctsvizError(f"array {name}: {len(body):,} bytes of data, expected {count * dtype.itemsize:,}")
    array = np.frombuffer(body, dtype=dtype, count=count).reshape(shape)
    if dtype.kind == "f" and not np.isfinite(array).all():
        raise MctsvizError(f"array {name}: holds a NaN or an infinity")
    return array


def _meta(raw: np.ndarray) -> dict[str, Any]:
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise MctsvizError("meta is not JSON text") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise MctsvizError(f"meta format {meta.get('format') if isinstance(meta, dict) else None!r}, expected {FORMAT!r}: not a network file")
    if meta.get("version") != VERSION:
        raise MctsvizError(f"format version {meta.get('version')!r}: this mctsviz reads version {VERSION}")
    encoding = ENCODINGS.get(meta.get("encoding"))  # type: ignore[arg-type]
    if encoding is None or meta.get("game") != encoding.game:
        raise MctsvizError(f"encoding {meta.get('encoding')!r} for game {meta.get('game')!r}: known encodings are {', '.join(ENCODINGS)}")
    hidden = meta.get("hidden")
    whole = isinstance(hidden, list) and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_UNITS for h in hidden)
    if not whole or not 1 <= len(hidden) <= MAX_LAYERS:  # type: ignore[arg-type]
        raise MctsvizError(f"hidden layers {hidden!r}: expected 1 to {MAX_LAYERS} layers of 1 to {MAX_UNITS} units")
    if meta.get("inputs") != encoding.inputs or meta.get("actions") != encoding.actions:
        raise MctsvizError(f"{meta.get('inputs')!r} inputs and {meta.get('actions')!r} actions: {encoding.name} has {encoding.inputs} and {encoding.actions}")
    if not isinstance(meta.get("training", {}), dict):
        raise MctsvizError("meta training is not a JSON object")
    return meta
