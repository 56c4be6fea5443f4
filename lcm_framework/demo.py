"""``./dev demo``: LCM's main job end to end on the embedded default (SQLite, no API key).

Imports your own agent sessions when there are any in the default directories
of the installed formats (into your real ``$LCM_HOME``), otherwise the sample
sessions bundled in ``formats/samples``
(into a throwaway ``.lcm-demo`` home inside the checkout). Then compacts every
imported project, answers a question about an old part of a session with
``lcm search`` (natural language, no exact words needed) and reads the answer
back verbatim, greps for a detail and expands the covering summary back to the
original message. Every step is a real ``lcm`` command, printed as it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "formats" / "samples"


def _lcm(*args: str, env: dict[str, str]) -> None:
    """Run a command the way a user would, showing it and its output."""
    shown = " ".join(f"'{a}'" if " " in a else a for a in args)
    print(f"\n$ lcm {shown}", flush=True)
    result = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], env=env)
    no_match = result.returncode == 1 and "grep" in args
    if result.returncode != 0 and not no_match:
        raise SystemExit(f"demo: `lcm {args[0]}` failed with exit status {result.returncode}")


def _query(*args: str, env: dict[str, str]) -> dict[str, Any]:
    """Run a ``--json`` command quietly and return its result."""
    result = subprocess.run(
        [sys.executable, "-m", "lcm_framework.cli.main", *args, "--json"], env=env, text=True, capture_output=True
    )
    return json.loads(result.stdout) if result.returncode == 0 and result.stdout.strip() else {}


def _user_has_sessions(env: dict[str, str]) -> bool:
    """Whether ``lcm import`` (no path) would find a transcript: any file a format discovers in its default roots."""
    import io

    from .kernel.plugins import build_plugins

    formats = build_plugins(env, stderr=io.StringIO()).formats().values()
    return any(next(iter(fmt.discover(root.expanduser())), None) is not None
               for fmt in formats for root in fmt.default_roots(env))


def _answer(question: str, env: dict[str, str]) -> None:
    """A question in plain words about an old, compacted part of a session, and its answer verbatim."""
    ranked = _query("search", question, "--all-projects", "--limit", "3", env=env)
    if not isinstance(ranked, list) or not ranked:
        print(f"\ndemo: no stored message answers {question!r}; try `./dev demo --ask QUESTION`")
        return
    print(f"\ndemo: asking about an old part of a session: {question!r}")
    _lcm("search", question, "--all-projects", "--limit", "3", env=env)
    _lcm("describe", ranked[0]["id"], "--all-projects", env=env)


def main() -> None:
    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    needle = "Address already in use"
    question = "why did the integration tests fail when they ran in parallel?"
    sources: list[str] = []  # none: every format's default directories
    if "--samples" not in sys.argv and _user_has_sessions(env):
        print("demo: importing your own sessions into", env.get("LCM_HOME", "~/.lcm"))
        needle = sys.argv[sys.argv.index("--grep") + 1] if "--grep" in sys.argv else "error"
        question = sys.argv[sys.argv.index("--ask") + 1] if "--ask" in sys.argv else "what caused the last error?"
    else:
        home = REPO / ".lcm-demo"
        shutil.rmtree(home, ignore_errors=True)
        env["LCM_HOME"] = str(home)
        sources = [str(SAMPLES)]
        print(f"demo: no sessions of yours found; using the bundled samples (LCM_HOME={home})")

    _lcm("import", *sources, env=env)
    roots = [p["root"] for p in _query("stats", env=env).get("projects", [])]
    for root in roots:
        _lcm("--project", root, "compact", "--all", env=env)
    if not roots:
        raise SystemExit("demo: nothing was imported")
    _answer(question, env)

    found = None
    for root in roots:
        groups = _query("--project", root, "grep", needle, env=env).get("groups") or []
        covering = [g for g in groups if g.get("summary_id")]
        if covering:
            found = (root, covering[0]["summary_id"])
            break
    if found is None:
        print(f"\ndemo: nothing compacted mentions {needle!r}; try `./dev demo --grep WORD`")
        return
    root, summary_id = found
    _lcm("--project", root, "grep", needle, env=env)
    _lcm("stats", env=env)
    _lcm("--project", root, "describe", summary_id, env=env)
    _lcm("--project", root, "expand", summary_id, "--include-messages", "--token-cap", "1500", env=env)
    _lcm("--project", root, "verify", env=env)
    print(
        "\ndemo: done. The summary above replaced the original turns in the agent's context, and "
        "`lcm expand` recovered them verbatim. Next: `lcm install` wires LCM into your coding agents."
    )


if __name__ == "__main__":
    main()
