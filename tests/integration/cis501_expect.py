"""Expected views of a CIS501 x86 micro-op trace, computed from the original file with plain
Python string splitting, never from tracemount's output.

    cis501_expect.py expect TRACE OUTDIR STEM [--max-line N]
        writes OUTDIR/dump.txt, OUTDIR/class/TAG.txt and TAG.trace for the seven tag classes,
        OUTDIR/convert/STEM.din and OUTDIR/meta.json (counts, bad lines, CRLF lines, whether the
        last line lacks its newline, macro opcode of every record) and OUTDIR/counts.txt (the
        counts in the course's reference parser's words, less its first line). TRACE may be
        gzip (.gz).
    cis501_expect.py counts TRACE [--max-line N]
        prints the counts in the course's reference parser's words (Micro-ops: N ...).
    cis501_expect.py compare OUTDIR MOUNTED_FOLDER LABEL
        compares every view of a mounted trace folder with OUTDIR and prints one
        "description<TAB>expected<TAB>actual" line per check.

The rules (the spec, specs/002, and the planned views):
- A line is the bytes up to "\\n"; a final line without one still counts. A line ending in
  "\\r\\n" is read without the "\\r" (and reported). Fields are separated by runs of white space.
- A line is bad (skipped: no record, reported as "line N: ...") when it does not have exactly 14
  fields, when a numeric field is not a number of its type (Uop, Src1, Src2, Dest: 32-bit and
  Immediate: 64-bit signed decimal; PC, Memory address, Fallthrough, Target: 64-bit hexadecimal,
  optional 0x), when a flag field is not one of the spec's characters (Flags R W -, Branch
  T N -, Ld/St L S -), when an opcode name has a byte outside printable ASCII (a NUL byte,
  say), or when it is longer than --max-line bytes (newline excluded).
- dump.txt: per record the 14 fields joined by single spaces, numbers re-printed from their
  values (decimal signed, hex lower-case without 0x), then the macro-op number: a record whose
  Uop is 1 starts macro-op 1, 2, ...; records before the first such record get 0.
- class/TAG.txt: the dump lines of the records of TAG; class/TAG.trace: their original lines,
  byte for byte (a CR LF line keeps its CR, a last line without newline stays without). Tags: loads (L), stores (S), branches (T or N), taken (T), not_taken (N),
  flags_read (R), flags_write (W).
- convert/STEM.din: per record in order, "2 PC" when Uop is 1, then "0 ADDR" for a load or
  "1 ADDR" for a store; hex lower-case without 0x.
- class/FAMILY.txt and FAMILY.trace for each macro-opcode family: the records whose macro
  opcode (field 13) the tests' own table, cis501_families.txt (through cis501_families.py),
  places in FAMILY; class/ lists exactly the families and the tags.
"""

import json
import os
import re
import sys

from cis501_families import FAMILIES, family_of
from trace_bytes import read_bytes

TAGS = ["loads", "stores", "branches", "taken", "not_taken", "flags_read", "flags_write"]
DEC = re.compile(rb"[+-]?[0-9]+\Z")
HEX = re.compile(rb"(0[xX])?[0-9a-fA-F]+\Z")
DEC_FIELDS = {0: 32, 2: 32, 3: 32, 4: 32, 8: 64}  # index -> bits (signed)
HEX_FIELDS = (1, 9, 10, 11)
CHAR_FIELDS = (5, 6, 7)
CHARS = {5: b"RW-", 6: b"TN-", 7: b"LS-"}  # the spec's values, upper case
NAME = re.compile(rb"[\x21-\x7e]+\Z")  # opcode names: printable ASCII


def split_lines(data):
    """[(number, original bytes with terminator, text without terminator, crlf)]."""
    out = []
    pos = 0
    n = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            orig = data[pos:]
            pos = len(data)
        else:
            orig = data[pos:end + 1]
            pos = end + 1
        n += 1
        text = orig[:-1] if orig.endswith(b"\n") else orig
        crlf = text.endswith(b"\r") and orig.endswith(b"\n")
        if crlf:
            text = text[:-1]
        out.append((n, orig, text, crlf))
    return out


