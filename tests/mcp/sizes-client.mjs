// Files larger than one message, in pieces, through the official MCP
// TypeScript SDK client over stdio (or HTTP with --http URL TOKEN): an
// 8 MiB upload and an 8 MiB read back, each in pieces well under the
// SDK's 10 MiB cap, the bytes equal (sha256) and the session alive after.
// Prints "RESULT 0|1 name" lines for the shell test.
//   node sizes-client.mjs SR_BIN
//   node sizes-client.mjs --http URL TOKEN
import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const transport = http
  ? new StreamableHTTPClientTransport(new URL(argv[1]),
    { requestInit: { headers: { Authorization: `Bearer ${argv[2]}` } } })
  : new StdioClientTransport({ command: argv[0], args: ["serve"], env: process.env, stderr: "inherit" });
const client = new Client({ name: "sandbox-runner-sizes-test", version: "1.0.0" });
let closed = false;
transport.onclose = () => { closed = true; };
await client.connect(transport);
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
const errorCode = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error?.code : undefined;
  } catch {
    return undefined;
  }
};
const sha = (buf) => createHash("sha256").update(buf).digest("hex");
const PIECE = 3 << 20;

const file = randomBytes(8 << 20);
let r = await call("create_session", { image: "python" });
const sid = r.structuredContent?.session_id;
check(typeof sid === "string", "a session is created", r);

// --- upload in pieces ---
let ok = true, size = 0, t0 = Date.now();
for (let off = 0; off < file.length; off += PIECE) {
  const piece = file.subarray(off, off + PIECE);
  r = await call("upload_file", { session_id: sid, filename: "big.bin", offset: off,
                                  content_base64: piece.toString("base64") });
  if (r.isError || r.structuredContent?.size !== off + piece.length) {
    ok = false;
    console.log(`# piece at ${off}: ${JSON.stringify(r).slice(0, 400)}`);
    break;
  }
  size = r.structuredContent.size;
}
console.log(`# 8 MiB uploaded in ${Date.now() - t0} ms`);
check(ok && size === file.length, "an 8 MiB file uploads in 3 MiB pieces, each result giving the size so far");
r = await call("upload_file", { session_id: sid, filename: "big.bin", offset: 5,
                                content_base64: Buffer.from("x").toString("base64") });
check(errorCode(r) === "offset_mismatch" && /holds 8388608 bytes/.test(r.content?.[0]?.text),
      "a piece at the wrong offset is offset_mismatch, naming the size there", r);
r = await call("upload_file", { filename: "big.bin", offset: 8 << 20,
                                content_base64: Buffer.from("x").toString("base64") });
check(errorCode(r) === "invalid_arguments" && /session_id/.test(r.content?.[0]?.text),
      "a later piece without the session is refused, asking for its session_id", r);
r = await call("run_code", { session_id: sid, language: "python",
  code: "import hashlib; print(hashlib.sha256(open('/mnt/data/big.bin','rb').read()).hexdigest())" });
check(r.structuredContent?.stdout?.trim() === sha(file),
      "the file in the session has the uploaded bytes (sha256)", r.structuredContent);

// --- read back in pieces ---
r = await call("read_artifact", { session_id: sid, path: "big.bin" });
check(r.structuredContent?.delivery === "link" && r.structuredContent?.length === 0
      && r.structuredContent?.eof === false && r.content?.some((b) => b.type === "resource_link"),
      "a whole read of it is a resource_link, no bytes in the result", r.structuredContent);
const pieces = [];
let off = 0, eof = false, reads = 0, largest = 0;
t0 = Date.now();
while (!eof && reads < 10) {
  r = await call("read_artifact", { session_id: sid, path: "big.bin", offset: off, length: 1 << 30 });
  const s = r.structuredContent;
  const blob = r.content?.find((b) => b.type === "resource")?.resource?.blob;
  if (r.isError || s?.offset !== off || s?.size !== file.length || typeof blob !== "string") {
    console.log(`# read at ${off}: ${JSON.stringify(r).slice(0, 400)}`);
    break;
  }
  largest = Math.max(largest, JSON.stringify(r).length);
  pieces.push(Buffer.from(blob, "base64"));
  off += s.length;
  eof = s.eof;
  reads++;
}
console.log(`# 8 MiB read back in ${Date.now() - t0} ms`);
const back = Buffer.concat(pieces);
check(eof && reads === 3 && sha(back) === sha(file),
      "it reads back in 3 pieces, embedded resources (a length over 3 MiB cut to it), eof at the end, bytes equal (sha256)",
      { eof, reads, got: back.length });
check(largest < 10 << 20, `each piece's result (${largest} bytes) is under the SDK's 10 MiB cap`);
r = await call("read_artifact", { session_id: sid, path: "big.bin", offset: file.length + 5, length: 10 });
check(!r.isError && r.structuredContent?.length === 0 && r.structuredContent?.eof === true,
      "a read past the end is empty, at eof", r);

// --- the session and the connection are alive ---
r = await call("run_code", { session_id: sid, language: "python", code: "print(6 * 7)" });
check(r.structuredContent?.stdout === "42\n" && !closed,
      "a later run_code in the session works, on the same connection", r.structuredContent);
await call("close_session", { session_id: sid });
await client.close();
