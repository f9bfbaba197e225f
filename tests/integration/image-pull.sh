#!/bin/sh
# image pull against a real registry: Debian's docker-registry (the CNCF
# distribution server) on a loopback port, filled with skopeo.  Three
# instances: open, htpasswd (Basic) and token auth, the last trusting a
# small token service of ours that signs real JWTs with openssl.
. "${SR_SRCDIR}/tests/integration/lib.sh"

command -v docker-registry >/dev/null || skip_all "docker-registry is not installed (apt-get install docker-registry)"
command -v skopeo >/dev/null || skip_all "skopeo is not installed (apt-get install skopeo)"
command -v python3 >/dev/null || skip_all "python3 is not installed"
require_busybox_rootfs

export SANDBOX_IMAGE_STORE=$sr_tmp/store
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
case $arch in i386) arch=386 ;; armhf|armel) arch=arm ;; ppc64el) arch=ppc64le ;; esac

# start_registry NAME [AUTH-YAML]: starts a registry with its storage and
# log under $sr_tmp/NAME; sets $port.
start_registry () {
  local name=$1 auth=${2:-} dir=$sr_tmp/$1 pid
  port=$(free_port)
  mkdir -p "$dir/data"
  cat > "$dir/config.yml" <<EOF
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
$auth
EOF
  docker-registry serve "$dir/config.yml" > "$dir/log" 2>&1 &
  pid=$!
  at_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
  for _ in $(seq 50); do
    if python3 - "$port" <<'EOF' 2>/dev/null; then return 0; fi
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen("http://127.0.0.1:%s/v2/" % sys.argv[1], timeout=1)
except urllib.error.HTTPError:
    pass
EOF
    sleep 0.1
  done
  echo "# registry $name did not start:"; sed 's/^/#   /' "$dir/log"
  return 1
}

# wait_port PORT: until something listens on 127.0.0.1:PORT (5 s at most).
wait_port () {
  python3 - "$1" <<'EOF'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
}

# blob_gets NAME: how many blob downloads registry NAME has served.
blob_gets () {
  grep -c 'http.request.method=GET.*http.request.uri="/v2/[^"]*/blobs/sha256:' "$sr_tmp/$1/log" || true
}

# --- an OCI layout of the busybox rootfs, as rootfs/build-image.sh writes one
layout=$sr_tmp/layout
mkdir -p "$layout/blobs/sha256"
echo "pulled from a registry" > "$ROOTFS/etc/motd"
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$ROOTFS" -cf "$sr_tmp/layer.tar" .
diff_id=$(sha256sum "$sr_tmp/layer.tar" | cut -d' ' -f1)
gzip -n -1 < "$sr_tmp/layer.tar" > "$sr_tmp/layer.tar.gz"
rm "$sr_tmp/layer.tar"
put_blob () {  # put_blob FILE: moves FILE into the layout; prints "DIGEST SIZE"
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$layout/blobs/sha256/$d"
  echo "$d $s"
}
set -- $(put_blob "$sr_tmp/layer.tar.gz")
layer=$1 layer_size=$2
printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["sh"],"WorkingDir":"/work"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$diff_id" > "$sr_tmp/config.json"
set -- $(put_blob "$sr_tmp/config.json")
config=$1 config_size=$2
manifest_json () {  # manifest_json CONFIG-DIGEST CONFIG-SIZE
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
    "$1" "$2" "$layer" "$layer_size"
}
manifest_json "$config" "$config_size" > "$sr_tmp/manifest.json"
set -- $(put_blob "$sr_tmp/manifest.json")
manifest=$1 manifest_size=$2
# The same layer for another platform, to be listed first in an index.
sed "s/\"architecture\":\"$arch\"/\"architecture\":\"s390x\"/" "$layout/blobs/sha256/$config" > "$sr_tmp/config.json"
set -- $(put_blob "$sr_tmp/config.json")
manifest_json "$1" "$2" > "$sr_tmp/manifest.json"
set -- $(put_blob "$sr_tmp/manifest.json")
other=$1 other_size=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"s390x","os":"linux"}},{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"}}]}' \
  "$other" "$other_size" "$manifest" "$manifest_size" "$arch" > "$sr_tmp/index.json"
set -- $(put_blob "$sr_tmp/index.json")
index=$1 index_size=$2
printf '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
# "latest" is the image itself, "multi" the two-platform index.
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"latest"}},{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"multi"}}]}' \
  "$manifest" "$manifest_size" "$index" "$index_size" > "$layout/index.json"

