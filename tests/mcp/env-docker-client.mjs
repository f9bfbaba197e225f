// env's Docker lifecycle through the official MCP TypeScript SDK client
// over stdio (tests/integration/mcp-env-docker.sh starts dockerd and a
// container of its own, FOREIGN, that the server did not make): run, ps,
// the machine's shells and files, stop, start, restart, logs, stats,
// inspect and remove; FOREIGN stays out of reach.  Prints "RESULT 0|1
// name" lines and "# ..." diagnostics.
//   node env-docker-client.mjs SR_BIN            (SANDBOX_BACKEND=docker)
//   node env-docker-client.mjs SR_BIN --native   (every Docker action refused)
//   node env-docker-client.mjs --owners URL      (two HTTP clients, two owners)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const error = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error ?? {} : {};
  } catch {
    return {};
  }
};
const sc = (r) => r.structuredContent ?? {};
const docker = ["run", "ps", "stop", "start", "restart", "remove", "inspect", "logs", "stats"];

// Over HTTP without tokens each MCP session is an owner: B neither sees
// nor touches A's machine.
if (process.argv[2] === "--owners") {
  const connect = async () => {
    const c = new Client({ name: "sandbox-runner-env-docker-test", version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(process.argv[3])));
    return c;
  };
  const [a, b] = [await connect(), await connect()];
  const envOf = (c, args) => c.callTool({ name: "env", arguments: args });
  let r = await envOf(a, { action: "run", image: "python" });
  const m = sc(r).machine;
  check(sc(r).state === "running", "owner A runs a machine", r);
  r = await envOf(b, { action: "ps" });
  check((sc(r).containers ?? []).length === 0, "owner B's ps does not list it", sc(r));
  for (const action of ["stop", "restart", "inspect", "logs", "stats", "remove"]) {
    r = await envOf(b, { action, name: m });
    check(error(r).code === "session_not_found", `owner B cannot ${action} it`, r);
  }
  r = await envOf(a, { action: "ps" });
  check((sc(r).containers ?? []).some((c) => c.machine === m && c.state === "running"),
    "it still runs for A", sc(r));
  r = await envOf(a, { action: "remove", name: m });
  check(sc(r).removed === true, "A removes it", r);
  await a.close();
  await b.close();
  process.exit(0);
}

const client = new Client({ name: "sandbox-runner-env-docker-test", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: process.argv[2], args: ["serve"],
  env: process.env, stderr: "inherit" }));
const env = (args) => client.callTool({ name: "env", arguments: args });
const call = (name, args) => client.callTool({ name, arguments: args });

const tool = (await client.listTools()).tools.find((t) => t.name === "env");
check(docker.every((a) => tool.inputSchema.properties.action.enum.includes(a)),
  "env's schema offers the Docker actions", tool.inputSchema.properties.action.enum);
let r = await env({ action: "help" });
check(docker.every((a) => (sc(r).actions ?? []).some((e) => e.action === a)),
  "help lists each Docker action", sc(r));
check((await Promise.all(docker.map((a) => env({ action: "help", topic: a }))))
  .every((h) => /docker_unavailable/.test(sc(h).text ?? "")),
  "each Docker action has a help topic that names docker_unavailable");

if (process.argv[3] === "--native") {
  for (const a of docker) {
    r = await env({ action: a, name: "whatever" });
    check(r.isError && error(r).code === "docker_unavailable" && /SANDBOX_BACKEND=docker/.test(error(r).message),
      `native backend: ${a} is refused with docker_unavailable, saying how to enable it`, r);
  }
  await client.close();
  process.exit(0);
}

const foreign = process.env.FOREIGN;
r = await env({ action: "run", image: "debian:12" });
check(r.isError && error(r).code === "image_not_allowed", "run refuses an image that is not the server's", r);
r = await env({ action: "run", image: "python", name: "mine" });
check(r.isError && error(r).code === "invalid_arguments", "run refuses a name (the server names machines)", r);
r = await env({ action: "run", image: "python" });
const m = sc(r).machine;
check(!r.isError && typeof m === "string" && sc(r).state === "running" && sc(r).sandbox === true,
  "run makes a running sandbox machine", r);

r = await env({ action: "ps" });
let mine = (sc(r).containers ?? []).find((c) => c.machine === m);
check(mine?.state === "running" && mine?.image === "python:3.12-slim", "ps lists it running", sc(r));
check(r.content?.[0]?.text === `${m} [python:3.12-slim, running, 0 shells]`, "ps's text gives a line a machine",
  r.content);
check(!JSON.stringify(sc(r)).includes(foreign), "ps does not list a container the server did not make", sc(r));
r = await call("machine_list", {});
check((sc(r).machines ?? []).some((x) => x.name === m && x.backend === "docker"), "it is a machine", sc(r));

r = await call("file_write", { machine: m, path: "/scratch/keep.txt", content: "kept\n" });
check(!r.isError, "file_write on it", r);
r = await call("shell_new", { machine: m });
const shell = sc(r).shell_id;
r = await call("shell_exec", { shell_id: shell, command: "cat /scratch/keep.txt; id -u" });
check(/^kept\n1000\n/.test(sc(r).output ?? ""), "a shell on it runs, as the user setting's user (1000)", sc(r));

