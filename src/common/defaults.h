/* The one place that holds sandbox-runner's built-in defaults.  Everything
 * else takes its values from here (later overridden by configuration,
 * SANDBOX_* environment variables and flags, in that order).  */
#ifndef SR_DEFAULTS_H
#define SR_DEFAULTS_H

#define SR_DEFAULT_TIMEOUT_MS       10000u
#define SR_MAX_TIMEOUT_MS           30000u
#define SR_DEFAULT_MAX_OUTPUT       (100u * 1024u)
/* Every captured byte is held, then JSON-encoded (base64 when binary):
 * more per stream would make one result hundreds of megabytes.  */
#define SR_MAX_OUTPUT_CEILING       (16ull << 20)
/* The most output (stdout and stderr together) one MCP call returns: its
 * max_output argument is capped at max_output_ceiling, whose own bound
 * keeps a result under the official SDK's 10 MiB message even when every
 * byte is a control character (six bytes in structuredContent's JSON,
 * three in the text block, which shows it as U+FFFD).  */
#define SR_DEFAULT_MAX_OUTPUT_CEILING (1u << 20)
#define SR_MAX_OUTPUT_CEILING_BOUND (1u << 20)
#define SR_DEFAULT_TMP_SIZE         (64ull << 20)
#define SR_DEFAULT_SCRATCH_SIZE     (256ull << 20)
#define SR_DEFAULT_DEV_SHM_SIZE     (16ull << 20)
#define SR_DEFAULT_MEMORY           (256ull << 20)
#define SR_DEFAULT_CPUS             0.5
#define SR_DEFAULT_PIDS             64u
#define SR_DEFAULT_MAX_OPEN_FILES   1024u
/* Counted per user in each user namespace and in every namespace above
 * it: a container's share of its owner's host-wide RLIMIT_SIGPENDING (a
 * POSIX timer holds one) and RLIMIT_MSGQUEUE (one POSIX message queue of
 * the default size takes about 80 KiB).  */
#define SR_DEFAULT_MAX_PENDING_SIGNALS 256u
#define SR_DEFAULT_MAX_MSGQUEUE_BYTES  (128u * 1024u)
/* A container's user namespace limits (/proc/sys/user): its share of its
 * owner's fs.inotify and fanotify limits on the host.  */
#define SR_DEFAULT_MAX_INOTIFY_INSTANCES 16u
#define SR_DEFAULT_MAX_INOTIFY_WATCHES   8192u
#define SR_DEFAULT_MAX_FANOTIFY_GROUPS   8u
#define SR_DEFAULT_MAX_FANOTIFY_MARKS    8192u

#define SR_DEFAULT_COMPILE_TIMEOUT_MS 60000u
/* The compile cache of run_code (sandbox/compile-cache.h): its bound
 * in bytes of entries, least recently used evicted first.  */
#define SR_DEFAULT_COMPILE_CACHE_SIZE (256ull << 20)
#define SR_DEFAULT_MAX_CODE_SIZE    (50u * 1024u)
/* What run_code takes beside the code: its stdin, the other files of the
 * program (each, and all together) and the program's arguments.  Each
 * travels in one MCP message (max_message_size), base64 when binary, so
 * the defaults leave room for all of them at once.  */
#define SR_DEFAULT_MAX_STDIN_SIZE   (1u << 20)
#define SR_DEFAULT_MAX_CODE_FILE_SIZE (1u << 20)
#define SR_DEFAULT_MAX_CODE_FILES_SIZE (2u << 20)
#define SR_MAX_CODE_FILES           64u
#define SR_MAX_CODE_ARGS            256u
#define SR_MAX_CODE_ARGS_SIZE       (64u << 10)
#define SR_DEFAULT_MAX_CONCURRENT   4u
/* What one MCP message may carry, both ways.  The official TypeScript
 * SDK's stdio reader drops the connection once it holds more than 10 MiB
 * (STDIO_DEFAULT_MAX_BUFFER_SIZE in @modelcontextprotocol/sdk), so files
 * move in pieces of at most SR_MAX_PIECE_SIZE bytes (read_artifact with
 * offset and length, upload_file with offset); a piece travels as base64
 * (4 MiB), well under the cap for clients and proxies that allow less.
 * The default max_message_size is what a piece's upload needs; the
 * largest result sent leaves the client's cap a read of the pipe (64 KiB)
 * and the JSON-RPC envelope to spare.  */
