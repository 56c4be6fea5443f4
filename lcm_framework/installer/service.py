"""A user service for the daemon: a systemd user unit (Linux) or a launchd agent (macOS)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import escape

from .changes import FileChange, read_text
from .command import lcm_argv

MARKER = "managed by `lcm install --service`"
SYSTEMD_NAME = "lcm-daemon.service"
LAUNCHD_LABEL = "dev.lcm.daemon"


def service_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    if (platform or sys.platform) == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return config / "systemd" / "user" / SYSTEMD_NAME


def unit_text(env: Mapping[str, str], platform: str | None = None) -> str:
    argv = [*lcm_argv(), "daemon", "start", "--foreground"]
    lcm_home = env.get("LCM_HOME")
    if (platform or sys.platform) == "darwin":
        args = "".join(f"    <string>{escape(a)}</string>\n" for a in argv)
        environment = (f"  <key>EnvironmentVariables</key>\n  <dict>\n    <key>LCM_HOME</key>\n"
                       f"    <string>{escape(lcm_home)}</string>\n  </dict>\n") if lcm_home else ""
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<!-- {MARKER} -->\n"
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            '<plist version="1.0">\n<dict>\n'
            f"  <key>Label</key>\n  <string>{LAUNCHD_LABEL}</string>\n"
            f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n{environment}"
            "  <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <true/>\n"
            "</dict>\n</plist>\n"
        )
    import shlex

    environment = f"Environment=LCM_HOME={shlex.quote(lcm_home)}\n" if lcm_home else ""
    return (
        f"# {MARKER}\n"
        "[Unit]\nDescription=LCM daemon (lossless context management for coding agents)\n\n"
        f"[Service]\nType=simple\nExecStart={shlex.join(argv)}\n{environment}"
        "Restart=on-failure\nRestartSec=2\n\n"
        "[Install]\nWantedBy=default.target\n"
    )


def service_change(env: Mapping[str, str], *, install: bool, platform: str | None = None) -> FileChange:
    path = service_path(env, platform)
    before = read_text(path)
    if install:
        if before is not None and MARKER not in before:
            return FileChange(path, before, before, (f"{path} exists and is not LCM's: left unchanged",))
        return FileChange(path, before, unit_text(env, platform))
    ours = before is not None and MARKER in before
    return FileChange(path, before, None if ours else before)


def activation_hint(platform: str | None = None) -> str:
    if (platform or sys.platform) == "darwin":
        return f"launchctl load -w ~/Library/LaunchAgents/{LAUNCHD_LABEL}.plist"
    return f"systemctl --user daemon-reload && systemctl --user enable --now {SYSTEMD_NAME}"
