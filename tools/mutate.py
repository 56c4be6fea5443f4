"""Mutation testing for the modules you changed: does any test notice when the code is subtly wrong?

``./dev mutate`` (``python -m tools.mutate``) plants one small bug at a time in a module (a flipped
comparison, ``and`` for ``or``, an off-by-one constant, a dropped call, ``return None``, ``break`` for
``continue``...), runs that module's tests against it and reports the mutants no test killed. Run it on
what a change touched before calling the change done; ``docs/testing.md`` keeps the kill rates of the
modules users depend on most, which stay at 90% or more.

Mutants run in a private copy of the checkout (``$TMPDIR``), never in the working tree, with that copy
first on ``PYTHONPATH`` so the CLI, daemon and MCP subprocesses the tests start load the mutant too.
Each mutant is one ``pytest -x`` run of the module's own tests (``TARGETS``) under a timeout; a mutant
that makes the tests fail, error or time out is killed. ``--max N`` samples N mutants per path given
(a module or a package folder), evenly spread and the same in every run, to bound a run on a busy machine.

Why not mutmut or cosmic-ray: mutmut 3 runs the mutants in forked in-process test runs, which the
subprocesses most LCM tests start do not see; cosmic-ray needs a session database and a configuration
per module. Here a module's mutants and its tests are named in one table, in ~250 lines.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOP_LEVEL = ("lcm_framework", "plugins", "formats", "prompts", "tests", "contrib", "pyproject.toml")
"""What the private copy holds: the code, the tests and the configuration they read."""
IMPORT_ROOTS = (".", "plugins", "formats", "prompts")

TARGETS: dict[str, tuple[str, ...]] = {
    "lcm_framework/scrub/": (
        "tests/scrub/test_overlap.py", "tests/scrub/test_rule_scope.py", "tests/scrub/test_audit_marks.py",
        "tests/scrub/test_record_gate.py", "tests/scrub/test_structural_keys.py",
        "tests/scrub/test_scrub_properties.py", "tests/scrub/test_beyond_gitleaks.py",
        "tests/scrub/test_gitleaks_packs.py", "tests/scrub/test_scan_report.py",
        "tests/scrub/test_independent_reference.py",
    ),
    "lcm_framework/transcripts/reader.py": ("tests/reader",),
    "lcm_framework/recall/": (
        "tests/recall/test_describe_memory.py", "tests/recall/test_grep_meta.py", "tests/recall/test_search.py",
        "tests/recall/test_layering.py", "tests/recall/test_cli.py",
    ),
    "lcm_framework/portable/": ("tests/portable",),
    "lcm_framework/ingest/resume.py": (
        "tests/ingest/test_resume_point.py", "tests/ingest/test_import.py", "tests/ingest/test_recovery.py",
    ),
    "lcm_framework/sqlite_files.py": (
        "tests/sqlite/test_private_files.py", "tests/sqlite/test_lock_safety.py", "tests/sqlite/test_files.py",
    ),
    "lcm_framework/daemon/server.py": (
        "tests/daemon/test_error_status.py", "tests/daemon/test_service.py", "tests/daemon/test_daemon_http.py",
        "tests/daemon/test_hostile_requests.py",
    ),
}
"""Module (or package folder) -> the tests that exercise it. The first match, longest prefix first, wins."""
REPORTED = tuple(TARGETS)
"""``--all``: the modules whose kill rates docs/testing.md keeps."""

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
}


@dataclass(frozen=True, slots=True)
class Mutant:
    path: str
    line: int
    column: int
    operator: str
    original: str
    mutated: str


@dataclass(slots=True)
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout
    seconds: float


def _mutations(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(operator name, replacement node) for each way of mutating ``node`` itself."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARE_SWAP:
                new = copy.deepcopy(node)
                new.ops[i] = _COMPARE_SWAP[type(op)]()
                yield "compare", new
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
        yield "arithmetic", ast.BinOp(node.left, _BINOP_SWAP[type(node.op)](), node.right)
    elif isinstance(node, ast.BoolOp):
        yield "boolean", ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop-not", node.operand
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield "constant", ast.Constant(not node.value)
        elif isinstance(node.value, int):
            yield "constant", ast.Constant(node.value + 1)
    elif isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
        yield "return-none", ast.Return(ast.Constant(None))
    elif isinstance(node, ast.Break):
        yield "break-continue", ast.Continue()
    elif isinstance(node, ast.Continue):
        yield "break-continue", ast.Break()
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOP_SWAP:
        yield "arithmetic", ast.AugAssign(node.target, _BINOP_SWAP[type(node.op)](), node.value)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
        yield "drop-call", ast.Pass()


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _skipped(node: ast.AST) -> bool:
    """Parts never mutated: annotations, docstrings, f-strings, ``TYPE_CHECKING`` blocks, ``__all__``."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
        return True
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node worth mutating: code inside functions (module constants and signatures are left alone)."""
    for child in ast.iter_child_nodes(node):
        if _skipped(child):
            continue
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in child.body:
                if not _skipped(stmt):
                    yield stmt
                    yield from _inner(stmt)
        else:
            yield from _walk(child)


def _inner(node: ast.AST) -> Iterator[ast.AST]:
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "type_comment"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST) and not _skipped(child):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    yield from _walk(ast.Module(body=[child], type_ignores=[]))
                    continue
                yield child
                yield from _inner(child)


def mutants(path: str, source: str) -> list[tuple[Mutant, str]]:
    """Every mutant of ``source`` (a module at ``path``) with its mutated source, in source order."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    found: list[tuple[Mutant, str]] = []
    for node in _walk(ast.parse(source)):
        if not isinstance(node, ast.stmt | ast.expr) or node.end_lineno is None:
            continue
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + (node.end_col_offset or 0)
        original = data[start:end].decode()
        for operator, replacement in _mutations(node):
            text = ast.unparse(ast.fix_missing_locations(replacement))
            if isinstance(node, ast.expr):
                text = f"({text})"
            mutated = (data[:start] + text.encode() + data[end:]).decode()
            try:
                if ast.dump(ast.parse(mutated)) == ast.dump(ast.parse(source)):
                    continue
            except SyntaxError:
                continue
            found.append((Mutant(path, node.lineno, node.col_offset + 1, operator, original.splitlines()[0][:100],
                                 text.splitlines()[0][:100]), mutated))
    return found