echo '{"default":[{"type":"insecureAcceptAnything"}]}' > "$sr_tmp/policy.json"
push () {  # push DEST [skopeo copy options...]
  local dest=$1
  shift
  skopeo --policy "$sr_tmp/policy.json" copy -q --dest-tls-verify=false "$@" \
    "oci:$layout:latest" "docker://$dest" > "$sr_tmp/push.log" 2>&1 \
    || { sed 's/^/# skopeo: /' "$sr_tmp/push.log"; return 1; }
}

# --- an open registry
start_registry open || skip_all "docker-registry does not start here"
reg=127.0.0.1:$port
push "$reg/test/busybox:1" --digestfile "$sr_tmp/digest"
ok $? "skopeo pushes the OCI image to the registry"
push "$reg/test/docker:1" --format v2s2
ok $? "and a Docker v2s2 copy of it"
# The whole index, under a tag of its own.
skopeo --policy "$sr_tmp/policy.json" copy -q --all --dest-tls-verify=false \
  "oci:$layout:multi" "docker://$reg/test/multi:1" > "$sr_tmp/push.log" 2>&1
ok $? "and the two-platform index"

run_sr image pull "$reg/test/busybox:1"
is "$rc" 0 "image pull by tag"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
like "$out" "^$reg/test/busybox:1 [0-9a-f]{64}$" "prints the name and id"
is "${out##* }" "$config" "the id is the config digest"
run_sr image list
like "$out" "$reg/test/busybox:1" "image list shows the pulled image"
run_sr run --image "$reg/test/busybox:1" -- /bin/busybox echo hi
is "$out" hi "a container runs on the pulled image"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
run_sr run --image "$reg/test/busybox:1" -- /bin/busybox cat /etc/motd
is "$out" "pulled from a registry" "with the layer's files"

before=$(blob_gets open)
run_sr image pull "$reg/test/busybox:1"
is "$rc" 0 "a second pull succeeds"
is "$(blob_gets open)" "$before" "and downloads no blob again"

digest=$(cat "$sr_tmp/digest")
SANDBOX_IMAGE_STORE=$sr_tmp/store-digest run_sr image pull "$reg/test/busybox@$digest"
is "$rc" 0 "image pull by digest into an empty store"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
like "$out" "^$reg/test/busybox@$digest $config$" "names the image by its digest"

SANDBOX_IMAGE_STORE=$sr_tmp/store-docker run_sr image pull "$reg/test/docker:1"
is "$rc" 0 "image pull of a Docker v2s2 manifest"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
SANDBOX_IMAGE_STORE=$sr_tmp/store-docker run_sr run --image "$reg/test/docker:1" -- /bin/busybox echo docker
is "$out" docker "and it runs"

SANDBOX_IMAGE_STORE=$sr_tmp/store-multi run_sr image pull "$reg/test/multi:1"
is "$rc" 0 "image pull of an index picks the host's platform"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
is "${out##* }" "$config" "the manifest for $arch"

