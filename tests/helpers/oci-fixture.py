#!/usr/bin/env python3
"""Builds image fixtures for the tests: layer tars with exactly the entries
asked for (hostile ones included), OCI image layouts and docker-save
archives made of them.

  oci-fixture.py tar OUT.tar ENTRY...
      f:NAME=TEXT[:MODE]   regular file (MODE octal, default 644)
      d:NAME[:MODE]        directory
      l:NAME>TARGET        symlink
      h:NAME>TARGET        hardlink
      c:NAME               character device 1,3
      p:NAME               fifo
      z:NAME=SIZE          regular file of SIZE zero bytes (a layer bomb, gzipped)
      n:DIR=COUNT          COUNT empty files DIR/0 ... (an inode bomb)
  oci-fixture.py layout OUT_DIR [--env K=V]... [--cmd ARG]... [--workdir D]
                        [--ref NAME] [--plain|--zstd] LAYER.tar...
  oci-fixture.py docker OUT.tar [--tag NAME] LAYER.tar...
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def cmd_tar(args):
    with tarfile.open(args.out, "w", format=tarfile.PAX_FORMAT) as t:
        for spec in args.entries:
            kind, rest = spec[0], spec[2:]
            if kind == "f":
                name, _, text = rest.partition("=")
                mode = 0o644
                if ":" in text and text.rsplit(":", 1)[1].isdigit():
                    text, m = text.rsplit(":", 1)
                    mode = int(m, 8)
                data = text.encode()
                ti = tarfile.TarInfo(name)
                ti.size, ti.mode = len(data), mode
                t.addfile(ti, io.BytesIO(data))
                continue
            if kind == "z":
                name, _, size = rest.partition("=")
                ti = tarfile.TarInfo(name)
                ti.size = int(size)
                t.addfile(ti, io.BytesIO(bytes(ti.size)))
                continue
            if kind == "n":
                name, _, count = rest.partition("=")
                for i in range(int(count)):
                    t.addfile(tarfile.TarInfo("%s/%d" % (name, i)))
                continue
            ti = tarfile.TarInfo()
            if kind == "d":
                name, _, m = rest.partition(":")
                ti.name, ti.type, ti.mode = name, tarfile.DIRTYPE, int(m or "755", 8)
            elif kind in "lh":
                name, _, target = rest.partition(">")
                ti.name, ti.linkname = name, target
                ti.type = tarfile.SYMTYPE if kind == "l" else tarfile.LNKTYPE
            elif kind == "c":
                ti.name, ti.type, ti.devmajor, ti.devminor = rest, tarfile.CHRTYPE, 1, 3
            elif kind == "p":
                ti.name, ti.type = rest, tarfile.FIFOTYPE
            else:
                sys.exit("unknown entry kind " + kind)
            t.addfile(ti)


def write_blob(out, data):
    digest = sha256(data)
    with open(os.path.join(out, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return digest


def cmd_layout(args):
    os.makedirs(os.path.join(args.out, "blobs", "sha256"), exist_ok=True)
    layers, diff_ids = [], []
    for path in args.layers:
        raw = open(path, "rb").read()
        diff_ids.append("sha256:" + sha256(raw))
        if args.plain:
            data, mt = raw, "application/vnd.oci.image.layer.v1.tar"
        elif args.zstd:
            data = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE,
                                  check=True).stdout
            mt = "application/vnd.oci.image.layer.v1.tar+zstd"
        else:
            data, mt = gzip.compress(raw, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
        layers.append({"mediaType": mt, "digest": "sha256:" + write_blob(args.out, data),
                       "size": len(data)})
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": args.env, "Cmd": args.cmd or None,
                         "WorkingDir": args.workdir or ""},
              "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    cdata = json.dumps(config).encode()
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": "sha256:" + write_blob(args.out, cdata), "size": len(cdata)},
                "layers": layers}
    mdata = json.dumps(manifest).encode()
    desc = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": "sha256:" + write_blob(args.out, mdata), "size": len(mdata),
            "platform": {"architecture": "amd64", "os": "linux"}}
    if args.ref:
        desc["annotations"] = {"org.opencontainers.image.ref.name": args.ref}
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [desc]}, f)
    with open(os.path.join(args.out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)


def cmd_docker(args):
    """The legacy docker-save shape: <id>/layer.tar, <config hex>.json."""
    diff_ids, names, blobs = [], [], []
    for i, path in enumerate(args.layers):
        raw = open(path, "rb").read()
        diff_ids.append("sha256:" + sha256(raw))
        layer_id = sha256(("layer%d" % i).encode() + raw[:64])
        names.append(layer_id + "/layer.tar")
        blobs.append((layer_id + "/layer.tar", raw))
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": ["PATH=/bin", "FROM_DOCKER=1"], "Cmd": ["/bin/sh"]},
              "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    cdata = json.dumps(config).encode()
    manifest = [{"Config": sha256(cdata) + ".json", "RepoTags": [args.tag] if args.tag else [],
                 "Layers": names}]
    with tarfile.open(args.out, "w") as t:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        for name, data in blobs:
            add(name, data)
        add(sha256(cdata) + ".json", cdata)
        add("manifest.json", json.dumps(manifest).encode())


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="action", required=True)
    t = sub.add_parser("tar")
    t.add_argument("out")
    t.add_argument("entries", nargs="*")
    lay = sub.add_parser("layout")
    lay.add_argument("out")
    lay.add_argument("layers", nargs="+")
    lay.add_argument("--env", action="append", default=[])
    lay.add_argument("--cmd", action="append", default=[])
    lay.add_argument("--workdir")
    lay.add_argument("--ref")
    lay.add_argument("--plain", action="store_true")
    lay.add_argument("--zstd", action="store_true")
    d = sub.add_parser("docker")
    d.add_argument("out")
    d.add_argument("layers", nargs="+")
    d.add_argument("--tag")
    args = p.parse_args()
    {"tar": cmd_tar, "layout": cmd_layout, "docker": cmd_docker}[args.action](args)


if __name__ == "__main__":
    main()
