// Kept-alive connections against the server's idle close: CLIENTS official
// SDK clients, each a session of the server at URL, call tools/list
// together, ROUNDS times two calls: one sent a moment after the server's
// header deadline ticked (it shuts idle connections on a 250 ms tick), and
// one sent with every client's connection idle for the deadline
// (DEADLINE_MS), a millisecond or so before the tick that shuts them all.
// Probes (connections that never send a request, shut at a tick too) show
// when it ticks.  A client that reuses a connection the server shuts as
// its call comes in loses the call (fetch does not retry a POST): with
// the calls all in at once, some are still unread at the tick.  A
// Keep-Alive hint shorter than the deadline keeps Node's fetch from
// reusing such a connection.
//
//   node keep-alive-client.mjs URL CLIENTS ROUNDS DEADLINE_MS
//
// Prints "RESULT 0|1 name" checks and "# ..." diagnostics.
import net from "node:net";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clientsArg, roundsArg, deadlineArg] = process.argv.slice(2);
const [nClients, nRounds, deadlineMs] = [clientsArg, roundsArg, deadlineArg].map(Number);
const TICK_MS = 250;
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 1500)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Until `at` (performance.now() time), to the tenth of a millisecond.
const until = async (at) => {
  await sleep(at - 5 - performance.now());
  while (performance.now() < at);
};

// The server's ticks, from probes opened every 100 ms.
const { hostname, port } = new URL(url);
let lastTick = null;
const probe = () => {
  const s = net.connect(Number(port), hostname);
  s.on("end", () => {
    lastTick = performance.now();
    s.destroy();
  });
  s.on("error", () => {});
};
const prober = setInterval(probe, 100);
// The first tick at or past `at`, from the last one seen.
const tickAfter = (at) => lastTick + Math.ceil((at - lastTick) / TICK_MS) * TICK_MS;

const failures = [];
let done = 0;
// Every client calls at once; the time the last call ended.
const callAll = async (clients, what) => {
  let ended = 0;
  await Promise.all(clients.map(async (client, i) => {
    try {
      const r = await client.listTools();
      if (!r.tools.some((t) => t.name === "run_code")) throw new Error("no run_code in tools/list");
      done++;
    } catch (e) {
      failures.push({ client: i, what, error: `${e}`, cause: `${e?.cause ?? ""}` });
    }
    ended = Math.max(ended, performance.now());
  }));
  return ended;
};

const clients = [];
try {
  for (let i = 0; i < nClients; i++) {
    const client = new Client({ name: `sandbox-runner-keep-alive-${i}`, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(client);
  }
} catch (e) {
  failures.push({ error: `connect: ${e}` });
}
await sleep(deadlineMs + 2 * TICK_MS);
for (let r = 0; r < nRounds && clients.length === nClients; r++) {
  await until(tickAfter(performance.now() + 50) + 3);
  const ended = await callAll(clients, `round ${r}, just after a tick`);
  await until(tickAfter(ended + deadlineMs) - 3 + Math.random() * 3);
  await callAll(clients, `round ${r}, idle for the deadline`);
}
clearInterval(prober);
check(failures.length === 0 && done === 2 * nClients * nRounds,
  `all ${2 * nClients * nRounds} calls of ${nClients} clients succeed, half of them sent as the server shuts their idle connections (${done} did)`,
  failures.slice(0, 5));
await Promise.all(clients.map((c) => c.close()));
process.exit(0);
