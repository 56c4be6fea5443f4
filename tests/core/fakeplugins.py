"""Build throwaway third-party plugin distributions on disk (real dist-info + entry points)."""

from __future__ import annotations

from pathlib import Path


def make_distribution(root: Path, dist: str, modules: dict[str, str], entry_points: dict[str, str]) -> Path:
    """Write modules and a ``<dist>-1.0.dist-info`` with ``lcm_framework.plugins`` entry points under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (root / f"{name}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
    lines = ["[lcm_framework.plugins]", *(f"{k} = {v}" for k, v in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
