// Drives `sandbox-runner serve` over stdio with the official MCP
// TypeScript SDK client, as an agent would.  Prints one line per check:
// "RESULT 0|1 name" (0 = passed), and "# ..." diagnostics; the shell test
// turns them into TAP.
//   node stdio-client.mjs SR_BIN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const bin = process.argv[2];
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};

const transport = new StdioClientTransport({
  command: bin,
  args: ["serve"],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "sandbox-runner-test", version: "1.0.0" });
await client.connect(transport);

const info = client.getServerVersion();
check(info?.name === "sandbox-runner", "initialize: the server names itself", info);
check(client.getServerCapabilities()?.tools !== undefined, "initialize: it offers tools");

await client.ping();
check(true, "ping is answered");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
const expected = ["audit_query", "close_session", "create_session", "default_set", "env", "file_patch", "file_read",
  "file_search", "file_write", "get_execution_history", "list_artifacts", "list_sessions",
  "list_supported_languages", "machine_list", "read_artifact", "run_code", "shell_exec", "shell_list",
  "shell_new", "shell_read", "shell_remove", "upload_file", "write_stdin"];
check(JSON.stringify(names) === JSON.stringify(expected), "tools/list lists every tool", names);
check(tools.every((t) => t.title && t.description && t.inputSchema && t.outputSchema && t.annotations),
  "every tool has a title, a description, schemas and annotations", tools.map((t) => t.name));
const runCode = tools.find((t) => t.name === "run_code");
check(runCode?.inputSchema?.required?.includes("code") && runCode?.outputSchema?.properties?.status,
  "run_code has input and output schemas");

const run = async (language, code, extra = {}, options = {}) =>
  client.callTool({ name: "run_code", arguments: { language, code, ...extra } }, undefined, options);

let r = await run("python", "print(1)");
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "1\n" && !r.isError,
  "run_code python print(1)", r);
check(r.content?.length === 1 && r.content[0].type === "text"
  && /^1\n\[success, exit code 0, \d+ ms\]$/.test(r.content[0].text),
  "the text block is the output then a line of status, not JSON", r.content);

// Output sized per call: max_output counts stdout and stderr together
// (each cut stream ends with the runner's truncation marker), defaults
// to the configured max_output (100 KiB) and is capped at
// max_output_ceiling (1 MiB).
const marker = /\n\[sandbox-runner: output truncated after (\d+) bytes; (\d+) bytes dropped\]\n$/;
const kept = (text) => text?.replace(marker, "");
r = await run("python", "import sys; print('o' * 5000); print('e' * 5000, file=sys.stderr)", { max_output: 1000 });
let s = r.structuredContent;
check(kept(s?.stdout)?.length + kept(s?.stderr)?.length === 1000 && kept(s.stdout).length === 500
  && s.stdout.match(marker)?.slice(1).join() === "500,4501" && s.stdout_truncated && s.stderr_truncated
  && s.stdout_bytes === 5001 && s.max_output === 1000
  && /\[success, exit code 0, \d+ ms, output truncated \(max_output 1000\)\]$/.test(r.content?.[0]?.text),
  "max_output 1000 returns 1000 bytes of stdout and stderr together, each cut one saying so", s);
r = await run("python", "print('x' * 1048576)");
s = r.structuredContent;
check(s?.max_output === 102400 && kept(s.stdout).length === 102400 && s.stdout_truncated
  && s.stdout.match(marker)?.slice(1).join() === "102400,946177" && s.stdout_bytes === 1048577
  && Buffer.byteLength(r.content[0].text) < 103000, "a 1 MB print returns the default 100 KiB, once in the text", s?.stdout_bytes);
r = await run("python", "print('x' * 3000000)", { max_output: 50000000 });
s = r.structuredContent;
check(s?.max_output === 1048576 && kept(s.stdout).length === 1048576 && s.stdout_truncated,
  "a max_output over the ceiling is capped at max_output_ceiling", s?.max_output);

r = await run("python", "import sys; sys.stdout.buffer.write(b'\\xff\\xfe ok'); sys.exit(3)");
check(r.structuredContent?.status === "error" && r.structuredContent?.exit_code === 3,
  "a non-zero exit is status error with its code", r.structuredContent);
check(r.structuredContent?.stdout_encoding === "base64"
  && Buffer.from(r.structuredContent.stdout, "base64").equals(Buffer.from([0xff, 0xfe, 0x20, 0x6f, 0x6b])),
  "output that is not UTF-8 comes back as base64, byte for byte", r.structuredContent);

r = await run("cpp", "#include <cstdio>\nint main() { std::puts(\"hi from c++\"); }");
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "hi from c++\n"
  && typeof r.structuredContent?.compile_ms === "number", "run_code cpp compiles and runs", r.structuredContent);
r = await run("cpp", "int main() { return nope; }");
check(r.structuredContent?.status === "compile_error" && /nope/.test(r.structuredContent?.stderr),
  "a compile failure is compile_error with the compiler's message", r.structuredContent);

r = await run("python", "while True: pass", { timeout_seconds: 1 });
check(r.structuredContent?.status === "timeout", "a run past its timeout is status timeout", r.structuredContent);