#define SR_CLIENT_MAX_MESSAGE       (10u << 20)
#define SR_MAX_PIECE_SIZE           (3u << 20)
#define SR_BASE64_SIZE(n)           (((n) + 2) / 3 * 4)
#define SR_MESSAGE_ENVELOPE         (64u << 10)
#define SR_DEFAULT_MAX_MESSAGE_SIZE (SR_BASE64_SIZE (SR_MAX_PIECE_SIZE) + SR_MESSAGE_ENVELOPE)
#define SR_MAX_RESULT_SIZE          (SR_CLIENT_MAX_MESSAGE - (1u << 20))
#define SR_DEFAULT_LISTEN           "127.0.0.1:8080"
/* Of the 512 connections the HTTP server holds, what one address may
 * take: an eighth, so idle sockets of one host lock nobody else out,
 * while 16 busy clients of one host (a POST and a GET stream each, and
 * the connections their HTTP stacks keep) still fit.  A server behind a
 * proxy sees one address: set 0 there.  */
#define SR_DEFAULT_HTTP_MAX_CONNECTIONS_PER_IP 64u
/* Time to send a request's headers: what a client on any link needs,
 * and what a slow-loris one may hold a connection for.  */
#define SR_DEFAULT_HTTP_HEADER_TIMEOUT_MS 10000u
#define SR_DEFAULT_HTTP_SESSION_IDLE_MS (60u * 60u * 1000u)
/* How long a draining HTTP server lets its MCP sessions finish before
 * it ends them and exits: a run of the default timeout fits.  */
#define SR_DEFAULT_DRAIN_GRACE_MS (30u * 1000u)
/* The longest server_id: a server's name in HAProxy and the prefix of
 * its Mcp-Session-Ids, "{server_id}.{random}".  */
#define SR_SERVER_ID_MAX            63
/* A download_url is a link for a person or a plain client to follow soon
 * after the tool result that holds it: a quarter of an hour.  */
#define SR_DEFAULT_DOWNLOAD_URL_TTL_MS (15u * 60u * 1000u)
/* A run of a client that takes tasks (2026-07-28) becomes one after 10 s:
 * well within the 60 s request timeout of the common clients, long
 * after a snippet that answers at once.  Its result waits an hour.  */
#define SR_DEFAULT_TASK_AFTER_MS (10u * 1000u)
#define SR_DEFAULT_TASK_KEEP_MS (60u * 60u * 1000u)
#define SR_DEFAULT_MAX_SESSIONS     10u
/* What one HTTP client may hold of them: no client takes them all.  */
#define SR_DEFAULT_MAX_SESSIONS_PER_OWNER 5u
#define SR_DEFAULT_WARM_CONTAINERS  1u
#define SR_DEFAULT_SESSION_IDLE_MS  (30u * 60u * 1000u)
#define SR_DEFAULT_SESSION_DATA_SIZE (512ull << 20)
/* A session's SR_CODE_DIR: a tmpfs of its container (never a host
 * directory), with room for a compiled program and the files a snippet
 * writes beside its code, and an inode cap so a loop of empty files
 * stops long before kernel memory does.  */
#define SR_DEFAULT_SESSION_SCRATCH_SIZE (64ull << 20)
#define SR_DEFAULT_SESSION_SCRATCH_INODES 4096u
#define SR_DEFAULT_SESSION_IMAGE    "python-data"
/* A one-shot run's code directory: a nosuid, nodev tmpfs of its own
 * (sandbox/code-dir.h) when the runner is root, as large as a session's
 * and with as many inodes.  */
