// Drives `sandbox-runner serve --transport http` with the official MCP
// TypeScript SDK client (Client + StreamableHTTPClientTransport).  Prints
// one line per check: "RESULT 0|1 name" (0 = passed), and "# ..."
// diagnostics; the shell test turns them into TAP.
//   node http-client.mjs URL CONTAINERS_DIR
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, containers] = process.argv.slice(2);
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The containers running a command; a server's warm containers (label
// "warm: ...") wait for one and do not count.
const running = () => {
  let n = 0;
  try {
    for (const name of readdirSync(containers)) {
      try {
        if (!JSON.parse(readFileSync(`${containers}/${name}`, "utf8")).label?.startsWith("warm: ")) n++;
      } catch {
        n++;
      }
    }
  } catch {}
  return n;
};
const waitFor = async (cond, ms) => {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (cond()) return true;
  return cond();
};

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "sandbox-runner-http-test", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await client.connect(transport);

const sessionId = transport.sessionId;
check(/^[A-Za-z0-9_-]+\.[0-9a-f]{32}$/.test(sessionId ?? ""), "initialize: the server gives an Mcp-Session-Id of its id and 32 hex digits", sessionId);
check(client.getServerVersion()?.name === "sandbox-runner", "initialize: the server names itself",
  client.getServerVersion());
check(["2025-11-25", "2025-06-18", "2025-03-26"].includes(transport.protocolVersion),
  "initialize: a protocol version the transport sends on later requests", transport.protocolVersion);

await client.ping();
check(true, "ping is answered");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(["get_execution_history", "list_supported_languages", "run_code"].every((n) => names.includes(n)),
  "tools/list has run_code, list_supported_languages, get_execution_history", names);

const run = (language, code, extra = {}, options = {}) =>
  client.callTool({ name: "run_code", arguments: { language, code, ...extra } }, undefined, options);

let r = await run("python", "print(1)");
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "1\n" && !r.isError,
  "run_code python print(1): status success, stdout 1 and a newline", r);

let progress = 0;
r = await run("python", "import time; time.sleep(0.3); print('p')", {}, { onprogress: () => progress++ });
check(progress >= 1 && r.structuredContent?.stdout === "p\n",
  "a call with a progressToken gets progress notifications on its SSE stream", { progress, r });

r = await run("cobol", "DISPLAY 1");
check(r.isError === true, "an unknown language (cobol) is a tool error (isError)", r);

// Concurrent, not two at a time nor one after another: three 5 s runs
// that way take 10 s or more; the rest of the 9.5 s is room for starting
// three containers on a loaded machine.
const t0 = Date.now();
const three = await Promise.all([1, 2, 3].map((i) => run("python", `import time; time.sleep(5); print(${i})`)));
const wall = (Date.now() - t0) / 1000;
check(three.every((x, i) => x.structuredContent?.stdout === `${i + 1}\n`),
  "three concurrent calls each get their own result", three.map((x) => x.structuredContent));
check(wall < 9.5, `three concurrent 5 s runs take < 9.5 s (took ${wall.toFixed(2)} s)`, wall);

// The session's own stream (GET): logging notifications reach the client.
await client.setLoggingLevel("debug");
await run("python", "print(3)");
check(await waitFor(() => logs.some((l) => /took/.test(String(l.data))), 3000),
  "logging notifications arrive on the session's GET stream", logs);

// Cancellation: the SDK sends notifications/cancelled and rejects.
const ac = new AbortController();
const endless = run("python", "while True: pass", { timeout_seconds: 20 }, { signal: ac.signal });
const started = await waitFor(() => running() > 0, 30000);
check(started, "an endless loop is running in a container");
const aborted = Date.now();
ac.abort("test cancels");
let rejected = false;
try {
  await endless;
} catch {
  rejected = true;
}
// At once and promptly: well within the run's 20 s, with room for a
// loaded machine.
check(rejected && Date.now() - aborted < 5000, "an aborted call rejects at once", Date.now() - aborted);
check(await waitFor(() => running() === 0, 10000), "within 10 s of the cancel no container is left", running());
r = await run("python", "print('after')");
check(r.structuredContent?.stdout === "after\n", "the session still serves after a cancel", r);

// SSE resumption through the SDK: the connection of a call's SSE stream
// is cut after its first progress notification; the SDK reconnects with
// GET and Last-Event-ID, and the call ends with its whole result.
const gets = [];
let cutDone = false;
const cutting = async (input, init = {}) => {
  if (init.method === "GET") gets.push(new Headers(init.headers).get("last-event-id"));
  if (cutDone || init.method !== "POST" || !String(init.body).includes("cut-me")) return fetch(input, init);
  cutDone = true;
  const ac = new AbortController();
  const res = await fetch(input, { ...init, signal: ac.signal });
  const reader = res.body.getReader();
  let seen = "";
  const body = new ReadableStream({
    async pull(ctrl) {
      const { value, done } = await reader.read();
      if (done) return ctrl.close();
      ctrl.enqueue(value);
      seen += new TextDecoder().decode(value);
      if (seen.includes("notifications/progress")) {
        ac.abort();
        ctrl.error(new Error("connection cut by the test"));
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
};
const resumer = new StreamableHTTPClientTransport(new URL(url), { fetch: cutting });
const client3 = new Client({ name: "resumer", version: "1.0.0" });
client3.onerror = () => {};
await client3.connect(resumer);
r = await client3.callTool({ name: "run_code", arguments: { language: "python",
  code: "# cut-me\nimport time\nprint('half', flush=True)\ntime.sleep(2)\nprint('done')" } },
undefined, { onprogress: () => {}, timeout: 30000 });
check(cutDone && gets.some((id) => /^\d+-\d+$/.test(id ?? "")),
  "a cut SSE stream: the SDK reconnects with GET and the Last-Event-ID the server gave", gets);
check(r.structuredContent?.stdout === "half\ndone\n",
  "and the call ends with its whole result: the run went on meanwhile", r);
await client3.close();

// A second client has its own session.
const other = new StreamableHTTPClientTransport(new URL(url));
const client2 = new Client({ name: "second", version: "1.0.0" });
await client2.connect(other);
check(other.sessionId && other.sessionId !== sessionId, "a second client gets another session");
await client2.close();

// DELETE ends the session; its id is then unknown.
await transport.terminateSession();
check(transport.sessionId === undefined, "terminateSession (DELETE) succeeds");
const res = await fetch(url, {
  method: "POST",
  headers: {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-session-id": sessionId,
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }),
});
check(res.status === 404, "a request with the deleted session id is 404", res.status);
await client.close();
console.log(`SESSION ${sessionId}`);
