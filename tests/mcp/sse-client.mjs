// The HTTP+SSE transport of protocol 2024-11-05 through the official MCP
// TypeScript SDK's SSEClientTransport: connect with a bearer token, list
// the tools, run code, and see the session end with the stream.  Prints
// "RESULT 0|1 name" lines and "# ..." diagnostics for the shell test.
//   node sse-client.mjs URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [url, token] = process.argv.slice(2);
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const auth = { headers: { Authorization: `Bearer ${token}` } };

const transport = new SSEClientTransport(new URL(url), { requestInit: auth });
const client = new Client({ name: "sandbox-runner-sse-test", version: "1.0.0" });
await client.connect(transport);
check(client.getServerVersion()?.name === "sandbox-runner", "SSEClientTransport connects",
  client.getServerVersion());
const endpoint = transport._endpoint?.href;
check(/\/messages\?sessionId=[A-Za-z0-9_-]+\.[0-9a-f]{32}$/.test(endpoint ?? ""),
  "the endpoint event names /messages?sessionId=ID", endpoint);
const tools = (await client.listTools()).tools.map((t) => t.name);
check(tools.includes("run_code") && tools.includes("shell_exec"), "tools/list over SSE", tools);
let r = await client.callTool({ name: "run_code", arguments: { language: "python", code: "print(6*7)", timeout: 10 } });
check(!r.isError && r.structuredContent?.stdout === "42\n", "run_code's response comes on the stream", r);
// Two at once: each response finds its request.
const [a, b] = await Promise.all([
  client.callTool({ name: "run_code", arguments: { language: "python", code: "import time; time.sleep(1); print('a')" } }),
  client.callTool({ name: "run_code", arguments: { language: "python", code: "print('b')" } }),
]);
check(a.structuredContent?.stdout === "a\n" && b.structuredContent?.stdout === "b\n",
  "concurrent calls get their own responses", [a, b]);
await client.close();
// The session ends with its stream.
await new Promise((resolve) => setTimeout(resolve, 500));
const res = await fetch(endpoint, { method: "POST", ...auth,
  headers: { ...auth.headers, "Content-Type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }) });
check(res.status === 404, "a POST after the stream closed: 404, the session is gone", res.status);

// Without the token: refused.
const bare = new Client({ name: "sandbox-runner-sse-test", version: "1.0.0" });
let refused = false;
try {
  await bare.connect(new SSEClientTransport(new URL(url)));
} catch (e) {
  refused = /401/.test(String(e)) || e?.code === 401;
}
check(refused, "without the bearer token the SSE client is refused (401)");
process.exit(0);
