"""The hostile-input matrix: bad variants of a clean trace of every format, and what a mount
must show of each (test_hostile.sh).

  hostile.py make CLEAN SRC SEED   writes SRC/FORMAT/CASE for every format and case, from
                                   CLEAN/clean.EXT (and CLEAN/clean.EXT.truth for TT6/TT6E),
                                   and the compressed cuts from the longer CLEAN/big.EXT
  hostile.py check SRC MNT         prints one "description<TAB>expected<TAB>actual" line per
                                   check, for lib.sh's check_compared

The expectations are independent of tracemount's decoders: where a trace is cut, the records
that end before the cut are known from the format (BYU: 6 bytes each; TT6: gen_tt6's truth
file), and every other case is compared with the clean trace's own views in the same mount,
which the per-format tests check against reference decoders.
"""

import gzip
import json
import lzma
import os
import random
import subprocess
import sys
import zlib

# name, extension, binary
FORMATS = [
    ("byu", "byu", True),
    ("tt6", "tt6", True),
    ("tt6e", "tt6e", True),
    ("cis501", "trace", False),
    ("tarmac", "tarmac", False),
    ("qemu4v", "qemu4v", False),
    ("spixcounts", "bb", True),
]
# Formats of one decoder: Tarmac and QEMU4V differ only in name and the extension of class
# streams; TT6 and TT6E only in dcbX records, so a trace without them is both (doc/formats.md).
FAMILY = {"tt6e": "tt6", "qemu4v": "tarmac"}
LONG_LINE = 100 << 20  # bytes of the one long line of a text trace
LONG_AT = 10  # it goes before this line (from 0)
NUL_LINES = (4, 19)  # lines (from 0) that get NUL bytes
CODECS = [("gzip", "gz"), ("xz", "xz"), ("zstd", "zst")]  # name in errors.txt, suffix


