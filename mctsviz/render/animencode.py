"""An animation's record and its files: GIF (Pillow), MP4 (H.264 through ``ffmpeg``), one HTML page.

:class:`Animation` holds frames of one size with their labels and a frame rate; the frames are
made by :mod:`mctsviz.render.animation` (which re-exports every public name here).
:func:`animation_bytes` encodes one as a GIF, an MP4 or one self-contained HTML page with a
slider, play/pause and step buttons; :meth:`Animation.save` writes one, the format following
the suffix (.gif, .mp4, .html). The same frames give the same bytes.
"""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import escape
from ..errors import MctsvizError
from ..fileutil import atomic_write

__all__ = [
    "ANIMATION_FORMATS",
    "Animation",
    "FFMPEG_MISSING",
    "animation_bytes",
    "animation_format_for_path",
    "animation_html",
    "check_frame_options",
    "ffmpeg_program",
    "png_size",
    "same_size_frames",
]

#: Animation formats by file suffix.
ANIMATION_FORMATS = {".gif": "gif", ".mp4": "mp4", ".html": "html", ".htm": "html"}

FFMPEG_MISSING = (
    "writing MP4 needs the ffmpeg program, which was not found on PATH: install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg)"
)

_FRAME_FORMATS = ("png", "svg")
_MAX_FPS = 60.0


@dataclass(frozen=True)
class Animation:
    """Frames of one size with their labels and a frame rate, ready to encode.

    Attributes:
        frames: PNG images, or SVG documents (UTF-8), all of one size.
        frame_format: ``"png"`` or ``"svg"`` (SVG frames can only be written as HTML).
        labels: what each frame shows (``"iteration 12"``, ``"iteration 3 · select"``).
        fps: frames per second.
        hold: extra seconds the last frame stays before the animation starts again.
        title: a heading for the HTML page (the game, policy and seed).
    """

    frames: tuple[bytes, ...]
    frame_format: str
    labels: tuple[str, ...]
    fps: float
    hold: float = 0.0
    title: str = ""

    def __post_init__(self) -> None:
        if not self.frames:
            raise MctsvizError("an animation needs at least one frame")
        if self.frame_format not in _FRAME_FORMATS:
            raise MctsvizError(f"unknown frame format {self.frame_format!r}; choose one of: {', '.join(_FRAME_FORMATS)}")
        if len(self.labels) != len(self.frames):
            raise MctsvizError(f"{len(self.frames)} frames need {len(self.frames)} labels, not {len(self.labels)}")
        _check_timing(self.fps, self.hold)

    def save(self, path: str | os.PathLike[str]) -> int:
        """Write the animation to ``path`` (atomically), the format following its suffix.

        Returns:
            The number of bytes written.

        Raises:
            MctsvizError: an unknown suffix, SVG frames for a GIF or MP4, ``ffmpeg`` missing.
        """
        data = animation_bytes(self, animation_format_for_path(path))
        atomic_write(path, data)
        return len(data)


def _check_timing(fps: float, hold: float) -> None:
    if not (isinstance(fps, (int, float)) and 0 < fps <= _MAX_FPS):
        raise MctsvizError(f"bad fps {fps!r}: expected a number above 0 and at most {_MAX_FPS:g}")
    if not (isinstance(hold, (int, float)) and 0 <= hold <= 3600):
        raise MctsvizError(f"bad hold {hold!r}: expected seconds from 0 to 3600")


def check_frame_options(frame_format: str, fps: float | None, hold: float) -> None:
    """Refuse a bad frame format, fps or hold before any frame is drawn."""
    if frame_format not in _FRAME_FORMATS:
        raise MctsvizError(f"unknown frame format {frame_format!r}; choose one of: {', '.join(_FRAME_FORMATS)}")
    _check_timing(1.0 if fps is None else fps, hold)


def animation_format_for_path(path: str | os.PathLike[str]) -> str:
    """The animation format a path's suffix asks for: ``"gif"``, ``"mp4"`` or ``"html"``.

    Raises:
        MctsvizError: any other suffix.
    """
    fmt = ANIMATION_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise MctsvizError(f"cannot tell the animation format of {os.fspath(path)!r}: use one of the suffixes .gif, .mp4, .html")
    return fmt