#define SR_DEFAULT_CODE_DIR_SIZE    SR_DEFAULT_SESSION_SCRATCH_SIZE
#define SR_CODE_DIR_INODES          SR_DEFAULT_SESSION_SCRATCH_INODES
/* What sr_files_list walks at most in a session's data.  */
#define SR_MAX_ARTIFACTS            10000u
#define SR_MAX_ARTIFACT_DEPTH       32u
#define SR_MAX_SHELLS_PER_SESSION   8u
#define SR_DEFAULT_MAX_UPLOAD_SIZE  (50ull << 20)
#define SR_DEFAULT_MAX_ARTIFACT_SIZE (50ull << 20)
#define SR_DEFAULT_MAX_SEARCH_BYTES (64ull << 20)
/* The file text one file_read or file_search returns (then a hint to page
 * or narrow): what the seed servers returned, well under the 25k-token
 * default cap of Claude Code on MCP output.  */
#define SR_DEFAULT_MAX_READ_SIZE    (50u * 1024u)
#define SR_MAX_READ_SIZE_BOUND      (1u << 20)
#define SR_DEFAULT_RESOURCE_PAGE_SIZE 100u
#define SR_DEFAULT_AUDIT_RETENTION_DAYS 90
#define SR_DEFAULT_BACKEND          "native"
/* The built-in language table: name, image (a name in the image store),
 * source file, compile command (empty: none), run command, description,
 * the Docker backend's image, and sources (empty: none).  The
 * code lands in /scratch, writable while it compiles, read-only while it
 * runs.
 *
 * The source file is the entry point: run_code's code is written there,
 * and the request's other files (run_code's files) beside it, under their
 * own names.  sources are space-separated fnmatch patterns of those other
 * files that the compile stage compiles too: each file that matches one
 * is appended to the compile command as SR_CODE_DIR/NAME, in the
 * request's order, after what the command names itself (which names the
 * entry point).  A language whose compiler finds the other files by
 * itself (go build, tsc, rustc's mod) or that has no compile stage leaves
 * it out.  The run command gets the request's args after its own.  One
 * row per language.
 *
 * warm_start names the bootstrap (sandbox/prestart.h) with which a warm
 * container of a one-stage language starts its interpreter ahead of the
 * run ("": none, the run starts it cold); preload lists the modules it
 * imports then (names separated by commas or spaces).  python-data's are
 * the heavy ones its snippets import first.  Both Pythons start warm: a
 * pre-started run is the container's command as a cold one is, and
 * differs from it in nothing a snippet sees but the time to its first
 * line.
 *
 * python-data is Python with the data stack, for one-shot runs as for
 * sessions (whose default image it is, so a Docker session gets its
 * docker_image too).  On Docker it is Jupyter's scipy-notebook, the
 * public image with that stack, whose python3 is in /opt/conda/bin (see
 * SR_DEFAULT_PATH).
 *
 * A language's fit to the default limits (SR_DEFAULT_MEMORY 256 MiB,
 * SR_DEFAULT_PIDS 64, which counts threads) lives in its commands, the one
 * place a runtime is told about them, as flags or through env(1):
 *   SR_JVM_FLAGS   (javac too, run as java -m jdk.compiler) the serial GC,
 *                  one CPU's worth of JIT and GC threads (about 15
 *                  threads), the heap as large as a 256 MiB machine
 *                  (MaxRAM, 100%), so a program that outgrows it meets the
 *                  memory limit (status oom) as in the other languages,
 *                  not the JVM's own OutOfMemoryError;
 *   go             GOMAXPROCS=2, one package compiled at a time, its build
 *                  cache and HOME in /tmp (the image is read-only), never
 *                  a toolchain download or the module proxy; sr-go-build
 *                  is rootfs/go.recipe's go build over the standard
 *                  library it compiled at build (so go has no public
 *                  Docker image: import that one and set docker_image);
 *   node           V8's old space held to 256 MiB (it collects before it
 *                  grows past the memory limit), the V8 worker pool to 2;
 *   rustc          one codegen unit (one LLVM thread);
 *   tsc            Node's own types (Debian's node-types-node), not the
 *                  DOM's, and no check of the .d.ts files: a quarter of
 *                  the compile time.
 * An operator who raises memory or pids raises these with
 * language.NAME.compile and language.NAME.run.
 *
 * cpp's -std=c++17 -O2 are also the flags rootfs/cpp.recipe precompiles
 * the common standard headers with: g++ uses a precompiled header only
 * under the flags it was made with, so a change to one is a change to
 * both (other flags still compile, from the headers).  */