run_sr image pull "$reg/test/busybox:nope"
is "$rc" 125 "a missing tag fails"
like "$err" "pull $reg/test/busybox:nope: manifest unknown \(404\)" "naming the reference, the registry's message and the status"
printf '#   %s\n' "$err"
run_sr image pull "$reg/nope/nothing"
like "$err" "pull $reg/nope/nothing: .*(unknown|not found).*\(404\)" "a missing repository too"
printf '#   %s\n' "$err"
run_sr image pull "$reg/test/busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000"
like "$err" "manifest unknown \(404\)" "a missing digest too"
run_sr image pull "$reg/Test/BusyBox"
like "$err" "invalid repository 'Test/BusyBox'" "an invalid reference is refused before any request"
run_sr image pull "127.0.0.1:1/test/busybox:1"
is "$rc" 125 "a registry that is not there fails"
like "$err" "pull 127.0.0.1:1/test/busybox:1: GET http://127.0.0.1:1/v2/test/busybox/manifests/1: .*(refused|connect)" "naming the URL and curl's reason"
printf '#   %s\n' "$err"

# A pulled layer is held to max_image_size and max_image_entries as an
# imported one: a small gzip layer of 4 MiB of zeros, a layer of 100 empty
# files.  Refused, neither leaves an image or an extraction; their
# verified blobs stay (a retry with a raised cap downloads nothing) until
# image prune.
push_bomb () {  # push_bomb NAME ENTRY
  python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" tar "$sr_tmp/$1.tar" "$2"
  python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" layout "$sr_tmp/$1" --ref latest "$sr_tmp/$1.tar"
  skopeo --policy "$sr_tmp/policy.json" copy -q --dest-tls-verify=false \
    "oci:$sr_tmp/$1:latest" "docker://$reg/test/$1:1" > "$sr_tmp/push.log" 2>&1 \
    || { sed 's/^/# skopeo: /' "$sr_tmp/push.log"; return 1; }
}
nothing_installed () {  # nothing_installed STORE
  [ -z "$(ls "$1/images")" ] && [ -z "$(ls "$1/tmp")" ] \
    && ! grep -q bomb "$1/names.json" 2>/dev/null
}
push_bomb sizebomb "z:zeros=4194304"
ok $? "skopeo pushes a gzip bomb"
store=$sr_tmp/store-sizebomb
SANDBOX_IMAGE_STORE=$store SANDBOX_MAX_IMAGE_SIZE=1M run_sr image pull "$reg/test/sizebomb:1"
is "$rc" 125 "a pulled layer that expands past max_image_size is refused"
like "$err" "pull $reg/test/sizebomb:1: layer 1 of 1 \(sha256:[0-9a-f]{64}\): entry zeros: the image passes max_image_size \(1048576 bytes of file data\); raise that setting" \
  "naming the reference, the layer, the entry, the cap and the setting"
printf '#   %s\n' "$err"
nothing_installed "$store"; ok $? "and leaves no image, name, download or extraction"
before=$(blob_gets open)
SANDBOX_IMAGE_STORE=$store SANDBOX_MAX_IMAGE_SIZE=4M run_sr image pull "$reg/test/sizebomb:1"
is "$rc" 0 "with the cap raised to its size it installs"
is "$(blob_gets open)" "$before" "from the blobs the refused pull kept"
push_bomb inodebomb "n:many=100"
ok $? "skopeo pushes an inode bomb"
store=$sr_tmp/store-inodebomb
SANDBOX_IMAGE_STORE=$store SANDBOX_MAX_IMAGE_ENTRIES=100 run_sr image pull "$reg/test/inodebomb:1"
is "$rc" 125 "a pulled layer that makes more than max_image_entries names is refused"
like "$err" "pull $reg/test/inodebomb:1: layer 1 of 1 \(sha256:[0-9a-f]{64}\): entry many/99: the image passes max_image_entries \(100 files, directories and links\); raise that setting" \
  "naming the reference, the layer, the entry, the cap and the setting"
nothing_installed "$store"; ok $? "and leaves no image, name, download or extraction"
SANDBOX_IMAGE_STORE=$store run_sr image prune
[ -z "$(ls "$store/blobs/sha256")" ]; ok $? "image prune removes the refused image's blobs"

