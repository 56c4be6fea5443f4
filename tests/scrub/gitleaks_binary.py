"""The real gitleaks binary, for the differential test and ``./dev bench scrub``.

``$GITLEAKS_BIN`` or a ``gitleaks`` on PATH is used when it has ``gitleaks dir`` (8.19 and later; an older
one given by ``$GITLEAKS_BIN`` is an error, one on PATH is passed over). Otherwise Debian's build is fetched once
into ``.cache/tools`` (``LCM_TOOLS_CACHE`` moves it): the package index of Debian unstable over HTTPS
names the current ``gitleaks`` package and its SHA-256, the ``.deb`` is checked against it, and the
binary is taken out of the package's ``data.tar.xz`` (a ``.deb`` is an ``ar`` archive; no dpkg needed).
Debian's is a static Go build of the upstream release, and unstable carries a release recent enough
for ``gitleaks dir`` and the upstream configuration's schema. ``python -m tests.scrub.gitleaks_binary``
fetches it ahead of a run.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import lzma
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MIRROR = "https://deb.debian.org/debian"
SUITE = "sid"
ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
TIMEOUT_S = 120


class GitleaksUnavailable(Exception):
    """No gitleaks binary here and none could be fetched (the message says why)."""


def cache_dir() -> Path:
    given = os.environ.get("LCM_TOOLS_CACHE")
    return Path(given) if given else REPO / ".cache" / "tools"


def ensure_gitleaks() -> Path:
    """A runnable gitleaks binary with ``gitleaks dir``: ``$GITLEAKS_BIN``, else the one on PATH, else
    Debian's, fetched once (also when the one on PATH is older than ``dir``, gitleaks 8.19)."""
    given = os.environ.get("GITLEAKS_BIN")
    if given:
        problem = _unusable(Path(given))
        if problem:
            raise GitleaksUnavailable(f"GITLEAKS_BIN={given}: {problem}")
        return Path(given)
    on_path = shutil.which("gitleaks")
    if on_path and not _unusable(Path(on_path)):
        return Path(on_path)
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    binary = root / "gitleaks"
    with (root / ".gitleaks.lock").open("w") as lock:  # test workers may start at once: one fetches
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            _fetch(binary)
    return binary


def _unusable(binary: Path) -> str | None:
    """Why ``binary`` cannot run ``gitleaks dir`` here (None: it can)."""
    try:
        done = subprocess.run([str(binary), "dir", "--help"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"does not run ({exc})"
    return None if done.returncode == 0 else f"has no 'dir' command: {done.stderr.strip()[:200]}"


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            data: bytes = response.read()
            return data
    except OSError as exc:
        raise GitleaksUnavailable(f"cannot fetch {url}: {exc}") from None


def _package(index: str) -> dict[str, str]:
    """The ``gitleaks`` stanza of a Debian ``Packages`` index."""
    for stanza in index.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and line[0] != " ")
        if fields.get("Package") == "gitleaks":
            return fields
    raise GitleaksUnavailable(f"Debian {SUITE} lists no gitleaks package")


def _member(deb: bytes, prefix: str) -> bytes:
    """An ``ar`` archive member whose name starts with ``prefix``."""
    if not deb.startswith(b"!<arch>\n"):
        raise GitleaksUnavailable("the gitleaks package is not an ar archive")
    at = 8
    while at + 60 <= len(deb):
        name, size = deb[at:at + 16].decode().strip(), int(deb[at + 48:at + 58])
        if name.startswith(prefix):
            return deb[at + 60:at + 60 + size]
        at += 60 + size + (size & 1)
    raise GitleaksUnavailable(f"the gitleaks package holds no {prefix}*")


def _fetch(binary: Path) -> None:
    arch = ARCHES.get(platform.machine().lower())
    if arch is None or not sys.platform.startswith("linux"):
        raise GitleaksUnavailable(f"no Debian gitleaks build for {sys.platform}/{platform.machine()}")
    index = lzma.decompress(_get(f"{MIRROR}/dists/{SUITE}/main/binary-{arch}/Packages.xz")).decode()
    package = _package(index)
    deb = _get(f"{MIRROR}/{package['Filename']}")
    if hashlib.sha256(deb).hexdigest() != package.get("SHA256"):
        raise GitleaksUnavailable(f"{package['Filename']} does not match the SHA-256 Debian's index gives")
    with tarfile.open(fileobj=io.BytesIO(_member(deb, "data.tar")), mode="r:*") as data:
        member = data.extractfile("./usr/bin/gitleaks")
        if member is None:
            raise GitleaksUnavailable("the gitleaks package holds no usr/bin/gitleaks")
        partial = binary.with_suffix(".part")
        partial.write_bytes(member.read())
    partial.chmod(0o755)
    problem = _unusable(partial)
    if problem:
        raise GitleaksUnavailable(f"Debian's gitleaks {package.get('Version')}: {problem}")
    partial.replace(binary)
    (binary.parent / "gitleaks.version").write_text(package.get("Version", "?") + "\n")


if __name__ == "__main__":
    try:
        print(ensure_gitleaks())
    except GitleaksUnavailable as exc:
        print(f"gitleaks: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