r = await env({ action: "stop", name: m });
check(!r.isError && sc(r).state === "exited" && sc(r).shells_ended === 1
  && /shells ended and its files are gone/.test(sc(r).note),
  "stop stops it and says its shells ended and its files went", r);
r = await call("shell_exec", { shell_id: shell, command: "true" });
check(error(r).code === "shell_not_found", "its shell is gone", r);
r = await call("file_read", { machine: m, path: "/scratch/keep.txt" });
check(error(r).code === "machine_stopped", "file tools are refused while it is stopped", r);
r = await env({ action: "stats", name: m });
check(error(r).code === "machine_stopped", "stats is refused while it is stopped", r);
r = await env({ action: "ps" });
mine = (sc(r).containers ?? []).find((c) => c.machine === m);
check(mine?.state === "exited", "ps shows it exited", sc(r));
r = await env({ action: "stop", name: m });
check(!r.isError && sc(r).state === "exited", "stopping it again is harmless", r);

r = await env({ action: "start", name: m });
check(!r.isError && sc(r).state === "running", "start runs it again", r);
r = await call("file_read", { machine: m, path: "/scratch/keep.txt" });
check(error(r).code === "not_found", "its files went with its memory, as stop said", r);
r = await call("file_write", { machine: m, path: "/scratch/keep.txt", content: "kept\n" });
check(!r.isError, "file_write works again after start", r);
r = await env({ action: "restart", name: m });
check(!r.isError && sc(r).state === "running" && sc(r).shells_ended === 0, "restart", r);
r = await call("shell_new", { machine: m });
r = await call("shell_exec", { shell_id: sc(r).shell_id, command: "cat /scratch/keep.txt" });
check(/No such file/.test(sc(r).output ?? ""), "a new shell works after restart, the directories empty", sc(r));

// What the container's init writes is its log: a command may write there
// through the init's own descriptors.
r = await call("shell_new", { machine: m });
const logShell = sc(r).shell_id;
await call("shell_exec", { shell_id: logShell,
  command: "echo to-out >/proc/1/fd/1; echo to-err >/proc/1/fd/2" });
r = await env({ action: "logs", name: m, tail: 10 });
check(!r.isError && sc(r).stdout === "to-out\n" && sc(r).stderr === "to-err\n" && sc(r).truncated === false,
  "logs gives the init's stdout and stderr apart", sc(r));
check(r.content?.[0]?.text === `to-out\n[stderr]\nto-err\n[logs of ${m}]`, "logs' text shows both streams",
  r.content);
// Written well after to-err: the daemon copies the two streams apart, so
// lines written at once may be logged in either order.
await call("shell_exec", { shell_id: logShell,
  command: "(head -c 3000 /dev/zero | tr '\\0' x; echo) >/proc/1/fd/1" });
r = await env({ action: "logs", name: m, tail: 1 });
check(!r.isError && sc(r).stdout === "x".repeat(3000) + "\n" && sc(r).stderr === "", "logs' tail gives the last lines", sc(r));
r = await env({ action: "logs", name: m, tail: 10, max_output: 100 });
check(!r.isError && sc(r).stdout.indexOf("\n[sandbox-runner: output truncated after 100 bytes;") === 100
  && sc(r).truncated === true, "logs is capped by max_output, and says so as a run's output does", sc(r));
r = await env({ action: "stats", name: m });
check(!r.isError && sc(r).memory_bytes > 0 && sc(r).memory_limit_bytes > 0 && sc(r).pids >= 1
  && sc(r).pids_limit > 0, "stats gives memory, its limit and pids", sc(r));
r = await env({ action: "inspect", name: m });
const text = JSON.stringify(sc(r));
check(/^[0-9a-f]{64}$/.test(sc(r).container_id ?? "") && sc(r).image === "python:3.12-slim"
  && sc(r).state === "running" && sc(r).limits?.memory_bytes > 0 && sc(r).limits?.pids > 0,
  "inspect gives id, image, state and limits", sc(r));
check(!/\/var\/lib|\/run\/|\/tmp\//.test(text) && !text.includes(process.env.SANDBOX_RUNTIME_DIR),
  "inspect shows no host path", sc(r));

for (const a of ["stop", "remove", "inspect", "logs"]) {
  r = await env({ action: a, name: foreign });
  check(error(r).code === "session_not_found", `${a} refuses a container the server did not make`, r);
}

r = await env({ action: "remove", name: m });
check(!r.isError && sc(r).removed === true, "remove", r);
r = await env({ action: "ps" });
check((sc(r).containers ?? []).length === 0, "ps lists nothing after remove", sc(r));
r = await call("file_read", { machine: m, path: "/scratch/keep.txt" });
check(error(r).code === "session_not_found", "the machine is gone", r);

r = await call("audit_query", { tool: "env" });
const st = (sc(r).calls ?? []).map((c) => c.status);
check(st.includes("image_not_allowed") && st.includes("machine_stopped") && st.includes("ok"),
  "the audit trail records env's Docker calls and their refusals", st);
await client.close();
