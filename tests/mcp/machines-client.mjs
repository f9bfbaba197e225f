// Two machines at once, a sandbox session and an SSH host (the sshd
// tests/integration/mcp-machines.sh starts), through the official MCP
// TypeScript SDK client over stdio: env, machine_list, default_set, the
// machine argument of the shell and file tools, and run_code refused on
// the SSH host.  Prints "RESULT 0|1 name" lines and "# ..." diagnostics.
//   node machines-client.mjs SR_BIN   (MACHINES_DIR: a host directory to work in)
//   node machines-client.mjs --owners URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const call = (client, name, args) => client.callTool({ name, arguments: args });
const error = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error ?? {} : {};
  } catch {
    return {};
  }
};
const sc = (r) => r.structuredContent ?? {};
const dir = process.env.MACHINES_DIR;
// In the remote home, which other runs of this test share.
const testFile = process.env.MACHINES_FILE;

// Over HTTP, two MCP sessions (two owners) each connect box: two
// connections, each its owner's, with defaults of their own.
//   node machines-client.mjs --owners URL
if (process.argv[2] === "--owners") {
  const connect = async () => {
    const c = new Client({ name: "sandbox-runner-machines-test", version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(process.argv[3])));
    return c;
  };
  const [a, b] = [await connect(), await connect()];
  const names = async (c) => (sc(await call(c, "machine_list", {})).machines ?? []).map((m) => m.name);
  let r = await call(a, "env", { action: "connect", name: "box" });
  check(sc(r).new === true, "owner A connects box", sc(r));
  check((await names(b)).length === 0, "owner B does not see A's box", await names(b));
  r = await call(b, "shell_exec", { shell_id: "box-1", command: "true" });
  check(error(r).code === "shell_not_found", "nor its shells", r);
  r = await call(b, "env", { action: "connect", name: "box" });
  check(sc(r).new === true, "owner B connects a box of its own", sc(r));
  await call(a, "default_set", { machine: "box" });
  r = await call(b, "machine_list", {});
  check(sc(r).default_machine === "", "A's default is not B's", sc(r));
  r = await call(b, "shell_new", { machine: "box" });
  const shell = sc(r).shell_id;
  r = await call(a, "env", { action: "close", name: "box" });
  check(sc(r).closed === true, "A closes its box", sc(r));
  r = await call(b, "shell_exec", { shell_id: shell, command: "echo still" });
  check(sc(r).output === "still\n", "B's box and its shell go on", sc(r));
  r = await call(b, "env", { action: "close", name: "box" });
  check(sc(r).closed === true, "B closes its own", sc(r));
  await a.close();
  await b.close();
  process.exit(0);
}

const client = new Client({ name: "sandbox-runner-machines-test", version: "1.0.0" });
// The test's environment (its config naming the SSH targets, its image
// store) goes to the server: the SDK passes only a few variables otherwise.
await client.connect(new StdioClientTransport({ command: process.argv[2], args: ["serve"],
  env: process.env, stderr: "inherit" }));

// --- env: the map ---
const tools = (await client.listTools()).tools;
const env = tools.find((t) => t.name === "env");
check(["machine_list", "default_set", "env"].every((n) => tools.some((t) => t.name === n))
  && tools.every((t) => !["machine_list", "default_set", "env"].includes(t.name) || t.outputSchema),
  "tools/list offers machine_list, default_set and env, each with an output schema");
let r = await call(client, "env", { action: "help" });
const listed = (sc(r).actions ?? []).map((a) => a.action);
check(JSON.stringify(listed) === JSON.stringify(env?.inputSchema?.properties?.action?.enum),
  "env help lists the actions the schema's enum names", { listed, schema: env?.inputSchema });
check(/connect: /.test(r.content[0].text), "... and its text block a line an action", r.content[0].text);
r = await call(client, "env", { action: "help", topic: "connect" });
check(/NOT a sandbox/.test(sc(r).text) && /known_hosts/.test(sc(r).text),
  "env help topic=connect documents it, saying an SSH machine is not a sandbox", sc(r));
r = await call(client, "env", { action: "help", topic: "nosuch" });
check(error(r).code === "invalid_arguments" && /no help topic 'nosuch'/.test(error(r).message),
  "an unknown help topic is refused, named", r);
r = await call(client, "env", { action: "list_targets" });
const box = (sc(r).targets ?? []).find((t) => t.name === "box");
check(box?.host === "127.0.0.1" && box?.user === "root" && box?.connected === false
  && typeof box?.port === "number", "list_targets gives the configured ssh.NAME targets", sc(r));

