// LCM's OpenCode plugin: written by `lcm install opencode`, removed by `lcm uninstall opencode`.
// It mirrors each session into $XDG_DATA_HOME/opencode/lcm-sessions/<session id>.jsonl (one line per
// finished message, in OpenCode's own shape) and runs LCM's hooks: SessionStart and UserPromptSubmit add
// LCM's context to the system prompt, the end of every turn ingests (Stop), compaction runs PreCompact, and
// each finished tool call is a PostToolUse (its tool, command or file, exit code; never its output, but for
// a failed call the start of it, which LCM caps and redacts again).
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

const LCM = __LCM_ARGV__;
const AGENT = "opencode";
const PROTOCOL = "lcm_format_opencode.hooks";
const ERROR_CHARS = 1200;
const TIMEOUT_MS = { SessionStart: 10000, UserPromptSubmit: 5000, PreCompact: 10000 };

function sessionsDir() {
  return join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode", "lcm-sessions");
}

function hookArgs(event) {
  return [...LCM.slice(1), "hook", event, "--agent", AGENT, "--protocol", PROTOCOL];
}

// A hook whose answer is needed (the context it prints); "" when it fails or times out.
function ask(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(LCM[0], hookArgs(event), { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS[event]);
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => { clearTimeout(timer); resolve(""); });
    child.on("close", () => { clearTimeout(timer); resolve(contextOf(out)); });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
  });
}

