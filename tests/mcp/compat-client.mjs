// The drop-in names through the official MCP TypeScript SDK client, over
// stdio: each replaced server's tools called with that server's argument
// names and checked against its result fields.  Prints "RESULT 0|1 name"
// lines and "# ..." diagnostics for the shell test.
//   node compat-client.mjs SR_BIN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const bin = process.argv[2];
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const connect = async (env = {}) => {
  const transport = new StdioClientTransport({ command: bin, args: ["serve"],
    env: { ...process.env, ...env }, stderr: "inherit" });
  const client = new Client({ name: "sandbox-runner-compat-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
};
const call = (client, name, args) => client.callTool({ name, arguments: args });
const errorText = (r) => (r.isError ? r.content?.[0]?.text ?? "" : "");
const b64 = (s) => Buffer.from(s).toString("base64");
const drop = ["sandbox_run_python", "sandbox_upload_file", "sandbox_read_artifact",
  "sandbox_list_artifacts", "sandbox_close_session"];

// A plain setup: tools/list as it was, and the aliases always.
let client = await connect();
let tools = (await client.listTools()).tools;
check(!tools.some((t) => drop.includes(t.name)), "a plain setup does not list the drop-in tools");
const runCode = tools.find((t) => t.name === "run_code");
check(/alias of timeout_seconds/i.test(runCode?.inputSchema?.properties?.timeout?.description ?? ""),
  "run_code's schema shows timeout as an alias of timeout_seconds", runCode?.inputSchema);

// sandbox_runner's run_code(code, language, timeout).
let r = await call(client, "run_code", { code: "import time; time.sleep(5)", language: "python", timeout: 1 });
check(!r.isError && r.structuredContent?.status === "timeout",
  "run_code(code, language, timeout) applies timeout", r);
r = await call(client, "run_code", { code: "print(1)", language: "python", timeout: 1, timeout_seconds: 2 });
check(r.isError && /timeout and timeout_seconds/.test(errorText(r)),
  "timeout and timeout_seconds at odds are refused, naming both", r);
r = await call(client, "run_code", { code: "print(2)", language: "python", timeout: 3, timeout_seconds: 3 });
check(!r.isError && r.structuredContent?.stdout === "2\n", "the two alike are one", r);

// sandbox-env-mcp's shell_exec(..., timeout).
r = await call(client, "create_session", {});
const shellSession = r.structuredContent?.session_id;
r = await call(client, "shell_new", { session_id: shellSession });
const shell = r.structuredContent?.shell_id;
r = await call(client, "shell_exec", { shell_id: shell, command: "sleep 30", timeout: 1 });
check(!r.isError && r.structuredContent?.timed_out === true,
  "shell_exec(shell_id, command, timeout) applies timeout", r);
await call(client, "close_session", { session_id: shellSession });
await client.close();

// compat_tools = mcp-code-sandbox: its five tools, its argument names,
// its result fields.
client = await connect({ SANDBOX_COMPAT_TOOLS: "mcp-code-sandbox", SANDBOX_TIMEOUT: "3" });
tools = (await client.listTools()).tools;
check(drop.every((n) => tools.some((t) => t.name === n)),
  "compat_tools = mcp-code-sandbox lists its five tools", tools.map((t) => t.name));
const csv = "month,revenue\n1,10\n2,30\n";
r = await call(client, "sandbox_upload_file", { filename: "sales.csv", content_base64: b64(csv) });
const sid = r.structuredContent?.session_id;
check(!r.isError && typeof sid === "string" && r.structuredContent?.path === "/mnt/data/sales.csv",
  "sandbox_upload_file(filename, content_base64) → session_id, path", r);
r = await call(client, "sandbox_run_python", { session_id: sid, code:
  "import pandas as pd, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
  + "df = pd.read_csv('/mnt/data/sales.csv')\nprint(df.revenue.sum())\n"
  + "df.plot(x='month', y='revenue'); plt.savefig('/mnt/data/chart.png')\n" });
let s = r.structuredContent ?? {};
const chart = s.artifacts?.find((a) => a.filename === "chart.png");
check(!r.isError && s.stdout === "40\n" && s.stderr === "" && s.exit_code === 0 && s.session_id === sid,
  "sandbox_run_python(session_id, code) → stdout, stderr, exit_code, session_id", r);
check(chart?.path === "/mnt/data/chart.png" && chart.size_bytes > 0 && chart.mime_type === "image/png",
  "its artifacts carry path, filename, size_bytes, mime_type", s.artifacts);
r = await call(client, "sandbox_read_artifact", { session_id: sid, path: "/mnt/data/chart.png" });
s = r.structuredContent ?? {};
check(!r.isError && s.mime_type === "image/png"
  && Buffer.from(s.content_base64 ?? "", "base64").subarray(1, 4).toString() === "PNG"
  && s.filename === "chart.png" && s.size_bytes === chart?.size_bytes,
  "sandbox_read_artifact(session_id, path) → content_base64, mime_type", { ...s, content_base64: undefined });
r = await call(client, "sandbox_list_artifacts", { session_id: sid });
const names = (r.structuredContent?.artifacts ?? []).map((a) => a.filename).sort();
check(!r.isError && names.join(",") === "chart.png,sales.csv", "sandbox_list_artifacts(session_id) → artifacts", r);
r = await call(client, "sandbox_close_session", { session_id: sid });
check(!r.isError && r.structuredContent?.status === "closed", "sandbox_close_session(session_id) → status closed", r);
r = await call(client, "sandbox_list_artifacts", { session_id: sid });
check(r.isError, "the closed session is gone", r);

// Without a session: a new one on the data-science image, its id returned.
r = await call(client, "sandbox_run_python", { code: "import pandas, numpy, matplotlib; print('ok')" });
s = r.structuredContent ?? {};
check(!r.isError && s.stdout === "ok\n" && typeof s.session_id === "string",
  "sandbox_run_python(code) without a session creates one and returns its id", r);
r = await call(client, "list_sessions", {});
const made = r.structuredContent?.sessions?.find((x) => x.session_id === s.session_id);
check(made?.image === "python-data", "on the data-science image (session_image)", r.structuredContent);
r = await call(client, "sandbox_run_python", { session_id: s.session_id, code: "import sys; sys.exit(3)" });
check(!r.isError && r.structuredContent?.exit_code === 3, "a failing run's exit_code", r);
r = await call(client, "sandbox_run_python", { session_id: s.session_id, code: "while True: pass" });
check(!r.isError && r.structuredContent?.exit_code === -1, "a run that timed out: exit_code -1, as the original", r);
await call(client, "sandbox_close_session", { session_id: s.session_id });
await client.close();
process.exit(0);