// --- connecting ---
r = await call(client, "env", { action: "connect", name: "bad" });
check(error(r).code === "host_key_mismatch", "connect to a host whose key differs from known_hosts is refused", r);
r = await call(client, "env", { action: "connect", name: "new" });
check(error(r).code === "host_key_unknown", "connect to a host not in known_hosts is refused", r);
r = await call(client, "env", { action: "connect" });
check(error(r).code === "invalid_arguments", "connect without name is refused", r);
r = await call(client, "env", { action: "connect", name: "box" });
check(sc(r).connected === true && sc(r).new === true && sc(r).home === "/root" && sc(r).sandbox === false,
  "connect box: connected, its home is the remote account's", sc(r));
r = await call(client, "env", { action: "connect", name: "box" });
check(sc(r).connected === true && sc(r).new === false, "connecting it again is harmless", sc(r));

r = await call(client, "create_session", { image: "python" });
check(typeof sc(r).session_id === "string", "a sandbox session is made", r);
const sid = sc(r).session_id;

r = await call(client, "machine_list", {});
const mbox = (sc(r).machines ?? []).find((m) => m.name === "box");
const msid = (sc(r).machines ?? []).find((m) => m.name === sid);
check(mbox?.backend === "ssh" && mbox?.sandbox === false && /NOT a sandbox/.test(mbox?.purpose)
  && mbox?.status === "ready" && mbox?.shells === 0,
  "machine_list: the SSH host, backend ssh, not a sandbox", sc(r));
check(msid?.sandbox === true && msid?.backend === process.env.SANDBOX_BACKEND && /sandbox/.test(msid?.purpose),
  "machine_list: the session, a sandbox of the configured backend", sc(r));
check(/box \[ssh, ready, 0 shells\]: SSH host, NOT a sandbox/.test(r.content[0].text),
  "machine_list's text block says it too", r.content[0].text);
r = await call(client, "list_sessions", {});
check((sc(r).sessions ?? []).every((s) => s.session_id !== "box"), "list_sessions lists sandboxes only", sc(r));

// --- a shell on each, state kept on each ---
r = await call(client, "shell_new", { machine: sid });
const local = sc(r).shell_id;
r = await call(client, "shell_new", { machine: "box" });
const remote = sc(r).shell_id;
check(sc(r).session_id === "box" && /^box-1\.[0-9a-f]{8}$/.test(remote),
  "shell_new machine=box starts a shell there, its id unique per runner", sc(r));
await call(client, "shell_exec", { shell_id: local, command: "cd /tmp && X=in-sandbox" });
await call(client, "shell_exec", { shell_id: remote, command: `cd ${dir} && X=on-host` });
r = await call(client, "shell_exec", { shell_id: local, command: `pwd; echo "$X"; test -e ${dir}/host-only && echo leak` });
check(sc(r).output === "/tmp\nin-sandbox\n", "the sandbox shell keeps its cwd and variable, and sees no host file", sc(r));
r = await call(client, "shell_exec", { shell_id: remote, command: `pwd; echo "$X"; cat host-only` });
check(sc(r).output === `${dir}\non-host\nthe host\n`, "the SSH shell keeps its own, on the host", sc(r));

// Ctrl-C on the remote shell.
r = await call(client, "shell_exec", { shell_id: remote, command: "sleep 100.456; echo never", wait: false });
check(sc(r).state === "waiting", "a remote command left running is waiting", sc(r));
const t0 = Date.now();
r = await call(client, "write_stdin", { shell_id: remote, data: "\\x03" });
console.log(`# ^C on the remote shell answered in ${Date.now() - t0} ms`);
check(sc(r).state === "ready", "Ctrl-C to the remote shell brings it back to its prompt", sc(r));
r = await call(client, "shell_read", { shell_id: remote });
check(sc(r).exit_code === 130 && !/never/.test(sc(r).output), "... the command ended by SIGINT (130)", sc(r));
r = await call(client, "shell_exec", { shell_id: remote, command: 'echo "after $X"' });
check(sc(r).output === "after on-host\n", "... and the shell goes on, its state kept", sc(r));