# An interrupted download resumes from what tmp/ holds; a partial that
# does not fit is thrown away and the blob fetched again.
store=$sr_tmp/store-resume
mkdir -p "$store/tmp"
head -c 1000 "$layout/blobs/sha256/$layer" > "$store/tmp/blob-$layer.partial"
SANDBOX_IMAGE_STORE=$store run_sr image pull "$reg/test/busybox:1"
is "$rc" 0 "a pull resumes an interrupted layer download"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"
like "$(grep -c "blobs/sha256:$layer" "$sr_tmp/open/log")" "[0-9]" "the layer was fetched"
store=$sr_tmp/store-badpartial
mkdir -p "$store/tmp"
head -c 1000 /dev/urandom > "$store/tmp/blob-$layer.partial"
SANDBOX_IMAGE_STORE=$store run_sr image pull "$reg/test/busybox:1"
is "$rc" 0 "a spoilt partial download is fetched again from the start"
[ "$rc" -eq 0 ] || printf '# %s\n' "$err"

# A blob that changed on the registry's disk does not hash to its digest.
data=$sr_tmp/open/data/docker/registry/v2/blobs/sha256/$(echo "$layer" | cut -c1-2)/$layer/data
printf 'X' | dd of="$data" bs=1 seek=200 conv=notrunc 2>/dev/null
SANDBOX_IMAGE_STORE=$sr_tmp/store-corrupt run_sr image pull "$reg/test/busybox:1"
is "$rc" 125 "a corrupted layer is refused"
like "$err" "sha256:$layer: digest mismatch: the content hashes to sha256:[0-9a-f]{64}" "naming both digests"
printf '#   %s\n' "$err"
SANDBOX_IMAGE_STORE=$sr_tmp/store-corrupt run_sr image list
n_named=$(printf '%s' "$out" | grep -c "test/busybox" || true)
is "$n_named" 0 "and no image is installed"

# --- htpasswd (Basic) auth
if command -v htpasswd >/dev/null; then
  htpasswd -Bbc "$sr_tmp/htpasswd" alice s3cret 2>/dev/null
  start_registry basic "auth:
  htpasswd:
    realm: sandbox-test
    path: $sr_tmp/htpasswd"
  breg=127.0.0.1:$port
  push "$breg/test/busybox:1" --dest-creds alice:s3cret
  ok $? "skopeo pushes to the htpasswd registry"
  export SANDBOX_IMAGE_STORE=$sr_tmp/store-basic
  run_sr image pull "$breg/test/busybox:1"
  is "$rc" 125 "without credentials the pull fails"
  like "$err" "pull $breg/test/busybox:1: authentication required \(401\); .*needs a username and password \(--username" "saying the registry wants credentials"
  printf '#   %s\n' "$err"
  printf 's3cret\n' | "$SR_BIN" image pull --username alice --password-stdin "$breg/test/busybox:1" \
    > "$sr_tmp/out" 2> "$sr_tmp/err"
  st=$?
  is "$st" 0 "with --username and --password-stdin it succeeds (Basic)"
  [ "$st" -eq 0 ] || sed 's/^/# /' "$sr_tmp/err"
  like "$(cat "$sr_tmp/out")" "^$breg/test/busybox:1 $config$" "and installs the image"
  printf 'wrong\n' | SANDBOX_IMAGE_STORE=$sr_tmp/store-basic2 "$SR_BIN" image pull --username alice \
    --password-stdin "$breg/test/busybox:1" > "$sr_tmp/out" 2> "$sr_tmp/err"
  is "$?" 125 "a wrong password fails"
  like "$(cat "$sr_tmp/err")" "pull $breg/test/busybox:1: the registry refused the credentials of 'alice' \(401\)" "with a clear 401 error"
  sed 's/^/#   /' "$sr_tmp/err"

  # A front that sends blob downloads to another origin, as registries
  # do with a CDN: the credentials must not follow the redirect.
  fport=$(free_port)
  cport=$(free_port)
  cat > "$sr_tmp/front.py" <<'EOF'
