"""What the core's validating wrapper (``lcm_framework.storage.checked``) costs on the SQLite backend.

The same calls run on one project database three ways, alternating rounds, in CPU time: through the
wrapper; on the driver's own scope after calling the same rule directly (what each adapter did before the
wrapper existed); and on the driver with no validation. Target: the wrapper's dispatch (first vs second)
within 5 % on batch appends (what ``lcm import`` does); the rules' own cost and the per-call cost of a
small read are printed for reference.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.call_rules import declared_rule
from lcm_framework.storage.checked import storage_driver
from lcm_framework.storage.contracts import ConversationRepository
from lcm_framework.storage.models import NewMessage, NewPart, PartKind, ProjectRef, Role
from lcm_framework.storage.selection import open_backend
from lcm_framework.storage.validation import Validator

TARGET_BATCH_OVERHEAD = 0.05


def _cpu(fn: Callable[[], Any], rounds: int) -> float:
    started = time.process_time()
    for _ in range(rounds):
        fn()
    return time.process_time() - started


def main(quick: bool = False) -> None:
    batches, reads, repeats = (20, 2000, 3) if quick else (100, 20_000, 5)
    with tempfile.TemporaryDirectory() as home:
        config = load_config(env={"LCM_HOME": home}, project=Path(home), plugins=build_plugins())
        factory = open_backend(config, "sqlite", plugins=build_plugins(config.env))
        checked = factory.open_project(ProjectRef("b" * 64, home))
        driver: Any = storage_driver(checked)
        batch = [NewMessage(Role.ASSISTANT, f"message {i} with some words to index", 12,
                            parts=[NewPart(PartKind.TEXT, text=f"message {i}")]) for i in range(100)]
        check = Validator("sqlite", "conversations", checked.project_id)
        append_rule = declared_rule(ConversationRepository.append_messages)
        read_rule = declared_rule(ConversationRepository.get_conversation)
        assert append_rule is not None and read_rule is not None

        def ruled_append(c: int) -> None:
            append_rule(check, c, batch)
            driver.conversations.append_messages(c, batch)

        def ruled_read(c: int) -> None:
            read_rule(check, c)
            driver.conversations.get_conversation(c)

        ways: dict[str, tuple[Callable[[int], Any], Callable[[int], Any]]] = {
            "checked": (lambda c: checked.conversations.append_messages(c, batch),
                        lambda c: checked.conversations.get_conversation(c)),
            "driver+rule": (ruled_append, ruled_read),
            "driver": (lambda c: driver.conversations.append_messages(c, batch),
                       lambda c: driver.conversations.get_conversation(c)),
        }
        cids = {name: checked.conversations.create_conversation(name).conversation_id for name in ways}
        totals = {name: [0.0, 0.0] for name in ways}
        for _ in range(repeats * batches):  # interleaved call by call, so load changes hit every way alike
            for name, (append, _) in ways.items():
                totals[name][0] += _cpu(partial(append, cids[name]), 1)
        for _ in range(repeats * reads // 100):
            for name, (_, read) in ways.items():
                totals[name][1] += _cpu(partial(read, cids[name]), 100)
        checked.close()
        factory.close()
    dispatch = totals["checked"][0] / totals["driver+rule"][0] - 1
    rules_cost = totals["driver+rule"][0] / totals["driver"][0] - 1
    verdict = "ok" if dispatch <= TARGET_BATCH_OVERHEAD else "MISSED"
    print(f"append_messages x100 rows, {batches * repeats} batches (s CPU): "
          + ", ".join(f"{n} {t[0]:.3f}" for n, t in totals.items()))
    print(f"  wrapper dispatch {dispatch:+.1%} (target <= {TARGET_BATCH_OVERHEAD:.0%}: {verdict}); "
          f"the rules themselves {rules_cost:+.1%} (paid before too, inside each adapter)")
    per_read_us = (totals["checked"][1] - totals["driver+rule"][1]) / (reads * repeats) * 1e6
    print(f"get_conversation, {reads * repeats} calls (s CPU): "
          + ", ".join(f"{n} {t[1]:.3f}" for n, t in totals.items())
          + f"; wrapper dispatch {per_read_us:+.2f} us per call")


if __name__ == "__main__":
    main()
