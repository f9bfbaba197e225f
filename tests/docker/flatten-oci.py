#!/usr/bin/env python3
"""flatten-oci.py DIR: the root filesystem of the OCI image layout DIR (its
first manifest), its layers applied in order with their whiteouts
(.wh.NAME, .wh..wh..opq), as one tar on stdout: what `docker import`
takes, for the images rootfs/build-all.sh builds in shared layers."""
import json
import sys
import tarfile


def clean(name):
    return "/".join(p for p in name.split("/") if p not in ("", "."))


def under(path, top):
    return top == "" or path == top or path.startswith(top + "/")


def main(d):
    blob = lambda dg: "%s/blobs/%s" % (d, dg.replace(":", "/"))
    index = json.load(open(d + "/index.json"))
    manifest = json.load(open(blob(index["manifests"][0]["digest"])))
    layers = [blob(l["digest"]) for l in manifest["layers"]]
    # path -> index of the layer whose entry is the final one
    final = {}
    for i, layer in enumerate(layers):
        with tarfile.open(layer) as t:
            members = t.getmembers()
        for m in members:
            path = clean(m.name)
            head, _, base = path.rpartition("/")
            if base == ".wh..wh..opq":
                for p in [p for p in final if under(p, head) and p != head]:
                    del final[p]
            elif base.startswith(".wh."):
                gone = (head + "/" if head else "") + base[4:]
                for p in [p for p in final if under(p, gone)]:
                    del final[p]
        for m in members:
            path = clean(m.name)
            if path and not path.rpartition("/")[2].startswith(".wh."):
                # What replaces a directory with another type replaces its tree.
                if not m.isdir():
                    for p in [p for p in final if p.startswith(path + "/")]:
                        del final[p]
                final[path] = i
    with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT) as out:
        for i, layer in enumerate(layers):
            with tarfile.open(layer) as t:
                for m in t:
                    path = clean(m.name)
                    if final.get(path) == i:
                        out.addfile(m, t.extractfile(m) if m.isreg() else None)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