#define SR_CODE_DIR                 "/scratch"
/* Debian's mold puts its `ld` in /usr/libexec/mold: -B there makes gcc
 * link with mold (a hello world links in a third of ld.bfd's time), and
 * gcc skips a -B directory that does not exist, so an image without mold
 * (gcc:14 on Docker) still links, with ld.bfd.  -fno-use-linker-plugin:
 * nothing here is built with -flto, and the LTO plugin gcc otherwise
 * hands the linker, which loads it and shows it every input, took a
 * third of a hello world's link CPU time (6-30 ms of 13-45).  */
#define SR_FAST_LINKER              "-B/usr/libexec/mold -fno-use-linker-plugin"
/* -pipe: the assembler reads the compiler's output as it comes, instead
 * of starting on a temporary .s after the compiler has exited, and the
 * compiler's exit (unmapping its precompiled header and heap, 2-3 ms)
 * overlaps the assembly: a C++ hello world's run-code took 2-3 ms less.
 * The output and the diagnostics are the same.  */
#define SR_GCC_PIPE                 "-pipe"
#define SR_WARM_START_PYTHON        "python"
#define SR_JVM_FLAGS                                                                  \
  "-XX:+UseSerialGC -XX:ActiveProcessorCount=1 -XX:TieredStopAtLevel=1 "            \
  "-XX:MaxRAM=256m -XX:MaxRAMPercentage=100 -Xss1m"
#define SR_GO_ENV                                                                     \
  "env GOMAXPROCS=2 GOFLAGS=-p=1 CGO_ENABLED=0 HOME=/tmp GOCACHE=/tmp/go-cache "     \
  "GOPATH=/tmp/go GOTOOLCHAIN=local GOPROXY=off "
#define SR_NODE_FLAGS               "--max-old-space-size=256 --v8-pool-size=2"
#define SR_DEFAULT_LANGUAGES                                                          \
  { "python", "python", "main.py", "", "python3 " SR_CODE_DIR "/main.py",             \
    "Python 3 (CPython, standard library only): the fastest to start",                \
    "python:3.12-slim", "", SR_WARM_START_PYTHON, "" },              \
  { "python-data", "python-data", "main.py", "",                                      \
    "python3 " SR_CODE_DIR "/main.py",                                                \
    "Python 3 with numpy, pandas, matplotlib, seaborn, scipy, openpyxl and "          \
    "reportlab: for data and charts; slower to start than python",                    \
    "quay.io/jupyter/scipy-notebook", "",                                             \
    SR_WARM_START_PYTHON, "numpy, pandas, matplotlib" },            \
  { "cpp", "cpp", "main.cpp",                                                         \
    "g++ " SR_GCC_PIPE " " SR_FAST_LINKER " -std=c++17 -O2 -o " SR_CODE_DIR "/main "  \
    SR_CODE_DIR "/main.cpp",                                                          \
    SR_CODE_DIR "/main", "C++17, compiled with g++ -O2", "gcc:14", "*.cpp *.cc *.cxx", "", "" }, \
  { "c", "c", "main.c",                                                               \
    "gcc " SR_GCC_PIPE " " SR_FAST_LINKER " -std=c17 -O2 -o " SR_CODE_DIR "/main "    \
    SR_CODE_DIR "/main.c -lm",                                                        \
    SR_CODE_DIR "/main", "C17, compiled with gcc -O2 (libm linked)", "gcc:14",        \
    "*.c", "", "" },                                                                  \
  { "javascript", "javascript", "main.js", "",                                        \
    "node " SR_NODE_FLAGS " " SR_CODE_DIR "/main.js",                                 \
    "JavaScript on Node.js (CommonJS, no npm packages)", "node:20-slim", "", "", "" }, \
  { "typescript", "typescript", "main.ts",                                            \
    "tsc --pretty false --noEmitOnError --skipLibCheck --target es2022 --lib es2022 " \
    "--module commonjs --types node --typeRoots /usr/share/nodejs/@types --outDir "   \
    SR_CODE_DIR " " SR_CODE_DIR "/main.ts",                                           \
    "node " SR_NODE_FLAGS " " SR_CODE_DIR "/main.js",                                 \
    "TypeScript, checked and compiled with tsc, run on Node.js", "", "", "", "" },    \
  { "go", "go", "main.go", SR_GO_ENV "sr-go-build -o " SR_CODE_DIR "/main "           \
    SR_CODE_DIR "/main.go", "env GOMAXPROCS=2 " SR_CODE_DIR "/main",                  \
    "Go, compiled with go build (package main, standard library only)", "", "*.go", "", "" }, \
  { "rust", "rust", "main.rs",                                                        \
    "rustc --edition 2021 -O -C codegen-units=1 -o " SR_CODE_DIR "/main "             \
    SR_CODE_DIR "/main.rs",                                                           \
    SR_CODE_DIR "/main", "Rust (edition 2021), compiled with rustc -O (std only)",    \
    "rust:slim", "", "", "" },                                                        \
  { "java", "java", "Main.java",                                                      \
    "java " SR_JVM_FLAGS " -m jdk.compiler/com.sun.tools.javac.Main -d " SR_CODE_DIR  \
    " " SR_CODE_DIR "/Main.java",                                                     \
    "java " SR_JVM_FLAGS " -cp " SR_CODE_DIR " Main",                                 \
    "Java 21 on OpenJDK, compiled with javac (class Main)", "eclipse-temurin:21",     \
    "*.java", "", "" },                                                               \
  { "bash", "bash", "main.sh", "", "bash " SR_CODE_DIR "/main.sh",                    \
    "Bash with the coreutils, grep, sed and gawk", "debian:trixie-slim", "", "", "" }, \
  { "ruby", "ruby", "main.rb", "", "ruby " SR_CODE_DIR "/main.rb", "Ruby 3",          \
    "ruby:3.3-slim", "", "", "" }

