"""Draw the page's home-screen icons (a die showing one pip, the 100 of «1000») as PNG files
with the standard library alone: ``python docs/tools/make_icons.py`` writes
``solver/thousand/web/static/icon-192.png`` and ``icon-512.png`` (committed; run again to change them)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "solver" / "web" / "static"
GREEN, WHITE, RED = (0x1E, 0x5B, 0x3A), (0xFA, 0xF7, 0xEF), (0xC0, 0x2B, 0x2B)


def pixel(x: float, y: float, n: int) -> tuple[int, int, int]:
    """The colour at (x, y) of an n x n icon: a green field, a white die with rounded
    corners, a red pip in its middle (full bleed, so a maskable crop keeps the die)."""
    c = n / 2
    half, r = 0.30 * n, 0.07 * n  # the die's half side and corner radius
    dx, dy = max(abs(x - c) - (half - r), 0.0), max(abs(y - c) - (half - r), 0.0)
    if (x - c) ** 2 + (y - c) ** 2 <= (0.085 * n) ** 2:
        return RED
    if dx * dx + dy * dy <= r * r:
        return WHITE
    return GREEN


def png(n: int) -> bytes:
    rows = b"".join(b"\0" + bytes(v for x in range(n) for v in pixel(x + 0.5, y + 0.5, n)) for y in range(n))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", n, n, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    for n in (192, 512):
        (STATIC / f"icon-{n}.png").write_bytes(png(n))
        print(STATIC / f"icon-{n}.png")
