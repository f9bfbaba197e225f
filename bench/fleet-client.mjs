// The client side of bench/fleet.sh: the official MCP SDK client through
// HAProxy.
//   throughput: CONCURRENCY clients, each with its MCP session (a session
//     lives on one server, so the balancer spreads sessions, not calls),
//     make CALLS run_code python print(1) calls between them;
//   overhead: RUNS pings, then RUNS run_code print(1), one after another,
//     through HAProxy and straight to a server in turn: the balancer's cost
//     per call.
// Prints tab-separated lines:
//   P LABEL CONCURRENCY CALLS SECONDS FAILURES SESSIONS_PER_SERVER
//   T LABEL WORKLOAD MEDIAN_MICROSECONDS
//
//   node fleet-client.mjs throughput URL LABEL CONCURRENCY CALLS
//   node fleet-client.mjs overhead URL DIRECT_URL RUNS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...args] = process.argv.slice(2);
const connect = async (url) => {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "sandbox-runner-fleet-bench", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, server: transport.sessionId.split(".")[0] };
};
const run = (c) => c.client.callTool({ name: "run_code", arguments: { language: "python", code: "print(1)" } });
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
// The median microseconds of each of fs, called n times in turn (so that
// the load of the host falls on each alike).
const timedInTurn = async (n, fs) => {
  const v = fs.map(() => []);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < fs.length; k++) {
      const t = process.hrtime.bigint();
      await fs[k]();
      v[k].push(Number(process.hrtime.bigint() - t) / 1000);
    }
  return v.map(median);
};

if (mode === "throughput") {
  const [url, label, conc, calls] = [args[0], args[1], Number(args[2]), Number(args[3])];
  const clients = await Promise.all(Array.from({ length: conc }, () => connect(url)));
  await Promise.all(clients.map(run)); // warm-up: each session's first call
  let left = calls, failures = 0;
  const t = process.hrtime.bigint();
  await Promise.all(clients.map(async (c) => {
    while (left-- > 0) {
      const r = await run(c).catch(() => null);
      if (r?.structuredContent?.stdout !== "1\n") failures++;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  const per = clients.reduce((m, c) => ({ ...m, [c.server]: (m[c.server] ?? 0) + 1 }), {});
  console.log(["P", label, conc, calls, seconds.toFixed(3), failures, JSON.stringify(per)].join("\t"));
  for (const c of clients) await c.transport.terminateSession().catch(() => {});
  for (const c of clients) await c.client.close();
} else if (mode === "overhead") {
  const [url, direct, runs] = [args[0], args[1], Number(args[2])];
  const via = await connect(url), straight = await connect(direct);
  await run(via);
  await run(straight);
  const [pv, ps] = await timedInTurn(runs, [() => via.client.ping(), () => straight.client.ping()]);
  const [rv, rs] = await timedInTurn(runs, [() => run(via), () => run(straight)]);
  for (const [label, w, t] of [["haproxy", "ping", pv], ["direct", "ping", ps],
    ["haproxy", "run_code print(1)", rv], ["direct", "run_code print(1)", rs]])
    console.log(["T", label, w, t.toFixed(0)].join("\t"));
  for (const c of [via, straight]) {
    await c.transport.terminateSession().catch(() => {});
    await c.client.close();
  }
} else {
  console.error("usage: fleet-client.mjs throughput URL LABEL CONCURRENCY CALLS | overhead URL DIRECT_URL RUNS");
  process.exit(2);
}