// --- the file tools on the remote ---
const big = "0123456789abcdef".repeat(65536);
r = await call(client, "file_write", { machine: "box", path: `${dir}/big`, content: big });
check(!r.isError && sc(r).size === big.length, "file_write of 1 MiB on the SSH host", r);
r = await call(client, "file_write", { machine: "box", path: testFile, content: "one\ntwo\n" });
check(sc(r).path === `/root/${testFile}`, "a relative path on the SSH host starts at its home", sc(r));
r = await call(client, "file_patch", { machine: "box", path: testFile, old_string: "two", new_string: "three" });
check(!r.isError && sc(r).replacements === 1, "file_patch on the SSH host", r);
r = await call(client, "file_read", { machine: "box", path: `/root/${testFile}` });
check(/one/.test(sc(r).content) && /three/.test(sc(r).content), "file_read on the SSH host reads it back", sc(r));
r = await call(client, "file_search", { machine: "box", path: dir, pattern: "the h.st" });
check((sc(r).matches ?? []).length === 1 && sc(r).matches[0].path === `${dir}/host-only`,
  "file_search on the SSH host", sc(r));
r = await call(client, "file_read", { path: "x" });
check(error(r).code === "invalid_arguments" && /default_set/.test(error(r).message),
  "a file tool with no machine and no default says how to name one", r);

// --- run_code is no SSH host's ---
r = await call(client, "run_code", { machine: "box", language: "python", code: "print(1)" });
check(error(r).code === "not_a_sandbox" && /SSH host, not a sandbox/.test(error(r).message),
  "run_code on the SSH machine is refused: not_a_sandbox", r);
r = await call(client, "upload_file", { machine: "box", filename: "u.txt", content_base64: "eA==" });
check(error(r).code === "not_a_sandbox" && /no \/mnt\/data/.test(error(r).message),
  "upload_file to the SSH machine is refused: it has no data directory", r);
r = await call(client, "list_artifacts", { machine: "box" });
check(error(r).code === "not_a_sandbox", "... and list_artifacts", r);
r = await call(client, "file_write", { machine: "box", path: "/mnt/data/x", content: "x" });
check(error(r).code === "not_a_sandbox", "... and a file tool's path in /mnt/data", r);

// --- defaults ---
r = await call(client, "default_set", { machine: "box" });
check(sc(r).default_machine === "box" && sc(r).default_shell === "", "default_set machine=box", sc(r));
r = await call(client, "file_read", { path: testFile });
check(/three/.test(sc(r).content), "a file tool without machine acts on the default machine", sc(r));
r = await call(client, "shell_new", {});
check(sc(r).session_id === "box", "shell_new without machine starts on the default machine", sc(r));
r = await call(client, "shell_exec", { command: "echo x" });
check(error(r).code === "invalid_arguments", "shell_exec without shell_id and no default shell is refused", r);
r = await call(client, "default_set", { shell_id: remote });
check(sc(r).default_machine === "box" && sc(r).default_shell === remote, "default_set shell_id sets its machine too", sc(r));
r = await call(client, "shell_exec", { command: "pwd" });
check(sc(r).shell_id === remote && sc(r).output === `${dir}\n`, "shell_exec without shell_id runs in the default shell", sc(r));
r = await call(client, "shell_exec", { machine: sid, command: "pwd" });
check(error(r).code === "invalid_arguments", "... but not when another machine is named", r);
r = await call(client, "default_set", { machine: sid });
r = await call(client, "file_write", { path: "in-session.txt", content: "s\n" });
check(sc(r).path === "/mnt/data/in-session.txt", "with the session as default, files go to its data directory", sc(r));
r = await call(client, "default_set", { machine: "nosuch" });
check(error(r).code === "session_not_found", "default_set refuses a machine that is not there", r);

r = await call(client, "env", { action: "status" });
check(sc(r).default_machine === sid && (sc(r).machines ?? []).length === 2
  && (sc(r).shells ?? []).filter((s) => s.machine === "box").length === 2,
  "env status: the default machine, both machines, the shells on each", sc(r));
r = await call(client, "machine_list", {});
check((sc(r).machines ?? []).find((m) => m.name === "box")?.shells === 2, "machine_list counts the shells", sc(r));

r = await call(client, "audit_query", { machine: "box" });
const audited = (sc(r).calls ?? []).map((c) => c.tool);
check(["env", "shell_new", "file_write", "run_code"].every((t) => audited.includes(t)),
  "the audit trail records the calls on the SSH machine", audited);

// --- closing ---
r = await call(client, "env", { action: "close", name: "box" });
check(sc(r).closed === true, "env close box", sc(r));
r = await call(client, "machine_list", {});
check((sc(r).machines ?? []).length === 1 && sc(r).machines[0].name === sid, "only the session is left", sc(r));
r = await call(client, "shell_exec", { shell_id: remote, command: "true" });
check(error(r).code === "shell_not_found", "the SSH host's shells went with it", r);
await call(client, "close_session", { session_id: sid });
await client.close();