def tests_for(path: str) -> tuple[str, ...]:
    for prefix in sorted(TARGETS, key=len, reverse=True):
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return TARGETS[prefix]
    raise SystemExit(f"mutate: no tests are named for {path} in TARGETS (tools/mutate.py); pass --tests")


def modules(names: Sequence[str]) -> list[str]:
    """The ``.py`` files under each given path (relative to the repository)."""
    out: list[str] = []
    for name in names:
        path = (REPO / name).resolve()
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        out += [str(f.relative_to(REPO)) for f in files if f.name != "__init__.py" and "__pycache__" not in f.parts]
    return out


def changed() -> list[str]:
    """Python modules of lcm_framework changed since the last commit (staged, unstaged or new)."""
    listed = subprocess.run(["git", "status", "--porcelain", "--", "lcm_framework"], cwd=REPO, text=True,
                            capture_output=True, check=True).stdout
    return sorted({line[3:].split(" -> ")[-1] for line in listed.splitlines() if line.endswith(".py")})


class Sandbox:
    """A private copy of the checkout where one module at a time is replaced by a mutant."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="lcm-mutate-"))
        self.root = self.dir / "main"
        ignore = shutil.ignore_patterns("__pycache__", "build", "*.egg-info", ".hypothesis")
        for name in TOP_LEVEL:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, self.root / name, ignore=ignore)
            elif source.exists():
                shutil.copy2(source, self.root / name)
        if (REPO.parent / "shared").exists():
            (self.dir / "shared").symlink_to(REPO.parent / "shared")  # tests find ../shared/testdata
        path = os.pathsep.join(str(self.root / r) for r in IMPORT_ROOTS)
        self.env = {**os.environ, "PYTHONPATH": path, "LITELLM_OFFLINE_MODE": "true",
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}

    def run(self, tests: Sequence[str], timeout: float) -> tuple[str, float]:
        """``killed``, ``survived`` or ``timeout`` for one pytest run of ``tests`` in the copy."""
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                   "-p", "no:xdist", *tests]
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=self.root, env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            return "timeout", time.monotonic() - started
        except BaseException:
            _kill(process)
            raise
        return ("survived" if code == 0 else "killed"), time.monotonic() - started

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def sample(found: list[tuple[Mutant, str]], limit: int | None) -> list[tuple[Mutant, str]]:
    """At most ``limit`` of ``found``, evenly spread over it (the same ones in every run)."""
    if limit is None or limit >= len(found):
        return found
    return [found[i * len(found) // limit] for i in range(limit)]


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Stop a test run and everything it started (its own session: CLI and daemon children too)."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_area(sandbox: Sandbox, paths: Sequence[str], tests: Sequence[str], limit: int | None,
             log: bool) -> list[Outcome] | None:
    """The outcome of each (sampled) mutant of ``paths``; None when ``tests`` fail without a mutant."""
    found = [m for path in paths for m in mutants(path, (sandbox.root / path).read_text("utf-8"))]
    chosen = sample(found, limit)
    status, baseline = sandbox.run(tests, timeout=1800)
    if status != "survived":
        print(f"mutate: left out: {' '.join(tests)} fail without any mutant", file=sys.stderr)
        return None
    print(f"{len(chosen)} of {len(found)} mutants of {len(paths)} modules; their tests take {baseline:.0f}s",
          file=sys.stderr)
    outcomes: list[Outcome] = []
    for n, (mutant, mutated) in enumerate(chosen, 1):
        target = sandbox.root / mutant.path
        source, stat = target.read_text("utf-8"), target.stat()
        try:
            target.write_text(mutated, "utf-8")
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + n * 1_000_000_000))  # no stale .pyc
            status, seconds = sandbox.run(tests, timeout=max(60.0, 2 * baseline))
        finally:
            target.write_text(source, "utf-8")
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        outcomes.append(Outcome(mutant, status, seconds))
        if log:
            print(f"  {status:8} {mutant.path}:{mutant.line}:{mutant.column} {mutant.operator}: {mutant.original} -> "
                  f"{mutant.mutated}", file=sys.stderr)
    return outcomes


def summary(outcomes: Sequence[Outcome], area: str, tests: Sequence[str]) -> dict[str, object]:
    killed = sum(o.status != "survived" for o in outcomes)
    return {"area": area, "tests": list(tests), "mutants": len(outcomes), "killed": killed,
            "timeouts": sum(o.status == "timeout" for o in outcomes),
            "kill_rate": round(100 * killed / len(outcomes), 1) if outcomes else None,
            "survivors": [asdict(o.mutant) for o in outcomes if o.status == "survived"]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="modules or folders (default: lcm_framework modules changed "
                                                 "since the last commit)")
    parser.add_argument("--all", action="store_true", help="the modules docs/testing.md reports on")
    parser.add_argument("--tests", nargs="+", help="the tests to run (default: the module's TARGETS entry)")
    parser.add_argument("--max", type=int, help="at most this many mutants per path given, evenly spread")
    parser.add_argument("--min-rate", type=float, default=90.0, help="exit 1 below this kill rate (percent)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--quiet", action="store_true", help="no line per mutant")
    args = parser.parse_args(argv)
    areas = list(REPORTED) if args.all else (args.paths or changed())
    if not areas:
        print("mutate: no changed module; name one (./dev mutate lcm_framework/recall/expand.py) or --all")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run removes its copy too
    sandbox = Sandbox()
    results = []
    try:
        for area in areas:
            paths = modules([area])
            if not paths:
                raise SystemExit(f"mutate: no Python module under {area}")
            tests = tuple(args.tests) if args.tests else tests_for(paths[0])
            outcomes = run_area(sandbox, paths, tests, args.max, not args.quiet)
            if outcomes is not None:
                results.append(summary(outcomes, area, tests))
    finally:
        sandbox.close()
    print(f"{'area':45} {'mutants':>7} {'killed':>6} {'rate':>6}")
    for r in results:
        print(f"{r['area']:45} {r['mutants']:>7} {r['killed']:>6} {r['kill_rate']!s:>6}")
        for s in r["survivors"]:  # type: ignore[attr-defined]
            print(f"    survived {s['path']}:{s['line']}:{s['column']} {s['operator']}: {s['original']} -> "
                  f"{s['mutated']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    low = [r for r in results if isinstance(r["kill_rate"], float) and r["kill_rate"] < args.min_rate]
    return 1 if low else 0


if __name__ == "__main__":
    raise SystemExit(main())
