// run_code once per language through the official MCP TypeScript SDK
// client over stdio: hello world in each language named in SR_LANGUAGES
// (the ones whose image the test imported), and list_supported_languages
// saying each is there, whether it compiles and its version.  Prints "RESULT 0|1 name"
// lines and "# ..." diagnostics.
//   SR_LANGUAGES="c go ..." node languages-client.mjs SR_BIN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};

// Each prints "hello LANGUAGE" and exits 0.
const hello = {
  c: '#include <stdio.h>\nint main(void) { puts("hello c"); return 0; }\n',
  javascript: 'console.log("hello javascript");\n',
  typescript: 'const s: string = "hello typescript";\nconsole.log(s);\n',
  go: 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello go") }\n',
  rust: 'fn main() {\n    println!("hello rust");\n}\n',
  java: 'public class Main {\n  public static void main(String[] args) {\n    System.out.println("hello java");\n  }\n}\n',
  bash: 'echo "hello bash"\n',
  ruby: 'puts "hello ruby"\n',
};
const compiled = new Set(["c", "typescript", "go", "rust", "java"]);

const client = new Client({ name: "sandbox-runner-languages-test", version: "1.0.0" });
// The test's environment (its image store, runtime dir) goes to the
// server: the SDK passes only a few variables otherwise.
await client.connect(new StdioClientTransport({ command: process.argv[2], args: ["serve"],
  env: process.env, stderr: "inherit" }));

const languages = (process.env.SR_LANGUAGES ?? "").split(/\s+/).filter(Boolean);
// What each image's build asked of its toolchain (rootfs/*.recipe's version).
const versions = {
  c: /^gcc \(Debian [^)]+\) \d+\.\d+/, cpp: /^g\+\+ \(Debian [^)]+\) \d+\.\d+/,
  javascript: /^Node\.js v\d+\.\d+/, typescript: /^TypeScript \d+\.\d+.*, Node\.js v\d+/,
  go: /^go version go1\.\d+/, rust: /^rustc 1\.\d+/, java: /^openjdk version 21\./,
  bash: /^GNU bash, version 5\./, ruby: /^ruby 3\.\d+/, python: /^Python 3\.\d+/,
};
let r = await client.callTool({ name: "list_supported_languages", arguments: {} });
const listed = new Map((r.structuredContent?.languages ?? []).map((l) => [l.language, l]));
for (const lang of languages) {
  const l = listed.get(lang);
  check(l?.available === true && l?.compiled === compiled.has(lang),
    `list_supported_languages: ${lang} is available${compiled.has(lang) ? " and compiled" : ""}`, l);
  check(versions[lang]?.test(l?.version ?? ""),
    `list_supported_languages: ${lang}'s version, as its image's build recorded it (${l?.version})`, l);
  r = await client.callTool({ name: "run_code", arguments: { language: lang, code: hello[lang] } },
    undefined, { timeout: 120000 });
  const s = r.structuredContent;
  check(!r.isError && s?.status === "success" && s?.stdout === `hello ${lang}\n`,
    `run_code ${lang}: hello world`, r);
}
await client.close();