def parse_fields(text, max_line):
    """The 14 values of a good line, or (None, reason)."""
    if max_line is not None and len(text) > max_line:
        return None, "long"
    if b"\0" in text:
        return None, "nul"
    f = text.split()
    if len(f) != 14:
        return None, "fields=%d" % len(f)
    nums = b" ".join(f[0:5] + f[8:12])
    if b"_" not in nums and b"x" not in nums and b"X" not in nums:
        # Fast path: int() alone, which refuses everything the field rules refuse once
        # underscores and 0x prefixes are excluded; anything unusual takes the slow path.
        try:
            v = (int(f[0]), int(f[1], 16), int(f[2]), int(f[3]), int(f[4]), f[5], f[6], f[7],
                 int(f[8]), int(f[9], 16), int(f[10], 16), int(f[11], 16))
        except ValueError:
            v = None
        if (v and len(f[5]) == 1 and len(f[6]) == 1 and len(f[7]) == 1
                and f[5] in CHARS[5] and f[6] in CHARS[6] and f[7] in CHARS[7]
                and NAME.match(f[12]) and NAME.match(f[13])
                and all(-(1 << 31) <= v[i] < 1 << 31 for i in (0, 2, 3, 4))
                and -(1 << 63) <= v[8] < 1 << 63 and min(v[1], v[9], v[10], v[11]) >= 0
                and max(v[1], v[9], v[10], v[11]) < 1 << 64):
            return [v[0], v[1], v[2], v[3], v[4], f[5].decode("latin-1"),
                    f[6].decode("latin-1"), f[7].decode("latin-1"), v[8], v[9], v[10], v[11],
                    f[12].decode("latin-1"), f[13].decode("latin-1")], None
    vals = []
    for i, x in enumerate(f):
        if i in DEC_FIELDS:
            if not DEC.match(x):
                return None, "dec"
            v = int(x)
            bits = DEC_FIELDS[i]
            if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
                return None, "range"
            vals.append(v)
        elif i in HEX_FIELDS:
            if not HEX.match(x):
                return None, "hex"
            v = int(x, 16)
            if v >= 1 << 64:
                return None, "range"
            vals.append(v)
        elif i in CHAR_FIELDS:
            if len(x) != 1 or x not in CHARS[i]:
                return None, "char"
            vals.append(x.decode("latin-1"))
        else:
            if not NAME.match(x):
                return None, "name"
            vals.append(x.decode("latin-1"))
    return vals, None


def analyse(path, max_line):
    data = read_bytes(path)
    lines = split_lines(data)
    records = []  # (vals, orig, lineno)
    bad = []
    crlf = []
    for n, orig, text, is_crlf in lines:
        if is_crlf:
            crlf.append(n)
        vals, why = parse_fields(text, max_line)
        if vals is None:
            bad.append((n, why))
        else:
            records.append((vals, orig, n))
    no_newline = bool(data) and not data.endswith(b"\n")
    return records, bad, crlf, (len(lines) if no_newline else None)


def dump_line(vals, macro_no):
    return "%d %x %d %d %d %s %s %s %d %x %x %x %s %s %d\n" % (*vals, macro_no)


def tags_of(vals):
    flags, branch, ldst = vals[5], vals[6], vals[7]
    t = []
    if ldst == "L":
        t.append("loads")
    if ldst == "S":
        t.append("stores")
    if branch in ("T", "N"):
        t.append("branches")
    if branch == "T":
        t.append("taken")
    if branch == "N":
        t.append("not_taken")
    if flags == "R":
        t.append("flags_read")
    if flags == "W":
        t.append("flags_write")
    return t


def counts_of(records):
    c = {"micro_ops": len(records), "macro_ops": 0, "loads": 0, "stores": 0, "taken": 0,
         "not_taken": 0, "flags_read": 0, "flags_write": 0}
    for vals, _, _ in records:
        if vals[0] == 1:
            c["macro_ops"] += 1
        for t in ("loads", "stores", "taken", "not_taken", "flags_read", "flags_write"):
            if t in tags_of(vals):
                c[t] += 1
    return c


