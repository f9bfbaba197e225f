// Shells that answer at once, content with a NUL, binary file_write and
// python-data one-shot, through the official MCP TypeScript SDK client
// over stdio.  Prints "RESULT 0|1 name" lines and "# ..." diagnostics.
//   node shells-client.mjs SR_BIN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const call = (client, name, args, options) =>
  client.callTool({ name, arguments: args }, undefined, options);
const errorCode = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error?.code : undefined;
  } catch {
    return undefined;
  }
};

const client = new Client({ name: "sandbox-runner-shells-test", version: "1.0.0" });
// The test's environment (its image store, runtime dir) goes to the
// server: the SDK passes only a few variables otherwise.
await client.connect(new StdioClientTransport({ command: process.argv[2], args: ["serve"],
  env: process.env, stderr: "inherit" }));

let r = await call(client, "create_session", {});
const sid = r.structuredContent?.session_id;
r = await call(client, "shell_new", { session_id: sid });
const shell = r.structuredContent?.shell_id;
check(typeof shell === "string", "a shell starts", r);

// wait=false on a command that prints nothing: back as soon as it began
// (the old answer came after 2 s, when the begin marker was held back).
let t0 = Date.now();
r = await call(client, "shell_exec", { shell_id: shell, command: "sleep 5; echo late", wait: false });
let took = Date.now() - t0;
console.log(`# shell_exec wait=false on a silent command answered in ${took} ms`);
check(r.structuredContent?.state === "waiting" && !r.structuredContent?.output.includes("late"),
  "wait=false on a silent command returns with state waiting", r.structuredContent);
check(took < 1900, "... without waiting out the 2 s bound for the command to begin", took);

// Ctrl-C, then a command at once: the ^C returns once the prompt is back.
t0 = Date.now();
r = await call(client, "write_stdin", { shell_id: shell, data: "\\x03" });
console.log(`# write_stdin \\x03 answered in ${Date.now() - t0} ms`);
check(r.structuredContent?.bytes === 1 && r.structuredContent?.state === "ready",
  "write_stdin \\x03 returns with the shell back at its prompt", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "echo next" });
check(r.structuredContent?.output === "next\n" && r.structuredContent?.exit_code === 0,
  "a command right after Ctrl-C runs (no shell_busy)", r);

// A Ctrl-C at the prompt makes bash print a newline and a prompt of its
// own, which may come after the next command was typed: neither is that
// command's output or its end.
let own = [];
for (let i = 0; i < 5; i++) {
  await call(client, "write_stdin", { shell_id: shell, data: "\\x03" });
  r = await call(client, "shell_exec", { shell_id: shell, command: "echo own" });
  own.push(r.structuredContent);
}
check(own.every((o) => o?.output === "own\n" && o?.exit_code === 0),
  "a Ctrl-C at the prompt is neither the next command's output nor its end", own);

// The other order: a command started without wait, then Ctrl-C at once,
// then the next command.
r = await call(client, "shell_exec", { shell_id: shell, command: "sleep 30; echo never", wait: false });
r = await call(client, "write_stdin", { shell_id: shell, data: "\\x03" });
check(r.structuredContent?.state === "ready", "Ctrl-C right after a command without wait interrupts it", r.structuredContent);
r = await call(client, "shell_read", { shell_id: shell });
check(r.structuredContent?.exit_code === 130 && !r.structuredContent?.output.includes("never"),
  "... which ends with status 130", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "echo after" });
check(r.structuredContent?.output === "after\n", "and the next command runs at once", r);

// A command that ignores SIGINT: the ^C comes back after its bound, the
// shell still busy, and says so.
r = await call(client, "shell_exec", { shell_id: shell,
  command: "python3 -c 'import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print(\"deaf\", flush=True); time.sleep(30)'",
  wait: false });
for (const end = Date.now() + 20000; !/deaf/.test(r.structuredContent?.output ?? "") && Date.now() < end;) {
  await sleep(100);
  r = await call(client, "shell_read", { shell_id: shell });
}
r = await call(client, "write_stdin", { shell_id: shell, data: "\\x03" });
check(r.structuredContent?.state === "waiting", "Ctrl-C to a command ignoring it returns, state waiting", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "echo x" });
check(errorCode(r) === "shell_busy", "and the shell is still shell_busy", r);
await call(client, "shell_remove", { shell_id: shell });

// A NUL in text content is refused, never cut.
const nul = "before\u0000after";
r = await call(client, "file_write", { session_id: sid, path: "nul.txt", content: nul });
check(errorCode(r) === "binary_content" && r.content[0].text.includes("content"),
  "file_write refuses content with a NUL (binary_content, naming content)", r);
