"""The real gitleaks binary, for the differential test and ``./dev bench scrub``.

``$GITLEAKS_BIN`` or a ``gitleaks`` on PATH is used when it has ``gitleaks dir`` (8.19 and later; an older
one given by ``$GITLEAKS_BIN`` is an error, one on PATH is passed over). Otherwise Debian's build is fetched once
into ``.cache/tools`` (``LCM_TOOLS_CACHE`` moves it) by Debian's own client: ``apt-get download gitleaks``
from the unstable suite of the Debian mirror this machine's apt sources already name, with apt's own
lists, cache and signature checks (the archive keyring) kept in a private state folder beside the binary,
so the system's apt state is never touched; ``dpkg-deb -x`` unpacks it. Debian's is a static Go build of
the upstream release, and unstable carries a release recent enough for ``gitleaks dir`` and the upstream
configuration's schema (stable's 8.16 has no ``dir``). ``python -m tests.scrub.gitleaks_binary`` fetches it
ahead of a run (``.ci/run`` does).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITE = "sid"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
TIMEOUT_S = 300


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


def debian_mirror(sources: tuple[Path, ...] = APT_SOURCES) -> str:
    """The Debian archive URI this machine's apt sources name (one-line ``deb`` entries or deb822 ``URIs:``),
    security mirrors left out."""
    files = [f for s in sources for f in ([s] if s.is_file() else sorted(s.glob("*")) if s.is_dir() else [])]
    for path in files:
        text = path.read_text(errors="replace")
        found = re.findall(r"^\s*URIs:\s*(\S+)", text, re.MULTILINE) + re.findall(
            r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)", text, re.MULTILINE)
        for uri in found:
            if "debian" in uri and "security" not in uri:
                return uri.rstrip("/")
    raise GitleaksUnavailable("this machine's apt sources name no Debian mirror to fetch gitleaks from")


def _apt(state: Path, *args: str, cwd: Path | None = None) -> None:
    options = [f"-oDir::Etc::SourceList={state / 'sources.list'}", "-oDir::Etc::SourceParts=/dev/null",
               f"-oDir::State::Lists={state / 'lists'}", f"-oDir::Cache={state / 'cache'}", "-qq"]
    try:
        done = subprocess.run(["apt-get", *options, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitleaksUnavailable(f"apt-get {args[0]}: {exc}") from None
    if done.returncode != 0:
        raise GitleaksUnavailable(f"apt-get {args[0]} failed: {done.stderr.strip()[-400:]}")


def _fetch(binary: Path) -> None:
    if not sys.platform.startswith("linux") or shutil.which("apt-get") is None or not KEYRING.exists():
        raise GitleaksUnavailable("no Debian apt-get (with the archive keyring) here to fetch gitleaks with")
    state = binary.parent / "apt"
    for sub in ("lists/partial", "cache/archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text(f"deb [signed-by={KEYRING}] {debian_mirror()} {SUITE} main\n")
    _apt(state, "update")
    with tempfile.TemporaryDirectory(dir=binary.parent) as scratch:
        _apt(state, "download", "gitleaks", cwd=Path(scratch))
        deb = next(Path(scratch).glob("gitleaks_*.deb"), None)
        if deb is None:
            raise GitleaksUnavailable(f"apt-get download gitleaks left no package in {scratch}")
        unpacked = Path(scratch) / "unpacked"
        done = subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0 or not (unpacked / "usr/bin/gitleaks").is_file():
            raise GitleaksUnavailable(f"cannot unpack {deb.name}: {done.stderr.strip()[:200]}")
        partial = binary.with_suffix(".part")
        shutil.copyfile(unpacked / "usr/bin/gitleaks", partial)
        version = deb.name.split("_")[1]
    partial.chmod(0o755)
    problem = _unusable(partial)
    if problem:
        raise GitleaksUnavailable(f"Debian's gitleaks {version}: {problem}")
    partial.replace(binary)
    (binary.parent / "gitleaks.version").write_text(version + "\n")


if __name__ == "__main__":
    try:
        print(ensure_gitleaks())
    except GitleaksUnavailable as exc:
        print(f"gitleaks: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
