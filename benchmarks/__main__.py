"""Run every benchmark module (or the ones named on the command line)."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    here = [str(Path(__file__).parent)]
    names = sorted(m.name[6:] for m in pkgutil.iter_modules(here) if m.name.startswith("bench_"))
    parser = argparse.ArgumentParser(prog="./dev bench", description="Run LCM benchmarks.")
    parser.add_argument("names", nargs="*", choices=[*names, []], metavar="NAME", help=f"one of: {', '.join(names)}")
    parser.add_argument("--quick", action="store_true", help="smaller data sets (a smoke run, not the targets)")
    args = parser.parse_args()
    for name in args.names or names:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"benchmarks.bench_{name}").main(quick=args.quick)
        print(f"({name}: {time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