# -- frames of one size ---------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG image's (width, height) in pixels, read from its header.

    Raises:
        MctsvizError: ``data`` is not a PNG image.
    """
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise MctsvizError("a frame is not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _equal_size(images: list[bytes]) -> list[bytes]:
    """PNG images padded (white, centred) to the largest width and height among them."""
    sizes = [png_size(image) for image in images]
    width, height = max(w for w, _ in sizes), max(h for _, h in sizes)
    if all(size == (width, height) for size in sizes):
        return images
    from PIL import Image

    out = []
    for image, size in zip(images, sizes):
        if size == (width, height):
            out.append(image)
            continue
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(_opaque(Image.open(io.BytesIO(image))), ((width - size[0]) // 2, (height - size[1]) // 2))
        buffer = io.BytesIO()
        canvas.save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


_SVG_CANVAS = re.compile(rb'<svg width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([-\d. ]+)"')


def _equal_svg_size(images: list[bytes]) -> list[bytes]:
    """Graphviz SVG documents widened (centred) to the largest width and height among them."""
    canvases = [_SVG_CANVAS.search(image) for image in images]
    if any(c is None for c in canvases):
        return images  # not Graphviz's: shown as they are
    sizes = [(float(c.group(1)), float(c.group(2))) for c in canvases if c is not None]
    width, height = max(w for w, _ in sizes), max(h for _, h in sizes)
    out = []
    for image, canvas, (w, h) in zip(images, canvases, sizes):
        assert canvas is not None
        if (w, h) == (width, height):
            out.append(image)
            continue
        x, y, box_w, box_h = (float(v) for v in canvas.group(3).split())
        scale = w / box_w if box_w else 1.0  # points per viewBox unit (Graphviz's size scales)
        new_w, new_h = width / scale, height / scale
        box = f"{x - (new_w - box_w) / 2:.2f} {y - (new_h - box_h) / 2:.2f} {new_w:.2f} {new_h:.2f}"
        tag = f'<svg width="{width:g}pt" height="{height:g}pt"\n viewBox="{box}"'.encode()
        out.append(image[: canvas.start()] + tag + image[canvas.end() :])
    return out


def same_size_frames(images: list[bytes], frame_format: str) -> list[bytes]:
    """Frames brought to the largest width and height among them, centred: PNG images padded
    with white, Graphviz SVG documents widened."""
    return _equal_size(images) if frame_format == "png" else _equal_svg_size(images)


def _opaque(image: Any) -> Any:
    """An RGB image: transparent parts over white."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P", "PA"):
        image = image.convert("RGBA")
        background = Image.new("RGBA", image.size, "white")
        return Image.alpha_composite(background, image).convert("RGB")
    return image.convert("RGB")


def _rgb_frames(animation: Animation, *, even: bool = False) -> Iterator[Any]:
    """The frames as RGB images of one size (``even``: a white column or row added to odd sides)."""
    from PIL import Image

    if animation.frame_format != "png":
        raise MctsvizError("SVG frames can only be written as HTML: make the animation with frame_format='png' for GIF or MP4")
    images = _equal_size(list(animation.frames))
    width, height = png_size(images[0])
    target = (width + width % 2, height + height % 2) if even else (width, height)
    for data in images:
        image = _opaque(Image.open(io.BytesIO(data)))
        if image.size != target:
            canvas = Image.new("RGB", target, "white")
            canvas.paste(image, (0, 0))
            image = canvas
        yield image


# -- encoders -------------------------------------------------------------------------------------


def animation_bytes(animation: Animation, fmt: str) -> bytes:
    """``animation`` as ``"gif"``, ``"mp4"`` or ``"html"`` bytes, the same for the same frames.

    GIF: 256 colours per frame, looping forever; consecutive identical frames merge into one
    longer frame. MP4: H.264 (yuv420p) made by the ``ffmpeg`` program, without metadata.
    HTML: one page holding every frame, with a slider, play/pause and step buttons and the
    arrow keys; it fetches nothing.

    Raises:
        MctsvizError: an unknown format, SVG frames for GIF or MP4, ``ffmpeg`` missing or failing.
    """
    if fmt == "gif":
        return _gif(animation)
    if fmt == "mp4":
        return _mp4(animation)
    if fmt == "html":
        return animation_html(animation).encode("utf-8")
    raise MctsvizError(f"unknown animation format {fmt!r}; choose one of: gif, mp4, html")


