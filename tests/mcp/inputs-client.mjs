// run_code's inputs through the official MCP TypeScript SDK client over
// stdio: stdin (text and base64), args and files (a Python module, a
// second C++ source, a base64 data file), one-shot and in a session, and
// the refusals of bad ones with their codes.  Prints "RESULT 0|1 name"
// lines and "# ..." diagnostics.
//   node inputs-client.mjs SR_BIN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

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
const b64 = (s) => Buffer.from(s).toString("base64");

const client = new Client({ name: "sandbox-runner-inputs-test", version: "1.0.0" });
// The test's environment (its image store, runtime dir) goes to the
// server: the SDK passes only a few variables otherwise.
await client.connect(new StdioClientTransport({ command: process.argv[2], args: ["serve"],
  env: process.env, stderr: "inherit" }));
const run = (args) => client.callTool({ name: "run_code", arguments: args }, undefined,
  { timeout: 120000 });

const { tools } = await client.listTools();
const props = tools.find((t) => t.name === "run_code")?.inputSchema?.properties ?? {};
check(["stdin", "stdin_encoding", "args", "files"].every((k) => k in props),
      "tools/list: run_code takes stdin, stdin_encoding, args and files", Object.keys(props));

const py = `import sys, helper
print(sys.argv[1:], repr(sys.stdin.read()), helper.twice(21), open("/scratch/data.bin", "rb").read())`;
const pyFiles = { "helper.py": { content: "def twice(x): return 2 * x\n" },
                  "data.bin": { content: b64("\x00\x01"), encoding: "base64" } };
let r = await run({ language: "python", code: py, stdin: "one\ntwo\n", args: ["a b", "-x"],
                    files: pyFiles });
check(r.structuredContent?.status === "success"
      && r.structuredContent?.stdout === "['a b', '-x'] 'one\\ntwo\\n' 42 b'\\x00\\x01'\n",
      "python: stdin, args, a module to import and a base64 file reach the program", r.structuredContent);
r = await run({ language: "python", code: "import sys; print(sys.stdin.buffer.read())",
                stdin: Buffer.from([0, 0x41, 0xff]).toString("base64"), stdin_encoding: "base64" });
check(r.structuredContent?.stdout === "b'\\x00A\\xff'\n", "python: a base64 stdin arrives as its bytes",
      r.structuredContent);

const cpp = `#include <iostream>
#include <string>
int add(int, int);
int main(int argc, char **argv) {
  std::string w; std::cin >> w;
  std::cout << w << " " << add(2, 3) << " " << argc - 1 << " " << argv[argc - 1] << "\\n";
}`;
r = await run({ language: "cpp", code: cpp, stdin: "word rest", args: ["x", "last arg"],
                files: { "lib/add.cc": { content: "int add(int a, int b) { return a + b; }\n" } } });
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "word 5 2 last arg\n",
      "cpp: a second source in a directory is compiled too; stdin and args reach the program",
      r.structuredContent);

// --- in a session: the files land in its /scratch, stdin reaches the program ---
r = await client.callTool({ name: "create_session", arguments: { image: "python" } });
const sid = r.structuredContent?.session_id;
r = await run({ session_id: sid, language: "python", code: py, stdin: "in a session",
                args: ["s"], files: pyFiles });
check(r.structuredContent?.stdout === "['s'] 'in a session' 42 b'\\x00\\x01'\n",
      "session: stdin, args and files reach a session's run", r.structuredContent);
r = await run({ session_id: sid, language: "python", code: "import sys; print(repr(sys.stdin.read()))" });
check(r.structuredContent?.stdout === "''\n", "session: the next run without stdin reads an empty one",
      r.structuredContent);
await client.callTool({ name: "close_session", arguments: { session_id: sid } });

// --- refusals ---
const refused = async (args, code, pattern, name) => {
  const res = await run({ language: "python", code: "print(1)", ...args });
  const e = error(res);
  check(e.code === code && pattern.test(e.message ?? ""), name, res);
};
await refused({ stdin: "not base64!", stdin_encoding: "base64" }, "invalid_arguments",
              /stdin is not valid base64/, "bad base64 stdin is invalid_arguments, naming stdin");
await refused({ files: { "x.py": { content: "%%%", encoding: "base64" } } }, "invalid_arguments",
              /files\["x.py"\].content is not valid base64/, "a bad base64 file names the file");
await refused({ files: { "../x.py": { content: "" } } }, "invalid_file_name", /'\.\.\/x\.py'/,
              "a file name with .. is invalid_file_name");
await refused({ files: { "main.py": { content: "" } } }, "invalid_file_name", /clashes/,
              "a file named as the entry point is invalid_file_name");
await refused({ files: { "x.py": "text" } }, "invalid_arguments", /files\.x\.py must be an object/,
              "a file given as a bare string is refused by the schema");
await refused({ args: Array.from({ length: 257 }, (_, i) => String(i)) }, "too_many_args",
              /257 arguments/, "257 args are too_many_args");
await refused({ stdin: "x".repeat((1 << 20) + 1) }, "stdin_too_large", /max_stdin_size/,
              "a stdin over 1 MiB is stdin_too_large");
await refused({ files: { "big.txt": { content: "x".repeat((1 << 20) + 1) } } }, "file_too_large",
              /big\.txt.*max_code_file_size/, "a file over 1 MiB is file_too_large");
await refused({ files: { "big.txt": { content: b64("x".repeat((1 << 20) + 10)), encoding: "base64" } } },
              "file_too_large", /max_code_file_size/, "a base64 file over 1 MiB is file_too_large");
await client.close();
