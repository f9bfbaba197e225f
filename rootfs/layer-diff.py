#!/usr/bin/env python3
"""layer-diff.py: the OCI layer between two trees, for rootfs/build-image.sh.

  layer-diff.py tree FULL.tar TREE
      writes TREE, what FULL.tar holds: one line per path with its type,
      mode, owner and content (sha256, link target or device).

  layer-diff.py diff LOWER_TREE FULL.tar OUT.tar TREE
      writes OUT.tar, the layer that turns the tree LOWER_TREE describes
      into FULL.tar: every entry that is new or differs (in type, mode,
      owner or content; not in mtime, which a rebuild changes alone), the
      directories above them, and a whiteout (.wh.NAME) for every path
      FULL.tar no longer has.  Also writes FULL.tar's TREE, for the next
      layer up.

The output is reproducible: the entries keep their order, times and
owners, and whiteouts get $SOURCE_DATE_EPOCH.
"""
import hashlib
import os
import sys
import tarfile


def clean(name):
    return "/".join(p for p in name.split("/") if p not in ("", "."))


def describe(tar):
    """path -> signature of every member, and the members in order."""
    sigs, members = {}, []
    for m in tar:
        path = clean(m.name)
        if path == "":
            continue
        members.append((path, m))
        owner = "%o %d %d" % (m.mode & 0o7777, m.uid, m.gid)
        if m.islnk():
            target = sigs.get(clean(m.linkname))
            sigs[path] = target if target else "h " + clean(m.linkname)
        elif m.isreg():
            h = hashlib.sha256()
            f = tar.extractfile(m)
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
            sigs[path] = "f %s %d %s" % (owner, m.size, h.hexdigest())
        elif m.issym():
            sigs[path] = "l %s %s" % (owner, m.linkname)
        elif m.isdir():
            sigs[path] = "d " + owner
        else:
            sigs[path] = "c%s %s %d %d" % (m.type.decode(), owner, m.devmajor, m.devminor)
    return sigs, members


def write_tree(sigs, path):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
        for p in sorted(sigs):
            out.write("%s\t%s\n" % (p.replace("\\", "\\\\").replace("\n", "\\n")
                                    .replace("\t", "\\t"), sigs[p]))


def read_tree(path):
    sigs = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            p, sig = line.rstrip("\n").split("\t", 1)
            p = p.replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\")
            sigs[p] = sig
    return sigs


def parents(path):
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        yield path


def diff(lower_tree, full_tar, out_tar, tree):
    lower = read_tree(lower_tree)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    with tarfile.open(full_tar) as tar:
        sigs, members = describe(tar)
        keep = set()
        for path, m in members:
            if lower.get(path) != sigs[path]:
                keep.add(path)
                keep.update(parents(path))
                # A hard link keeps its target in the layer.
                if m.islnk():
                    keep.add(clean(m.linkname))
                    keep.update(parents(clean(m.linkname)))
        with tarfile.open(out_tar, "w", format=tarfile.PAX_FORMAT) as out:
            for path, m in members:
                if path in keep:
                    out.addfile(m, tar.extractfile(m) if m.isreg() else None)
            gone = sorted(p for p in lower if p not in sigs)
            for path in gone:
                if any(p in lower and p not in sigs for p in parents(path)):
                    continue  # its directory goes as a whole
                head, _, base = path.rpartition("/")
                wh = tarfile.TarInfo((head + "/" if head else "") + ".wh." + base)
                wh.mtime = epoch
                wh.mode = 0o644
                out.addfile(wh)
    write_tree(sigs, tree)
    print("layer-diff.py: %d entries of %d differ, %d whiteouts"
          % (len(keep), len(members), len([p for p in lower if p not in sigs])),
          file=sys.stderr)


def main(argv):
    if len(argv) == 4 and argv[1] == "tree":
        with tarfile.open(argv[2]) as tar:
            write_tree(describe(tar)[0], argv[3])
    elif len(argv) == 6 and argv[1] == "diff":
        diff(argv[2], argv[3], argv[4], argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