for (const [args, code, name] of [
  [{ language: "cobol", code: "DISPLAY 1" }, "unknown_language", "an unknown language"],
  [{ language: "python", code: "" }, "empty_code", "empty code"],
  [{ language: "python", code: "#".repeat(60000) }, "code_too_large", "code over 50 KiB"],
  [{ language: "python", code: "print(1)", timeout_seconds: 999 }, "timeout_too_large", "a timeout over the ceiling"],
  [{ language: "python" }, "invalid_arguments", "a missing code argument"],
  [{ language: "python", code: 5 }, "invalid_arguments", "code that is not a string"],
  [{ language: "python", code: "print(1)", bogus: 1 }, "invalid_arguments", "an unknown argument"],
]) {
  const e = await client.callTool({ name: "run_code", arguments: args });
  let parsed = {};
  try { parsed = JSON.parse(e.content?.[0]?.text ?? "{}"); } catch { }
  check(e.isError === true && parsed.error?.code === code && parsed.error?.message,
    `${name} is an isError result with code ${code}`, e);
}

let progress = [];
r = await run("python", "import time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.2)", {},
  { onprogress: (p) => progress.push(p) });
check(r.structuredContent?.status === "success" && progress.length >= 2
  && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
  "progress notifications arrive, increasing", progress);
check(progress.some((p) => p._meta?.["sandbox-runner/stream"] === "stdout" && /^[0-2]\n/.test(p.message ?? "")),
  "progress carries the output", progress);

// Concurrent, not two at a time nor one after another: three 5 s runs
// that way take 10 s or more; the rest of the 9.5 s is room for starting
// three containers on a loaded machine.
const t0 = Date.now();
const parallel = await Promise.all([1, 2, 3].map(() => run("python", "import time; time.sleep(5); print('done')")));
const wall = Date.now() - t0;
check(parallel.every((p) => p.structuredContent?.stdout === "done\n") && wall < 9500,
  `three 5 s runs at once take ${wall} ms (run concurrently)`, wall);

const abort = new AbortController();
const started = Date.now();
const cancelled = run("python", "while True: pass", { timeout_seconds: 20 }, { signal: abort.signal });
setTimeout(() => abort.abort("test"), 700);
let rejected = false;
try { await cancelled; } catch { rejected = true; }
// At once: well within the run's 20 s, with room for a loaded machine.
check(rejected && Date.now() - started < 10000, "a cancelled call ends at once", Date.now() - started);
console.log("CANCELLED_AT " + Date.now());
// The server kills the run; give it a moment, then the shell looks.
await new Promise((res) => setTimeout(res, 1500));
r = await run("python", "print('still serving')");
check(r.structuredContent?.stdout === "still serving\n", "the server serves on after a cancel");

const langs = await client.callTool({ name: "list_supported_languages", arguments: {} });
const py = langs.structuredContent?.languages?.find((l) => l.language === "python");
const cpp = langs.structuredContent?.languages?.find((l) => l.language === "cpp");
check(py?.available === true && cpp?.compiled === true && cpp?.available === true,
  "list_supported_languages lists python and cpp as available", langs.structuredContent);
check(/^Python 3\.\d+/.test(py?.version ?? "") && /^g\+\+ \(Debian [^)]+\) \d+/.test(cpp?.version ?? ""),
  "and their versions, as their images' builds recorded them", [py?.version, cpp?.version]);

const hist = await client.callTool({ name: "get_execution_history", arguments: { limit: 3 } });
const runs = hist.structuredContent?.runs ?? [];
check(runs.length === 3 && runs[0].code_preview === "print('still serving')"
  && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(runs[0].timestamp),
  "get_execution_history returns the newest runs first with ISO timestamps", runs);
// A run in a session is recorded with the session's id.
const made = await client.callTool({ name: "create_session", arguments: { image: "python" } });
const sid = made.structuredContent?.session_id;
await client.callTool({ name: "run_code", arguments: { session_id: sid, language: "python", code: "print('in a session')" } });
const inSession = await client.callTool({ name: "get_execution_history", arguments: { session_id: sid } });
check(inSession.structuredContent?.runs?.length === 1 && inSession.structuredContent.runs[0].session_id === sid
  && inSession.structuredContent.runs[0].code_preview === "print('in a session')",
  "a run in a session is in the history with the session's id, and found by it", inSession.structuredContent);
await client.callTool({ name: "close_session", arguments: { session_id: sid } });
const all = await client.callTool({ name: "get_execution_history", arguments: { limit: 100 } });
check(!all.structuredContent.runs.some((x) => x.language === "cobol" || x.code_preview === ""),
  "invalid requests were not recorded as runs", all.structuredContent.runs.map((x) => x.code_preview));

const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await client.setLoggingLevel("debug");
await run("python", "pass");
await new Promise((res) => setTimeout(res, 200));
check(logs.some((l) => l.level === "debug" && /tools\/call run_code/.test(l.data)),
  "logging/setLevel debug brings log messages", logs);

let unknownTool = false;
try { await client.callTool({ name: "no_such_tool", arguments: {} }); } catch (e) { unknownTool = /Unknown tool/.test(String(e)); }
check(unknownTool, "an unknown tool is a JSON-RPC error");

await client.close();
check(true, "the client closes the session");
