"""Generated sessions with sub-agent runs, in the layouts Claude Code and Codex write (docs/formats.md)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

CWD = "/srv/shop"
SESSION = "0b1e6b9e-5d2c-4b7e-9f0a-2c1d3e4f5a6b"


def _ts(i: int) -> str:
    return f"2025-10-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class Chain:
    """Claude Code records of one thread: each names its parent record (``parentUuid``)."""

    def __init__(self, session_id: str = SESSION, *, sidechain: bool = False, agent_id: str | None = None,
                 start: int = 0) -> None:
        self.base: dict[str, Any] = {"isSidechain": sidechain, "userType": "external", "cwd": CWD,
                                     "sessionId": session_id, "version": "2.0.76", "gitBranch": "main"}
        if agent_id is not None:
            self.base["agentId"] = agent_id
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.clock = start

    def add(self, type_: str, content: Any) -> dict[str, Any]:
        uid = str(uuid.uuid4())
        role = "assistant" if type_ == "assistant" else "user"
        record = {**self.base, "parentUuid": self.parent, "uuid": uid, "timestamp": _ts(self.clock), "type": type_,
                  "message": {"role": role, "content": content}}
        self.records.append(record)
        self.parent, self.clock = uid, self.clock + 1
        return record


def task_call(chain: Chain, call_id: str, prompt: str, *, agent_type: str = "Explore", tool: str = "Task") -> None:
    chain.add("assistant", [{"type": "tool_use", "id": call_id, "name": tool,
                             "input": {"description": "look around", "prompt": prompt,
                                       "subagent_type": agent_type}}])


def task_result(chain: Chain, call_id: str, summary: str, agent_id: str | None = None) -> None:
    text = summary + (f"\nagentId: {agent_id} (for resuming to continue this agent's work if needed)"
                      if agent_id else "")
    chain.add("user", [{"type": "tool_result", "tool_use_id": call_id, "content": [{"type": "text", "text": text}]}])


def run_records(chain: Chain, prompt: str, finding: str, n: int = 0, turns: int = 1) -> list[dict[str, Any]]:
    """A sub-agent run: its prompt, ``turns`` tool calls of its own and their results, what it found."""
    chain.add("user", prompt)
    for turn in range(turns):
        inner = f"toolu_inner_{n}_{turn}_{uuid.uuid4().hex[:6]}"
        chain.add("assistant", [{"type": "text", "text": f"Let me start by {finding}." if turn == 0 else
                                 f"Next, file {turn} of part {n}."},
                                {"type": "tool_use", "id": inner, "name": "Bash", "input": {"command": f"ls src{n}"}}])
        listing = "\n".join(f"src{n}/m{k}.py: def handler_{k}(): return retry(backoff={k * turn})" for k in range(12))
        chain.add("user", [{"type": "tool_result", "tool_use_id": inner,
                            "content": f"main{n}.py util{n}.py\n{listing}"}])
    chain.add("assistant", [{"type": "text", "text": f"Found main{n}.py: {finding} done."}])
    return chain.records


def parent_session(calls: list[tuple[str, str, str | None]], *, tool: str = "Task",
                   work: int = 0) -> list[dict[str, Any]]:
    """A main thread starting one run per ``(call id, prompt, agent id named in the result or None)``,
    each call after ``work`` turns of its own (a file read and its result)."""
    chain = Chain()
    chain.add("user", "please survey the repository")
    for n, (call_id, prompt, _aid) in enumerate(calls):
        for turn in range(work):
            read = f"toolu_read_{n}_{turn}"
            chain.add("assistant", [{"type": "tool_use", "id": read, "name": "Read", "input": {"path": f"f{turn}.py"}}])
            chain.add("user", [{"type": "tool_result", "tool_use_id": read, "content": f"def f{turn}(): return {n}"}])
        task_call(chain, call_id, prompt, tool=tool)
    report = " ".join(f"Module {k} was read; its handlers retry with backoff and log each attempt." for k in range(40))
    for call_id, _prompt, aid in calls:
        task_result(chain, call_id, f"Summary of {call_id}: {report}", aid)
    chain.add("assistant", [{"type": "text", "text": "All surveys are back."}])
    return chain.records


def project_dir(root: Path) -> Path:
    """``<CLAUDE_CONFIG_DIR>/projects/<encoded cwd>``."""
    return root / "projects" / CWD.replace("/", "-")


def current_layout(root: Path, runs: dict[str, str], *, parent: bool = True, meta: bool = True,
                   only_meta_names_the_call: bool = False, turns: int = 1) -> tuple[Path, dict[str, Path]]:
    """``<session>.jsonl`` plus ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``) per run
    (``runs``: agent id -> the finding its run reports); the results name ``agentId``, the meta files
    ``toolUseId``. ``only_meta_names_the_call``: results without ``agentId``, calls with other prompts."""
    folder = project_dir(root)
    calls = [(f"toolu_task_{aid}", f"Survey part {aid} of the repository", aid) for aid in runs]
    if only_meta_names_the_call:
        calls = [(call, f"(reworded) {prompt}", None) for call, prompt, _aid in calls]
    session = folder / f"{SESSION}.jsonl"
    if parent:
        write_jsonl(session, parent_session(calls, tool="Agent"))
    files = {}
    for n, (aid, finding) in enumerate(runs.items()):
        path = folder / SESSION / "subagents" / f"agent-{aid}.jsonl"
        write_jsonl(path, run_records(Chain(sidechain=True, agent_id=aid, start=100 * (n + 1)),
                                      f"Survey part {aid} of the repository", finding, n, turns))
        if meta:
            path.with_name(f"agent-{aid}.meta.json").write_text(json.dumps(
                {"agentType": "Explore", "description": "look around", "toolUseId": f"toolu_task_{aid}",
                 "spawnDepth": 1}))
        files[aid] = path
    return session, files


def older_layout(root: Path, run_id: str, finding: str) -> tuple[Path, Path]:
    """Claude Code 2.0: ``agent-<id>.jsonl`` beside the session, records without ``agentId``, results without it."""
    folder = project_dir(root)
    prompt = "Check the build scripts"
    session = write_jsonl(folder / f"{SESSION}.jsonl", parent_session([("toolu_old", prompt, None)]))
    agent = write_jsonl(folder / f"agent-{run_id}.jsonl", run_records(Chain(sidechain=True, start=50), prompt, finding))
    return session, agent


def in_file_sidechains(prompt: str, findings: list[str]) -> list[dict[str, Any]]:
    """Claude Code 1.0: the runs' sidechain records inside the session's own file, interleaved (parallel
    calls), every run given the same ``prompt``."""
    main = Chain()
    main.add("user", "survey it twice")
    calls = [f"toolu_par_{n}" for n in range(len(findings))]
    for call in calls:
        task_call(main, call, prompt, agent_type="general-purpose")
    runs = [run_records(Chain(sidechain=True, start=200 + 20 * n), prompt, finding, n)
            for n, finding in enumerate(findings)]
    mixed = [record for step in zip(*runs, strict=True) for record in step]
    results = Chain()
    results.parent = main.parent
    for call in calls:
        task_result(results, call, f"Summary of {call}")
    return main.records + mixed + results.records


def codex_pair(root: Path, parent_id: str, child_id: str, finding: str) -> tuple[Path, Path]:
    """A Codex parent rollout calling ``spawn_agent`` and the sub-agent's rollout naming its parent thread."""
    def meta(session_id: str, source: Any) -> dict[str, Any]:
        return {"timestamp": _ts(0), "type": "session_meta", "payload": {
            "id": session_id, "timestamp": _ts(0), "cwd": CWD, "originator": "codex_cli_rs", "cli_version": "0.60.0",
            "source": source, "model_provider": "openai"}}

    def item(n: int, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": _ts(n), "type": "response_item", "payload": payload}

    parent = [meta(parent_id, "cli"),
              item(1, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "delegate"}]}),
              item(2, {"type": "function_call", "name": "spawn_agent", "call_id": "call_spawn",
                       "arguments": json.dumps({"message": "inspect the parser", "agent_type": "worker"})}),
              item(3, {"type": "function_call_output", "call_id": "call_spawn",
                       "output": json.dumps({"agent_id": child_id})})]
    child = [meta(child_id, {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1,
                                                            "agent_nickname": "Euler", "agent_role": "worker"}}}),
             item(1, {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                      "text": "inspect the parser"}]}),
             item(2, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": finding}]})]
    day = root / "sessions" / "2025" / "10" / "01"
    return (write_jsonl(day / f"rollout-2025-10-01T10-00-00-{parent_id}.jsonl", parent),
            write_jsonl(day / f"rollout-2025-10-01T10-00-05-{child_id}.jsonl", child))