def cuts(codec, data):
    """data as codec writes it, and where to cut it: gzip and xz in one member or block, cut at
    a quarter, half and three quarters; zstd in four frames (as pzstd writes them), cut in the
    middle of each (a cut between frames leaves a whole file); and all but the last byte."""
    if codec != "zstd":
        packed = gzip.compress(data, mtime=0) if codec == "gzip" else lzma.compress(data)
        n = len(packed)
        return packed, [n // 4, n // 2, 3 * n // 4, n - 1]
    part = (len(data) + 3) // 4
    frames = [subprocess.run(["zstd", "-q", "-c"], input=data[k:k + part], check=True,
                             stdout=subprocess.PIPE).stdout for k in range(0, len(data), part)]
    at, middles = 0, []
    for f in frames:
        middles.append(at + len(f) // 2)
        at += len(f)
    return b"".join(frames), middles + [at - 1]


def determined(codec, cut):
    """The decompressed bytes a cut file determines, by the codec's own library or tool: zlib
    and liblzma give every byte whose bits are there, `zstd -dc` every whole block."""
    if codec == "gzip":
        d = zlib.decompressobj(31)
        return d.decompress(cut) + d.flush()
    if codec == "xz":
        return lzma.LZMADecompressor().decompress(cut)
    return subprocess.run(["zstd", "-q", "-d", "-c"], input=cut, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL).stdout


def record_ends(name, clean_dir, data):
    """Offsets at which a binary trace's records end, from the format or the generator."""
    if name == "byu":
        return list(range(6, len(data) + 1, 6))
    if name == "spixcounts":  # a block ends with its counters
        nbb = int.from_bytes(data[12:16], "big")
        counters = 16 + (nbb + 3) // 4 * 4
        return [counters + 8 * (k + 1) for k in range(nbb)]
    ends = []
    with open(os.path.join(clean_dir, "clean.%s.truth" % name)) as f:
        for line in f:
            fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
            if "off" in fields:
                ends.append(int(fields["off"]) + int(fields["len"]))
    return ends


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def make(clean_dir, src, seed):
    rng = random.Random(seed)
    cases = {}
    for i, (name, ext, binary) in enumerate(FORMATS):
        data = open(os.path.join(clean_dir, "clean." + ext), "rb").read()
        d = os.path.join(src, name)
        c = {}

        def add(case, blob, **meta):
            write(os.path.join(d, case), blob)
            c[case] = meta

        add("clean." + ext, data, kind="clean")
        add("empty." + ext, b"", kind="empty")
        add("one-byte." + ext, data[:1], kind="one-byte", binary=binary)
        if binary:
            ends = record_ends(name, clean_dir, data)
            for n in range(1, len(data)):
                whole = sum(1 for e in ends if e <= n)
                start = max([0] + [e for e in ends if e <= n])
                # a spixcounts file cut anywhere lacks what its header promises
                partial = n if name == "spixcounts" else None if n in ends else start
                add("cut-%04d.%s" % (n, ext), data[:n], kind="cut", records=whole,
                    partial_at=partial)
        else:
            lines = data.splitlines(keepends=True)
            n = 0
            for k, line in enumerate(lines[:-1]):
                add("cut-%04d-mid.%s" % (k, ext), data[: n + len(line) // 2], kind="cut-text")
                n += len(line)
                add("cut-%04d.%s" % (k, ext), data[:n], kind="cut-text")
        add("random." + ext, rng.randbytes(64 << 10), kind="random")
        add("garbage." + ext, data + rng.randbytes(4096), kind="garbage")
        if binary:
            mid = len(data) // 2
            add("nul." + ext, data[:mid] + bytes(64) + data[mid:], kind="served")
        else:
            lines = data.splitlines(keepends=True)
            nul = list(lines)
            nul[NUL_LINES[0]] = nul[NUL_LINES[0]][:5] + b"\0" + nul[NUL_LINES[0]][5:]
            nul[NUL_LINES[1]] = b"\0" * 100 + nul[NUL_LINES[1]]
            add("nul." + ext, b"".join(nul), kind="nul")
            add("crlf." + ext, data.replace(b"\n", b"\r\n"), kind="crlf")
            long_line = b"1 " + b"x" * (LONG_LINE - 3) + b"\n"
            add("long-line." + ext, b"".join(lines[:LONG_AT] + [long_line] + lines[LONG_AT:]),
                kind="long-line")
        packed = gzip.compress(data, mtime=0)
        add("gz-cut.%s.gz" % ext, packed[: len(packed) // 2], kind="gz-cut")
        corrupt = bytearray(packed)
        corrupt[len(packed) // 2] ^= 0x55
        add("gz-corrupt.%s.gz" % ext, bytes(corrupt), kind="gz-corrupt")
        big = open(os.path.join(clean_dir, "big." + ext), "rb").read()
        for codec, suffix in CODECS:
            packed, where = cuts(codec, big)
            for k, cut in enumerate(where):
                add("z-cut-%s-%d.%s.%s" % (codec, k, ext, suffix), packed[:cut], kind="z-cut",
                    codec=codec, cut=cut, prefix=len(determined(codec, packed[:cut])))
                write(os.path.join(src, "..", "expected", name,
                                   "z-cut-%s-%d" % (codec, k)), determined(codec, packed[:cut]))
        others = FORMATS[i + 1:] + FORMATS[:i]
        other = [e for n, e, _ in others if FAMILY.get(n, n) != FAMILY.get(name, name)][0]
        add("mislabelled." + other, data, kind="mislabelled", format=name)
        cases[name] = c
    return cases


def read(path):
    with open(path, "rb") as f:
        return f.read()


def served(path):
    """Reads every file of a trace folder whole: the views whose bytes differ in number from
    their size or that fail, and whether stats.json parses."""
    bad = []
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            try:
                if len(read(p)) != os.stat(p).st_size:
                    bad.append(os.path.relpath(p, path) + " (size)")
            except OSError as e:
                bad.append("%s (%s)" % (os.path.relpath(p, path), e.strerror))
    try:
        json.loads(read(os.path.join(path, "stats.json")))
    except (OSError, ValueError) as e:
        bad.append("stats.json (%s)" % e)
    return " ".join(sorted(bad)) or "all"


FOOTER = 12  # bytes of xz's stream footer: a cut inside it is said at its start


def truncation(errors, codec, cut):
    """Where errors.txt says a cut file's compressed data ends (within FOOTER bytes before the
    cut, the start of what the cut left unfinished) and its decompressed data."""
    for line in errors.splitlines():
        if line.startswith(codec + ": truncated") and "at compressed byte " in line:
            at = int(line.split("at compressed byte ")[1].split(";")[0])
            ends = line.split("the decompressed trace ends at byte ")[-1]
            return "in the last %d bytes; at byte %s" % (FOOTER, ends) \
                if cut - FOOTER <= at <= cut else line
    return errors or "(empty)"


def lines_prefix(got, whole, drop_last):
    """Whether got's lines (all but the last one when drop_last) begin whole's lines."""
    g = got.splitlines(keepends=True)
    if drop_last and g:
        g = g[:-1]
    return whole.splitlines(keepends=True)[: len(g)] == g


def check(src, mnt):
    meta = json.load(open(os.path.join(src, "..", "hostile.json")))
    out = []

    def say(what, want, got):  # no empty field: lib.sh's read joins runs of tabs
        out.append("%s\t%s\t%s" % (what, want if want != "" else "(none)",
                                     got if got != "" else "(none)"))

    for name, cases in meta.items():
        clean = [c for c, m in cases.items() if m["kind"] == "clean"][0]
        clean_dump = read(os.path.join(mnt, name, clean, "dump.txt"))
        cut_bad, cut_n = [], 0
        for case, m in sorted(cases.items()):
            kind = m["kind"]
            path = os.path.join(mnt, name, case)
            label = "%s/%s" % (name, case)
            if not os.path.isdir(path):  # not recognised: then it is the file itself
                say(label + ": a plain file holds the source's bytes", True,
                    read(path) == read(os.path.join(src, name, case)))
                if kind in ("clean", "cut", "garbage", "nul", "crlf", "long-line", "gz-cut") or \
                        (kind == "z-cut" and m["prefix"]):
                    say(label + ": recognised as a trace", True, False)
                continue
            try:
                dump = read(os.path.join(path, "dump.txt"))
                errors = read(os.path.join(path, "errors.txt")).decode("latin-1")
            except OSError as e:
                say(label + ": dump.txt and errors.txt read", "read", e.strerror)
                continue
            if kind in ("cut", "cut-text"):  # hundreds: only dump, errors and stats
                cut_n += 1
                ok = json.loads(read(os.path.join(path, "stats.json"))) is not None
                if kind == "cut":
                    ok &= dump.splitlines(keepends=True) == \
                        clean_dump.splitlines(keepends=True)[: m["records"]]
                    if m["partial_at"] is None:
                        ok &= errors == ""
                    else:
                        ok &= errors.startswith("offset %d:" % m["partial_at"])
                else:
                    ok &= lines_prefix(dump, clean_dump, True)
                if not ok:
                    cut_bad.append(case)
                continue
            say(label + ": every view reads whole at its size", "all", served(path))
            if kind == "clean":
                say(label + ": no errors", "", errors)
            elif kind == "empty":
                say(label + ": dump.txt empty", 0, len(dump))
            elif kind == "one-byte":
                if m["binary"]:  # a text line, even one byte, may be kept as unknown
                    say(label + ": dump.txt empty", 0, len(dump))
                say(label + ": errors.txt says what is wrong", True, errors != "")
            elif kind == "garbage":
                say(label + ": the clean trace's dump comes first", True,
                    dump.startswith(clean_dump))
                say(label + ": errors.txt reports the garbage", True, errors != "")
            elif kind == "nul":
                for k in NUL_LINES:
                    say(label + ": errors.txt names line %d" % (k + 1), True,
                        "line %d:" % (k + 1) in errors)
            elif kind == "crlf":
                say(label + ": the same dump as with LF", True, dump == clean_dump)
            elif kind == "long-line":
                say(label + ": the same dump as without the long line", True,
                    dump == clean_dump)
                say(label + ": errors.txt names the long line", True,
                    "line %d: longer than" % (LONG_AT + 1) in errors)
            elif kind == "gz-cut":
                say(label + ": served dump is a prefix", True,
                    lines_prefix(dump, clean_dump, True) and len(dump) < len(clean_dump))
                say(label + ": errors.txt says where the gzip data ends", True,
                    "gzip: truncated" in errors)
            elif kind == "z-cut":
                want = read(os.path.join(src, "..", "expected", name,
                                         case.split(".")[0]))
                try:
                    raw = read(os.path.join(path, "raw"))
                    got = len(want) if raw == want else "%d other bytes" % len(raw)
                except OSError as e:
                    got = e.strerror
                say(label + ": raw is every byte the cut data determine (%s's own)" % m["codec"],
                    len(want), got)
                say(label + ": errors.txt says where the data ends, compressed and decompressed",
                    "in the last %d bytes; at byte %d" % (FOOTER, len(want)),
                    truncation(errors, m["codec"], m["cut"]))
            elif kind == "gz-corrupt":
                say(label + ": errors.txt reports the gzip error", True, "gzip:" in errors)
            elif kind == "mislabelled":
                fmt = json.loads(read(os.path.join(path, "stats.json"))).get("format")
                say(label + ": read as %s, or flagged" % m["format"], True,
                    FAMILY.get(fmt, fmt) == FAMILY.get(m["format"], m["format"]) or errors != "")
        say("%s: every cut trace serves the records before the cut (%d cuts)" % (name, cut_n),
            "", " ".join(cut_bad))
    print("\n".join(out))


def main():
    if sys.argv[1] == "make":
        cases = make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        with open(os.path.join(sys.argv[3], "..", "hostile.json"), "w") as f:
            json.dump(cases, f)
        print(sum(len(c) for c in cases.values()))
    else:
        check(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
