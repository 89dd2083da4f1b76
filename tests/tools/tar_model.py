#!/usr/bin/python3
"""The tests' model of a tar archive shown as a folder (tests/integration/test_tar.sh), from
Python's tarfile alone, never from tracemount.

  tar_model.py list ARCHIVE [--avail N] [--traces REGEX] [--extract DEST]
      the entries the archive's folder should show, one a line, sorted (LC_ALL=C order):
        PATH<TAB>d                                  a folder (a member or implied by paths)
        PATH<TAB>f<TAB>SIZE<TAB>MTIME<TAB>PERM      a file: size, mtime (s), mode & 0555 (octal)
        PATH<TAB>t                                  a file member whose path matches REGEX (a
                                                    trace: shown as its trace folder)
        PATH<TAB>l<TAB>TARGET                       a symbolic link
      Hard links are files with the bytes of their target's member before them in the archive
      (as extraction gives them; none: left out), with their own mtime and mode. Paths are
      normalised (leading "/" and "./", "." components and empty ones dropped); members with a
      ".." component or one longer than 255 bytes (NAME_MAX) are left out; of two members with the same path, the later one is shown.
      With --avail N, only the first N bytes of the (decompressed) archive are there: a member
      is shown when its headers are whole, with the bytes of its data that are there (a sparse
      member: up to its last byte there). With --extract, also does what extract does.
  tar_model.py extract ARCHIVE DEST [--avail N]
      writes each file entry's bytes (sparse members' holes as zeros, hard links as their
      target's bytes) to DEST/PATH.
  tar_model.py left-out ARCHIVE
      the paths of members left out (a ".." component; a hard link to no file), one a line.
  tar_model.py offsets ARCHIVE
      each member in archive order: NAME<TAB>HEADER<TAB>DATA<TAB>SIZE, the offsets (in the
      decompressed archive) of its first header block (extended headers included) and of its
      data, and its stored size; then "end<TAB>N", the offset past the last member's data.
  tar_model.py avail FILE
      the bytes FILE (gzip, xz, zstd, possibly cut) decompresses to before its end or error.

ARCHIVE may be plain, gzip, xz or zstd (zstd through `zstd -dc`, as Python 3.11 has no zstd).
"""
import io
import os
import re
import subprocess
import sys
import tarfile


def open_bytes(path):
    data = open(path, "rb").read()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        data = subprocess.run(["zstd", "-q", "-dc"], input=data, stdout=subprocess.PIPE,
                              check=False).stdout
    elif data[:2] == b"\x1f\x8b":
        import zlib
        data = zlib.decompressobj(31).decompress(data)
    elif data[:6] == b"\xfd7zXZ\x00":
        import lzma
        data = lzma.LZMADecompressor().decompress(data)
    return data


def normalise(path):
    """The normalised path, "" for the root, None for a path with ".." or a component longer
    than NAME_MAX."""
    parts = []
    for c in path.split("/"):
        if c in ("", "."):
            continue
        if c == ".." or len(c.encode()) > 255:  # ".." or longer than NAME_MAX
            return None
        parts.append(c)
    return "/".join(parts)


def members(data):
    """(tarinfo, normalised path) of each member, in archive order; tarfile reads as far as it
    can (a cut archive: the members before the cut)."""
    tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:", ignore_zeros=False)
    out = []
    try:
        for ti in tf:
            out.append(ti)
    except tarfile.ReadError:
        pass
    return tf, out


def table(data, avail=None):
    """path -> (tarinfo, shown size, the tarinfo whose bytes it has, their shown size) of the
    entries, later members replacing earlier ones; and the left-out paths. A hard link has
    the bytes of the member of its target's path before it in the archive (as extraction,
    GNU tar's and tarfile's, gives it; a link to a link: that one's), else it is left out."""
    tf, infos = members(data)
    entries, left_out = {}, []
    for ti in infos:
        if avail is not None and ti.offset_data > avail:
            break
        path = normalise(ti.name)
        if path is None:
            left_out.append(ti.name)
            continue
        if path == "":
            continue
        if not (ti.isreg() or ti.isdir() or ti.issym() or ti.islnk()):
            continue
        size = ti.size if ti.isreg() else 0
        if avail is not None and ti.isreg() and not ti.issparse():
            size = max(0, min(size, avail - ti.offset_data))
        elif avail is not None and ti.issparse():
            # cut inside its data: the member up to the last stored byte there
            there = avail - ti.offset_data
            for offset, n in ti.sparse:
                if there < n:
                    size = offset + max(there, 0)
                    break
                there -= n
        data_ti, data_size = ti, size
        if ti.islnk():
            target = entries.get(normalise(ti.linkname))
            if target is None or not (target[2].isreg()):
                left_out.append(path)
                entries.pop(path, None)
                continue
            data_ti, data_size = target[2], target[3]
        entries[path] = (ti, size, data_ti, data_size)
    return tf, entries, left_out


def cmd_list(data, avail, traces):
    tf, entries, _ = table(data, avail)
    lines = {}
    for path, (ti, _, _, size) in entries.items():
        parts = path.split("/")
        for i in range(1, len(parts)):
            lines.setdefault("/".join(parts[:i]), "d")
        if ti.isdir():
            lines[path] = "d"
        elif ti.issym():  # a link's size is its target's length, as lstat says of one
            lines[path] = "l\t%s\t%d" % (ti.linkname, len(os.fsencode(ti.linkname)))
        elif traces and re.search(traces, path):
            lines[path] = "t"
        else:
            lines[path] = "f\t%d\t%d\t%o" % (size, ti.mtime, ti.mode & 0o555)
    for path in sorted(lines, key=lambda p: p.encode()):
        print("%s\t%s" % (path, lines[path]))


def cmd_extract(data, dest, avail):
    tf, entries, _ = table(data, avail)
    for path, (ti, _, data_ti, size) in entries.items():
        if not (ti.isreg() or ti.islnk()):
            continue
        body = tf.extractfile(data_ti).read()[:size]
        out = os.path.join(dest, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as w:
            w.write(body)


def main():
    args = sys.argv[1:]
    avail = None
    traces = None
    if "--avail" in args:
        i = args.index("--avail")
        avail = int(args[i + 1])
        del args[i:i + 2]
    extract_to = None
    if "--extract" in args:
        i = args.index("--extract")
        extract_to = args[i + 1]
        del args[i:i + 2]
    if "--traces" in args:
        i = args.index("--traces")
        traces = args[i + 1]
        del args[i:i + 2]
    data = open_bytes(args[1])
    if args[0] == "avail":
        print(len(data))
        return
    if args[0] == "offsets":
        _, infos = members(data)
        end = 0
        for ti in infos:
            stored = ti.size if not ti.issparse() else sum(n for _, n in ti.sparse)
            if ti.isreg() or ti.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.GNUTYPE_SPARSE):
                end = ti.offset_data + (stored + 511) // 512 * 512
            else:
                end = ti.offset_data
            print("%s\t%d\t%d\t%d" % (ti.name, ti.offset, ti.offset_data, stored))
        print("end\t%d" % end)
        return
    if args[0] == "list":
        cmd_list(data, avail, traces)
        if extract_to:
            cmd_extract(data, extract_to, avail)
    elif args[0] == "extract":
        cmd_extract(data, args[2], avail)
    elif args[0] == "left-out":
        for p in table(data, avail)[2]:
            print(p)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