r = await call(client, "file_write", { session_id: sid, path: "t.txt", content: "hello\n" });
r = await call(client, "file_patch", { session_id: sid, path: "t.txt", old_string: "hello", new_string: nul });
check(errorCode(r) === "binary_content", "file_patch refuses a new_string with a NUL", r);
r = await call(client, "file_read", { session_id: sid, path: "t.txt" });
check(/hello/.test(r.structuredContent?.content) && !/after/.test(r.structuredContent?.content),
  "... and leaves the file as it was", r.structuredContent);
r = await call(client, "file_write", { session_id: sid, path: "esc.txt", content: "a\\u0000b" });
check(!r.isError && r.structuredContent?.size === 8, "an escaped backslash before u0000 is text, not a NUL", r);

// Binary content as base64 round-trips byte for byte.
const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
r = await call(client, "file_write", { session_id: sid, path: "bin/all.bin",
  content: bytes.toString("base64"), encoding: "base64" });
check(!r.isError && r.structuredContent?.size === 256, "file_write with encoding base64 writes the bytes", r);
r = await call(client, "run_code", { session_id: sid, language: "python",
  code: "print(open('bin/all.bin','rb').read() == bytes(range(256)))" });
check(r.structuredContent?.stdout === "True\n", "... which are the bytes given", r.structuredContent);
r = await call(client, "file_write", { session_id: sid, path: "bad.bin", content: "not base64!", encoding: "base64" });
check(errorCode(r) === "invalid_arguments", "content that is not base64 is invalid_arguments", r);
await call(client, "close_session", { session_id: sid });

// pandas one-shot, no session: the language python-data.
r = await call(client, "list_supported_languages", {});
const data = r.structuredContent?.languages?.find((l) => l.language === "python-data");
check(data?.available === true && /pandas/.test(data?.description ?? ""),
  "list_supported_languages offers python-data, with pandas", r.structuredContent);
const tools = (await client.listTools()).tools;
const runCode = tools.find((t) => t.name === "run_code");
check(/python-data/.test(runCode?.description ?? ""), "tools/list's run_code says when to pick python-data", runCode?.description);
t0 = Date.now();
r = await call(client, "run_code", { language: "python-data",
  code: "import pandas as pd\nprint(pd.DataFrame({'a': [1, 2, 3]})['a'].sum())" });
console.log(`# one-shot python-data pandas run: ${Date.now() - t0} ms`);
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "6\n",
  "import pandas runs one-shot with language python-data", r.structuredContent);

// Output streamed as progress notifications, when the call asks for
// progress: chunks of each stream as they come, bounded.  The snippet
// pauses after its last line: this SDK (1.x) handles a notification a
// microtask after the response read with it, and drops progress whose
// request has been answered (typescript-sdk#2580), so output printed
// just before the end reaches the client in the result only.
const streamed = (progress, stream) => progress
  .filter((p) => p._meta?.["sandbox-runner/stream"] === stream).map((p) => p.message).join("");
let progress = [];
r = await call(client, "run_code", { language: "python",
  code: "import sys, time\nfor i in range(3):\n    print('line', i, flush=True); time.sleep(0.3)\nprint('oops', file=sys.stderr, flush=True); time.sleep(0.3)" },
  { onprogress: (p) => progress.push(p) });
check(streamed(progress, "stdout") === "line 0\nline 1\nline 2\n",
  "run_code streams stdout in progress notifications", progress);
check(streamed(progress, "stderr") === "oops\n", "... and stderr, tagged as such", progress);
check(progress.filter((p) => p._meta).length >= 3, "... each chunk as it comes, not all at the end", progress);
progress = [];
r = await call(client, "run_code", { language: "python", code: "import sys\nfor i in range(200):\n    sys.stdout.write('x' * 10000 + '\\n'); sys.stdout.flush()" },
  { onprogress: (p) => progress.push(p) });
const carried = streamed(progress, "stdout").length;
console.log(`# 2 MB of output: ${progress.length} notifications carrying ${carried} bytes`);
check(r.structuredContent?.status === "success" && carried > 0 && carried <= 96 * 1024,
  "the output streamed is bounded (64 KiB, give or take a chunk)", { n: progress.length, carried });
r = await call(client, "run_code", { language: "python", code: "print('quiet')" });
check(r.structuredContent?.stdout === "quiet\n", "a call without a progressToken gets none", r.structuredContent);

r = await call(client, "create_session", {});
const sid2 = r.structuredContent?.session_id;
r = await call(client, "shell_new", { session_id: sid2 });
const sh2 = r.structuredContent?.shell_id;
progress = [];
r = await call(client, "shell_exec", { shell_id: sh2, command: "for i in 1 2 3; do echo step $i; sleep 0.3; done" },
  { onprogress: (p) => progress.push(p) });
check(r.structuredContent?.output === "step 1\nstep 2\nstep 3\n"
  && streamed(progress, "output").startsWith("step 1\nstep 2\n") && progress.filter((p) => p._meta).length >= 2,
  "shell_exec streams its output as it comes", { progress, r: r.structuredContent });
await call(client, "close_session", { session_id: sid2 });

await client.close();