def _durations_ms(animation: Animation) -> list[int]:
    step = 1000 / animation.fps
    durations = [round(step)] * len(animation.frames)
    durations[-1] = round(step + 1000 * animation.hold)
    return durations


def _gif(animation: Animation) -> bytes:
    from PIL import Image

    frames = [image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) for image in _rgb_frames(animation)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=_durations_ms(animation), loop=0)
    return buffer.getvalue()


def ffmpeg_program() -> str:
    """The path of the ``ffmpeg`` program, which MP4 output needs.

    Raises:
        MctsvizError: ``ffmpeg`` is not on PATH (the message says how to install it).
    """
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise MctsvizError(FFMPEG_MISSING)
    return ffmpeg


def _mp4(animation: Animation) -> bytes:
    ffmpeg = ffmpeg_program()
    frames = list(_rgb_frames(animation, even=True))
    width, height = frames[0].size
    # The last frame is repeated for the hold: a video has one frame rate.
    repeats = [1] * len(frames)
    repeats[-1] += round(animation.hold * animation.fps)
    with tempfile.TemporaryDirectory(prefix="mctsviz-") as folder:
        out = Path(folder) / "animation.mp4"
        log = Path(folder) / "ffmpeg.log"
        command = [
            ffmpeg,
            *("-hide_banner", "-loglevel", "error", "-y"),
            *("-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-framerate", f"{animation.fps:g}", "-i", "-"),
            *("-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "medium", "-crf", "20", "-tune", "stillimage"),
            # No date, no encoder version, no metadata: the same frames give the same file.
            *("-fflags", "+bitexact", "-flags:v", "+bitexact", "-map_metadata", "-1", "-movflags", "+faststart"),
            str(out),
        ]
        with log.open("wb") as errors:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
            assert process.stdin is not None
            try:
                for image, count in zip(frames, repeats):
                    raw = image.tobytes()
                    for _ in range(count):
                        process.stdin.write(raw)
            except BrokenPipeError:
                pass  # ffmpeg stopped early: its log says why
            finally:
                process.stdin.close()
            code = process.wait()
        if code != 0:
            lines = log.read_text("utf-8", "replace").strip().splitlines()
            raise MctsvizError(f"ffmpeg failed: {lines[0] if lines else f'exit code {code}'}")
        return out.read_bytes()


# -- the HTML page --------------------------------------------------------------------------------

_PAGE_STYLE = """
body { margin: 0; padding: 0.8rem 1.2rem; font: 15px/1.45 system-ui, sans-serif; color: #1b1b1b; background: #ffffff; }
@media (prefers-color-scheme: dark) { body { color: #e6e6e6; background: #1e1f24; } }
h1 { font-size: 1.1rem; margin: 0 0 0.6rem; font-weight: 600; overflow-wrap: anywhere; }
.mva-stage { display: grid; justify-items: center; }
.mva-stage > img { grid-area: 1 / 1; max-width: 100%; max-height: calc(100vh - 7rem); height: auto; background: #ffffff; }
.mva-stage > img[hidden] { display: none; }
.mva-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem; margin-top: 0.6rem; justify-content: center; }
.mva-controls button { font: inherit; min-width: 2.6rem; padding: 0.2rem 0.6rem; }
.mva-controls input[type=range] { flex: 1 1 16rem; max-width: 40rem; }
.mva-label { min-width: 14rem; font-variant-numeric: tabular-nums; }
"""

_PAGE_SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("mva-data").textContent);
  var stage = document.getElementById("mva-stage");
  var slider = document.getElementById("mva-slider");
  var label = document.getElementById("mva-label");
  var play = document.getElementById("mva-play");
  var count = data.frames.length;
  var images = data.frames.map(function (src, i) {
    var img = document.createElement("img");
    img.setAttribute("src", src);
    img.setAttribute("alt", data.labels[i]);
    img.hidden = true;
    stage.appendChild(img);
    return img;
  });
  var index = 0, timer = null;
  function show(i) {
    images[index].hidden = true;
    index = ((i % count) + count) % count;
    images[index].hidden = false;
    slider.value = String(index);
    label.textContent = data.labels[index] + " \\u00b7 frame " + (index + 1) + " of " + count;
    document.body.setAttribute("data-frame", String(index));
  }
  function delay() { return 1000 / data.fps + (index === count - 1 ? 1000 * data.hold : 0); }
  function tick() { show(index + 1); timer = setTimeout(tick, delay()); }
  function playing(on) {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    if (on) { timer = setTimeout(tick, delay()); }
    play.textContent = on ? "Pause" : "Play";
    play.setAttribute("aria-pressed", on ? "true" : "false");
  }
  function step(by) { playing(false); show(Math.min(count - 1, Math.max(0, index + by))); }
  slider.max = String(count - 1);
  slider.addEventListener("input", function () { playing(false); show(Number(slider.value)); });
  play.addEventListener("click", function () { playing(timer === null); });
  document.getElementById("mva-first").addEventListener("click", function () { playing(false); show(0); });
  document.getElementById("mva-prev").addEventListener("click", function () { step(-1); });
  document.getElementById("mva-next").addEventListener("click", function () { step(1); });
  document.getElementById("mva-last").addEventListener("click", function () { playing(false); show(count - 1); });
  document.addEventListener("keydown", function (event) {
    if (event.target === slider || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var key = event.key;
    if (key === "ArrowLeft") { step(-1); }
    else if (key === "ArrowRight") { step(1); }
    else if (key === "Home") { playing(false); show(0); }
    else if (key === "End") { playing(false); show(count - 1); }
    else if (key === " " && event.target.tagName !== "BUTTON") { playing(timer === null); }
    else { return; }
    event.preventDefault();
  });
  images[0].hidden = false;
  show(0);
  var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  playing(count > 1 && !still);
  document.body.setAttribute("data-ready", "");
})();
"""


def animation_html(animation: Animation) -> str:
    """One self-contained HTML page playing ``animation``.

    The frames are data URIs (``<img>`` elements: an SVG shown that way runs no script) in a
    JSON array inside ``<script type="application/json">``, escaped by
    :func:`mctsviz.escape.json_for_html`; labels go into the page as text; a
    Content-Security-Policy lets only the page's own script and style run and fetch nothing.
    """
    mime = "image/png" if animation.frame_format == "png" else "image/svg+xml"
    uris = [f"data:{mime};base64,{base64.b64encode(frame).decode('ascii')}" for frame in animation.frames]
    data = {"frames": uris, "labels": list(animation.labels), "fps": animation.fps, "hold": animation.hold}
    policy = "; ".join(
        (
            "default-src 'none'",
            f"script-src '{escape.csp_hash(_PAGE_SCRIPT)}'",
            f"style-src '{escape.csp_hash(_PAGE_STYLE)}'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )
    title = animation.title or "animation"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{escape.html(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape.html(title, limit=200)} · mctsviz</title>\n"
        f"<style>{_PAGE_STYLE}</style>\n"
        "</head>\n<body>\n"
        f"<h1>{escape.html(title, limit=200)}</h1>\n"
        '<div class="mva-stage" id="mva-stage"><noscript>Playing the frames needs JavaScript.</noscript></div>\n'
        '<div class="mva-controls">'
        '<button type="button" id="mva-first" title="first frame (Home)">|◀</button>'
        '<button type="button" id="mva-prev" title="previous frame (←)">◀</button>'
        '<button type="button" id="mva-play" aria-pressed="false" title="play or pause (space)">Play</button>'
        '<button type="button" id="mva-next" title="next frame (→)">▶</button>'
        '<button type="button" id="mva-last" title="last frame (End)">▶|</button>'
        f'<input type="range" id="mva-slider" min="0" max="{len(uris) - 1}" value="0" aria-label="frame">'
        '<span class="mva-label" id="mva-label" aria-live="polite"></span></div>\n'
        f'<script type="application/json" id="mva-data">{escape.json_for_html(data)}</script>\n'
        f"<script>{_PAGE_SCRIPT}</script>\n"
        "</body>\n</html>\n"
    )