import base64, http.server, re, sys, threading, urllib.error, urllib.request

fport, cport, registry = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
CDN_AUTH = "Basic " + base64.b64encode(b"alice:s3cret").decode()
PASS = ("Content-Type", "Content-Length", "Content-Range", "Docker-Content-Digest",
        "WWW-Authenticate")

def forward(h, path, auth):
    headers = {k: h.headers[k] for k in ("Accept", "Range") if h.headers.get(k)}
    if auth:
        headers["Authorization"] = auth
    try:
        r = urllib.request.urlopen(urllib.request.Request(registry + path, headers=headers))
        status, hdrs, body = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, body = e.code, e.headers, e.read()
    h.send_response(status)
    for k in PASS:
        if hdrs.get(k):
            h.send_header(k, hdrs[k])
    h.end_headers()
    h.wfile.write(body)

class Front(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        m = re.match(r"^/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$", self.path)
        if m and self.headers.get("Authorization"):
            self.send_response(307)
            self.send_header("Location", "http://127.0.0.1:%d/cdn/%s/%s" % (cport, m[1], m[2]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        forward(self, self.path, self.headers.get("Authorization"))
    def log_message(self, *a):
        pass

class Cdn(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        sys.stderr.write("cdn %s auth=%s\n" % (self.path, "yes" if self.headers.get("Authorization") else "no"))
        sys.stderr.flush()
        repo, _, digest = self.path[len("/cdn/"):].rpartition("/")
        forward(self, "/v2/%s/blobs/%s" % (repo, digest), CDN_AUTH)
    def log_message(self, *a):
        pass

cdn = http.server.ThreadingHTTPServer(("127.0.0.1", cport), Cdn)
threading.Thread(target=cdn.serve_forever, daemon=True).start()
http.server.ThreadingHTTPServer(("127.0.0.1", fport), Front).serve_forever()
EOF
  python3 "$sr_tmp/front.py" "$fport" "$cport" "http://$breg" 2> "$sr_tmp/front.log" &
  fpid=$!
  at_exit "kill $fpid 2>/dev/null; wait $fpid 2>/dev/null"
  wait_port "$fport" && wait_port "$cport" || echo "# the redirecting front did not start"
  printf 's3cret\n' | SANDBOX_IMAGE_STORE=$sr_tmp/store-cdn "$SR_BIN" image pull --username alice \
    --password-stdin "127.0.0.1:$fport/test/busybox:1" > "$sr_tmp/out" 2> "$sr_tmp/err"
  st=$?
  is "$st" 0 "a pull follows blob redirects to another origin"
  [ "$st" -eq 0 ] || sed 's/^/# /' "$sr_tmp/err"
  is "$(grep -c "^cdn /cdn/test/busybox/sha256:.* auth=no$" "$sr_tmp/front.log")" 2 \
    "both blobs came from the other origin"
  is "$(grep -c "auth=yes" "$sr_tmp/front.log")" 0 "which never saw the registry's credentials"
  export SANDBOX_IMAGE_STORE=$sr_tmp/store
else
  skip "htpasswd is not installed (apt-get install apache2-utils)"
fi

# --- token (Bearer) auth: the registry verifies the JWTs our token service
# signs with a certificate it trusts.
if command -v openssl >/dev/null; then
  tok=$sr_tmp/token
  mkdir -p "$tok"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tok/key.pem" -out "$tok/cert.pem" \
    -days 2 -subj "/CN=sandbox-test-token" > /dev/null 2>&1
  tport=$(free_port)
  cat > "$tok/server.py" <<'EOF'
import base64, http.server, json, subprocess, sys, time, urllib.parse

port, key, cert = int(sys.argv[1]), sys.argv[2], sys.argv[3]
USER, PASSWORD = "bob", "t0ken-pass"
with open(cert) as f:
    der = subprocess.run(["openssl", "x509", "-outform", "DER"], stdin=f,
                         capture_output=True, check=True).stdout
x5c = base64.b64encode(der).decode()

def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

def sign(claims):
    header = {"typ": "JWT", "alg": "RS256", "x5c": [x5c]}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key],
                         input=signing_input.encode(), capture_output=True, check=True).stdout
    return signing_input + "." + b64url(sig)

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        auth = self.headers.get("Authorization", "")
        user = None
        if auth.startswith("Basic "):
            u, _, p = base64.b64decode(auth[6:]).decode().partition(":")
            if (u, p) != (USER, PASSWORD):
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"details":"bad credentials"}')
                return
            user = u
        access = []
        for scope in q.get("scope", []):
            typ, name, actions = scope.split(":", 2)
            # Anonymous callers may only pull test/public.
            if user or name == "test/public":
                access.append({"type": typ, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        claims = {"iss": "sandbox-test-issuer", "sub": user or "", "aud": q.get("service", [""])[0],
                  "exp": now + 300, "nbf": now - 10, "iat": now, "jti": str(time.time_ns()),
                  "access": access}
        body = json.dumps({"access_token": sign(claims), "expires_in": 300}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        sys.stderr.write("token for %r scope %r\n" % (user, q.get("scope")))

    def log_message(self, fmt, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
EOF
  python3 "$tok/server.py" "$tport" "$tok/key.pem" "$tok/cert.pem" > "$tok/log" 2>&1 &
  tpid=$!
  at_exit "kill $tpid 2>/dev/null; wait $tpid 2>/dev/null"
  wait_port "$tport" || { echo "# the token service did not start:"; sed 's/^/#   /' "$tok/log"; }
  start_registry bearer "auth:
  token:
    realm: http://127.0.0.1:$tport/token
    service: sandbox-test-registry
    issuer: sandbox-test-issuer
    rootcertbundle: $tok/cert.pem"
  treg=127.0.0.1:$port
  push "$treg/test/busybox:1" --dest-creds bob:t0ken-pass
  ok $? "skopeo pushes to the token-auth registry"
  push "$treg/test/public:1" --dest-creds bob:t0ken-pass
  export SANDBOX_IMAGE_STORE=$sr_tmp/store-bearer
  run_sr image pull "$treg/test/public:1"
  is "$rc" 0 "an anonymous Bearer token pulls a public repository"
  [ "$rc" -eq 0 ] || printf '# %s\n' "$err"
  run_sr image pull "$treg/test/busybox:1"
  is "$rc" 125 "an anonymous token does not pull a private one"
  like "$err" "pull $treg/test/busybox:1: authentication required \(401\); .*needs a username and password" "and says 401 and that it wants credentials"
  printf '#   %s\n' "$err"
  printf 't0ken-pass' | SANDBOX_IMAGE_STORE=$sr_tmp/store-bearer2 "$SR_BIN" image pull \
    --username bob --password-stdin "$treg/test/busybox:1" > "$sr_tmp/out" 2> "$sr_tmp/err"
  st=$?
  is "$st" 0 "with credentials the token service grants a pull (Bearer)"
  [ "$st" -eq 0 ] || sed 's/^/# /' "$sr_tmp/err"
  like "$(cat "$sr_tmp/out")" "^$treg/test/busybox:1 $config$" "and the image is installed"
  like "$(cat "$tok/log")" "token for 'bob' scope \['repository:test/busybox:pull'\]" "the token was asked for the registry's scope"
  printf 'nope' | SANDBOX_IMAGE_STORE=$sr_tmp/store-bearer3 "$SR_BIN" image pull \
    --username bob --password-stdin "$treg/test/busybox:1" > "$sr_tmp/out" 2> "$sr_tmp/err"
  is "$?" 125 "a wrong password at the token service fails"
  like "$(cat "$sr_tmp/err")" "token service http://127.0.0.1:$tport/token refused the credentials of 'bob' \(401\)" "naming the token service and 401"
  sed 's/^/#   /' "$sr_tmp/err"
else
  skip "openssl is not installed"
fi

done_testing