/* The largest image manifest, index or config we read.  */
#define SR_MAX_IMAGE_DOCUMENT       (4u << 20)
/* What installing one image may write, well above the largest default
 * image (python-data: 643 MiB and 25,000 entries extracted).  */
#define SR_DEFAULT_MAX_IMAGE_SIZE    (4ull << 30)
#define SR_DEFAULT_MAX_IMAGE_ENTRIES 1000000u

#define SR_DEFAULT_HOSTNAME         "sandbox"
/* Every container's PATH, the image's own aside (Docker runs never get
 * it): /opt/conda/bin last finds the python3 of a conda-based image (the
 * Docker image of python-data), and is harmless where it is missing.  */
#define SR_DEFAULT_PATH             "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/conda/bin"
#define SR_DEFAULT_LANG             "C.UTF-8"
#define SR_SCRATCH_DIR              "/work"
#define SR_DEFAULT_WORKDIR          SR_SCRATCH_DIR
#define SR_DEFAULT_HOME             SR_SCRATCH_DIR
/* A session's persistent data: SR_DATA_DIR on a tmpfs mounted at
 * SR_DATA_MOUNT (its parent, present in every Debian image).  */
#define SR_DATA_MOUNT               "/mnt"
#define SR_DATA_DIR                 SR_DATA_MOUNT "/data"

/* When the runner is host root and /etc/subuid has no range for root, the
 * container's ids 0..SR_ROOT_MAP_COUNT-1 map to one of SR_ROOT_MAP_SLOTS
 * unprivileged ranges from SR_ROOT_MAP_BASE on (runtime/idmap.h), far
 * above what useradd hands out for subordinate ids: 0x70000000 to
 * 0x7fffffff, as many live containers as slots.  */
#define SR_ROOT_MAP_BASE            1879048192u
#define SR_ROOT_MAP_COUNT           65536u
#define SR_ROOT_MAP_SLOTS           4096u

/* Who run_code's and sessions' commands are inside the container (the
 * user setting): an unprivileged user, as mcp-code-sandbox ran its
 * snippets, on top of the user namespace and the empty capability sets.
 * `run` keeps root, a generic container's usual user.  The images of
 * rootfs/ name uid 1000 "sandbox" (build-image.sh).  */
#define SR_DEFAULT_USER             "1000"
#define SR_DEFAULT_RUN_USER         "root"

/* Output after the cap is drained and counted, never stored.  */
#define SR_TRUNCATION_MARKER_FMT    "\n[sandbox-runner: output truncated after %zu bytes; %llu bytes dropped]\n"

#endif