def expect(path, outdir, stem, max_line):
    records, bad, crlf, no_newline = analyse(path, max_line)
    os.makedirs(os.path.join(outdir, "class"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "convert"), exist_ok=True)
    dump = []
    cls_txt = {t: [] for t in TAGS + FAMILIES}
    cls_raw = {t: [] for t in TAGS + FAMILIES}
    din = []
    macro = 0
    for vals, orig, _ in records:
        if vals[0] == 1:
            macro += 1
            din.append("2 %x\n" % vals[1])
        if vals[7] == "L":
            din.append("0 %x\n" % vals[9])
        elif vals[7] == "S":
            din.append("1 %x\n" % vals[9])
        line = dump_line(vals, macro)
        dump.append(line)
        for t in tags_of(vals) + [family_of(vals[12])]:
            cls_txt[t].append(line)
            cls_raw[t].append(orig)
    with open(os.path.join(outdir, "dump.txt"), "w") as f:
        f.writelines(dump)
    for t in TAGS + FAMILIES:
        with open(os.path.join(outdir, "class", t + ".txt"), "w") as f:
            f.writelines(cls_txt[t])
        with open(os.path.join(outdir, "class", t + ".trace"), "wb") as f:
            f.write(b"".join(cls_raw[t]))
    with open(os.path.join(outdir, "convert", stem + ".din"), "w") as f:
        f.writelines(din)
    c = counts_of(records)
    meta = {
        "records": len(records),
        "counts": c,
        "classes": {t: len(cls_txt[t]) for t in TAGS + FAMILIES},
        "bad": [n for n, _ in bad],
        "bad_why": [w for _, w in bad],
        "crlf": crlf,
        "no_newline": no_newline,
        "stem": stem,
        "macros": [vals[12] for vals, _, _ in records],
        "origs": [orig.decode("latin-1") for _, orig, _ in records],
    }
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(outdir, "counts.txt"), "w") as f:
        f.write(counts_text(c))


def counts_text(c):
    """The counts as the course's reference parser (simulator.c) prints them, less its first
    line ("Processing trace...")."""
    return ("Processed %d trace records.\nMicro-ops: %d\nMacro-ops: %d\nLoads: %d\nStores: %d\n"
            "Taken: %d\nNot taken: %d\nFlags read: %d\nFlags written: %d\n" % (
                c["micro_ops"], c["micro_ops"], c["macro_ops"], c["loads"], c["stores"],
                c["taken"], c["not_taken"], c["flags_read"], c["flags_write"]))


def print_counts(path, max_line):
    records, _, _, _ = analyse(path, max_line)
    sys.stdout.write(counts_text(counts_of(records)))


def first_difference(want, got):
    """'same', or where two byte strings first differ, by line."""
    if want == got:
        return "same"
    wl = want.split(b"\n")
    gl = got.split(b"\n")
    for i in range(min(len(wl), len(gl))):
        if wl[i] != gl[i]:
            return "line %d differs: expected %r, got %r" % (i + 1, wl[i][:160], gl[i][:160])
    return "lengths differ: %d lines (%d bytes) expected, %d lines (%d bytes) got" % (
        want.count(b"\n"), len(want), got.count(b"\n"), len(got))