// A hook nobody waits for (the end of a turn): OpenCode may exit right after it, so the payload goes
// through a file and the hook runs detached.
function tell(event, payload) {
  const file = join(tmpdir(), `lcm-opencode-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  try {
    writeFileSync(file, JSON.stringify({ hook_event_name: event, ...payload }), { mode: 0o600 });
    spawn("/bin/sh", ["-c", 'f=$1; shift; "$@" < "$f"; rm -f "$f"', "lcm-hook", file, LCM[0], ...hookArgs(event)],
      { detached: true, stdio: "ignore" }).unref();
  } catch {
    // never break OpenCode
  }
}

function contextOf(output) {
  for (const line of output.split("\n")) {
    try {
      const text = JSON.parse(line)?.hookSpecificOutput?.additionalContext;
      if (typeof text === "string" && text) return text;
    } catch {
      // not the hook's JSON line
    }
  }
  return "";
}

function finished(message) {
  return message.info.role !== "assistant" || Boolean(message.info.time?.completed || message.info.error);
}

// One session's mirror: the lines already written and what OpenCode's events said since.
class Mirror {
  constructor(id) {
    this.id = id;
    this.path = join(sessionsDir(), `${id}.jsonl`);
    this.info = undefined;
    this.messages = new Map();
    this.written = new Set();
    if (existsSync(this.path)) {
      for (const line of readFileSync(this.path, "utf8").split("\n")) {
        try {
          const record = JSON.parse(line);
          this.written.add(record.type === "session" ? "session" : record.info.id);
        } catch {
          // a torn last line: LCM's reader quarantines it
        }
      }
    }
  }

  message(info) {
    const found = this.messages.get(info.id);
    this.messages.set(info.id, { info, parts: found ? found.parts : new Map() });
  }

  part(part) {
    if (!this.messages.has(part.messageID)) this.messages.set(part.messageID, { info: undefined, parts: new Map() });
    this.messages.get(part.messageID).parts.set(part.id, part);
  }

  // Append the session line and every finished message not written yet (synchronously).
  flush(all = false) {
    const lines = [];
    if (!this.written.has("session") && this.info) {
      lines.push({ type: "session", info: this.info });
      this.written.add("session");
    }
    if (this.written.has("session")) {
      for (const id of [...this.messages.keys()].sort()) {
        const entry = this.messages.get(id);
        if (this.written.has(id) || !entry.info) continue;
        const message = { info: entry.info, parts: [...entry.parts.values()].sort((a, b) => (a.id < b.id ? -1 : 1)) };
        if (!all && !finished(message)) continue;
        lines.push({ type: "message", ...message });
        this.written.add(id);
        this.messages.delete(id);
      }
    }
    if (lines.length) {
      mkdirSync(sessionsDir(), { recursive: true, mode: 0o700 });
      appendFileSync(this.path, lines.map((line) => JSON.stringify(line) + "\n").join(""), { mode: 0o600 });
    }
  }
}

export const LcmPlugin = async ({ client, directory }) => {
  const mirrors = new Map();
  const context = new Map(); // session id -> restored context (a promise)
  const recall = new Map(); // session id -> the latest prompt's recall
  const calls = new Map(); // tool call id -> the arguments LCM keeps of it (until the call ends)

  const mirror = (id) => {
    if (!mirrors.has(id)) mirrors.set(id, new Mirror(id));
    return mirrors.get(id);
  };
  const base = (id) => ({ session_id: id, transcript_path: mirror(id).path, cwd: directory });

  // Bring the mirror up to date from OpenCode's API (sessions from before this process, or before LCM).
  async function catchUp(id) {
    const own = mirror(id);
    if (!own.info) own.info = (await client.session.get({ path: { id } })).data;
    for (const message of (await client.session.messages({ path: { id } })).data ?? []) {
      if (own.written.has(message.info.id) || !finished(message)) continue;
      own.message(message.info);
      for (const part of message.parts) own.part(part);
    }
    own.flush();
    return own;
  }

  function restore(id, source) {
    if (!context.has(id) || source) {
      context.set(id, (async () => {
        const own = await catchUp(id);
        if (own.info?.parentID) return ""; // a sub-agent's session: nothing of the project's past
        const resumed = [...own.written].some((key) => key !== "session");
        return ask("SessionStart", { ...base(id), source: source ?? (resumed ? "resume" : "startup") });
      })().catch(() => ""));
    }
    return context.get(id);
  }

  return {
    event: async ({ event }) => {
      const p = event.properties ?? {};
      if (event.type === "session.created" || event.type === "session.updated") mirror(p.info.id).info = p.info;
      else if (event.type === "message.updated") mirror(p.info.sessionID).message(p.info);
      else if (event.type === "message.part.updated") mirror(p.part.sessionID).part(p.part);
      else if (event.type === "session.idle") {
        mirror(p.sessionID).flush(true);
        tell("Stop", base(p.sessionID));
      } else if (event.type === "session.compacted") restore(p.sessionID, "compact");
    },
    "chat.message": async (input, output) => {
      await restore(input.sessionID);
      const prompt = output.parts.filter((part) => part.type === "text" && !part.synthetic).map((part) => part.text)
        .join("\n");
      if (prompt) recall.set(input.sessionID, await ask("UserPromptSubmit", { ...base(input.sessionID), prompt }));
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return;
      for (const text of [await restore(input.sessionID), recall.get(input.sessionID)]) {
        if (text) output.system.push(text);
      }
    },
    "tool.execute.before": async (input, output) => {
      const args = output?.args ?? {};
      const kept = {};
      for (const key of ["command", "filePath", "path"]) if (typeof args[key] === "string") kept[key] = args[key];
      calls.set(input.callID, kept);
    },
    "tool.execute.after": async (input, output) => {
      const args = calls.get(input.callID) ?? {};
      calls.delete(input.callID);
      const exit = output?.metadata?.exit;
      const response = {};
      if (Number.isInteger(exit)) response.exit_code = exit;
      if (Number.isInteger(exit) && exit !== 0 && typeof output?.output === "string") {
        response.output = output.output.slice(0, ERROR_CHARS);
      }
      tell("PostToolUse", { ...base(input.sessionID), tool_name: input.tool, tool_input: args, tool_response: response });
    },
    "experimental.session.compacting": async (input) => {
      await catchUp(input.sessionID);
      await ask("PreCompact", base(input.sessionID));
    },
  };
};