def compare(outdir, mnt, label):
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    stem = meta["stem"]
    res = []

    def check(what, want, got):
        res.append((label + ": " + what, str(want), str(got)))

    def readm(rel):
        try:
            with open(os.path.join(mnt, rel), "rb") as f:
                return f.read()
        except OSError as e:
            return ("<%s>" % e.strerror).encode()

    def reade(rel):
        with open(os.path.join(outdir, rel), "rb") as f:
            return f.read()

    dump = readm("dump.txt")
    check("dump.txt", "same", first_difference(reade("dump.txt"), dump))
    for t in TAGS:
        check("class/%s.txt" % t, "same",
              first_difference(reade("class/%s.txt" % t), readm("class/%s.txt" % t)))
        want = reade("class/%s.trace" % t)
        got = readm("class/%s.trace" % t)
        check("class/%s.trace (original lines)" % t, "same", first_difference(want, got))
    din = "convert/%s.din" % stem
    check(din, "same", first_difference(reade(din), readm(din)))

    # Macro-opcode families: the tests' table's, byte for byte; class/ lists nothing else.
    for t in FAMILIES:
        check("class/%s.txt (family)" % t, "same",
              first_difference(reade("class/%s.txt" % t), readm("class/%s.txt" % t)))
        check("class/%s.trace (family, original lines)" % t, "same",
              first_difference(reade("class/%s.trace" % t), readm("class/%s.trace" % t)))
    try:
        names = sorted(os.listdir(os.path.join(mnt, "class")))
    except OSError as e:
        names = ["<%s>" % e.strerror]
    check("class/ lists the families' and tags' .txt and .trace files",
          sorted(n + e for n in TAGS + FAMILIES for e in (".txt", ".trace")), names)

    # stats.json
    try:
        st = json.loads(readm("stats.json"))
    except ValueError as e:
        st = {}
        check("stats.json is JSON", "yes", str(e))
    c = meta["counts"]
    check("stats.json format", "cis501", st.get("format"))
    check("stats.json records", meta["records"], st.get("records"))
    cis = st.get("cis501", {})
    for key in ("micro_ops", "macro_ops", "loads", "stores"):
        v = cis.get(key) if isinstance(cis, dict) else None
        if isinstance(v, dict):
            v = v.get("total")
        check("stats.json cis501.%s" % key, c[key], v)
    classes = st.get("classes", {})
    for t in TAGS + FAMILIES:
        check("stats.json classes.%s" % t, meta["classes"][t], classes.get(t))
    nbad = len(meta["bad"])
    clean = not nbad and not meta["crlf"] and meta["no_newline"] is None
    if clean:
        check("stats.json errors (clean trace)", 0, st.get("errors"))
        check("stats.json truncated (clean trace)", False, st.get("truncated"))
    else:
        e = st.get("errors")
        check("stats.json errors >= bad lines (%d)" % nbad, True,
              isinstance(e, int) and e >= max(nbad, 1))

    # errors.txt
    errs = readm("errors.txt").decode("latin-1")
    if clean:
        check("errors.txt is empty", "", errs[:300])
    else:
        nums = set()
        for line in errs.splitlines():
            # "line N: ..." (doc/views.md), or a line number inside a whole-trace message
            for m in re.finditer(r"\bline (\d+)\b", line):
                nums.add(int(m.group(1)))
        allowed = set(meta["bad"]) | set(meta["crlf"])
        if meta["no_newline"]:
            allowed.add(meta["no_newline"])
        check("errors.txt names every bad line", [],
              sorted(set(meta["bad"]) - nums)[:10])
        check("errors.txt names no good line (CRLF and unterminated lines aside)", [],
              sorted(nums - allowed)[:10])
        if meta["crlf"]:
            first = meta["crlf"][0]
            check("errors.txt reports CRLF line ends (line %d or 'CR')" % first, True,
                  first in nums or bool(re.search(r"\bCR|carriage|\\r", errs, re.I)))
        if meta["no_newline"]:
            check("errors.txt reports the missing final newline", True,
                  meta["no_newline"] in nums or "newline" in errs.lower())
    for w, want, got in res:
        print("%s\t%s\t%s" % (w, want, got))


def main():
    args = sys.argv[1:]
    max_line = 4096
    if "--max-line" in args:
        i = args.index("--max-line")
        max_line = int(args[i + 1])
        del args[i:i + 2]
    if args[0] == "expect":
        expect(args[1], args[2], args[3], max_line)
    elif args[0] == "counts":
        print_counts(args[1], max_line)
    elif args[0] == "compare":
        compare(args[1], args[2], args[3])
    else:
        sys.exit("usage: cis501_expect.py expect|counts|compare ...")


if __name__ == "__main__":
    main()
