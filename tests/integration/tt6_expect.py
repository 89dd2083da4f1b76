"""The tests' one TT6 and TT6E model: the expected views of a trace, from its own reading of
the trace's bytes by doc/formats.md and from doc/views.md; never from tracemount's output.

Shared by the tt6 tests (the unit tests run it too), as a module or from the command line:

  tt6_expect.py compare TRACE DIR SOURCE [options]
      compares every view of the trace folder DIR (a mount's, a folder of `tracemount cat`
      outputs, or one the unit tests wrote) with the expectation, printing one
      "description<TAB>expected<TAB>actual" line per check. SOURCE is stats.json's "source".
      Options:
        --format tt6|tt6e      (default: from TRACE's extension)
        --errors FILE          expected errors.txt offsets: one line per problem, the offsets
                               it may be reported at, comma-separated (default: the problems
                               the reading finds)
        --truncated 0|1|any    (default: whether the reading finds the trace cut)
        --skip VIEW            do not compare VIEW (repeatable; "convert" skips both)
        --partial-stats        only the common stats.json keys and the counts of the tt6 object
        --truth FILE           gen_tt6's truth file, for the one thing the reading cannot
                               know: the mnemonic of each instruction (top_mnemonics)
  tt6_expect.py expect TRACE OUT STEM
      the reading of TRACE (format from its extension), as decode writes it, into OUT/records
      and OUT/errors (the unit tests' model_expect)
  tt6_expect.py decode TRACE FORMAT RECORDS_OUT ERRORS_OUT
      the reading of TRACE, written as records (one tab-separated line per record: KIND
      NUMBER PC WORD off=BYTE len=BYTES, then its fields) and an --errors file; prints
      "truncated 0|1"
  tt6_expect.py selfcheck TRUTH TRACE [FORMAT]
      the reading of TRACE finds the records gen_tt6 says it wrote (kind, number, PC, word,
      where) and no problem but its unknown escape codes: the model agrees with the
      generator before tracemount is judged
  tt6_expect.py din TRACE FORMAT OUT
      the expected convert/NAME.din of TRACE
  tt6_expect.py convert TRACE FORMAT OUT
      the expected TT6 <-> TT6E conversion of TRACE
  tt6_expect.py syncplot TRACE DIR
      compares DIR/plots/sync.svg with the model's (series_expect.py), as compare does
  tt6_expect.py columns DUMP
      the columns of each line of a dump.txt, tab-separated (MALFORMED for a line whose
      columns are not where doc/views.md puts them), so that tests name the values they expect
      without the layout

Dump lines are compared except for the TEXT column (Capstone's disassembly), whose 36
characters are only checked to be left-aligned text; escape and initial_pc texts, which
doc/views.md fixes, are compared exactly."""

import json
import os
import struct
import sys

import series_expect

CLASSES = ["compute", "flow", "memory", "memext", "escape", "sync"]
ALL_CLASSES = CLASSES + ["initial_pc"]
INSTRUCTIONS = ("compute", "flow", "memory", "memext")
ESCAPE_NAMES = {0x00: "segment_register", 0x01: "data_address", 0x02: "condition_register",
                0x03: "branch_target_real", 0x04: "data_address_real",
                0x05: "next_instruction_real", 0x11: "dcbx_address", 0x12: "dcbx_no_address", 0x20: "sync_signal",
                0x21: "sync_broadcast", 0x30: "sync_wait", 0x31: "sync_try_wait"}
SYNC_KINDS = {0x20: "signal", 0x21: "broadcast", 0x30: "wait", 0x31: "try_wait"}
SYNC_ORDER = ["signal", "broadcast", "wait", "try_wait"]
# Escape codes that are not a problem (0x11: tracemount's own dcbx address record).
KNOWN_CODES = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x11}
TT6_KEYS = ["instructions", "initial_pc", "top_mnemonics", "loads", "stores", "cache_ops",
            "din", "branches", "distinct_pcs", "code_lines_64b", "code_pages_4k", "data_lines_64b",
            "data_pages_4k", "cache_ops_without_address", "escape_codes", "sync_events",
            "twi_pairs"]
NO_ADDRESS = 0x00120000  # escape 0x12, no word: the dcbx after it has no address; no record
NO_ADDRESS_NOTE = ("%d cache-block instructions (dcbz, dcbt...) have no address (an escape "
                   "0x12 before each): they are not in convert/NAME.din")


def no_address(r):
    """A dcbx whose address the trace does not give."""
    return bool(r.get("noea"))


def marked(r):
    """Whether the trace holds an escape 0x12 before the record (TT6: else no escape at all)."""
    return bool(r.get("marked"))


def lends_address(r):
    """Whether a TT6 dcbx right after record r takes r's word as its address: r is an escape
    0x01 with a word, or tracemount's escape 0x11 of exactly one word."""
    return r.kind == "escape" and (
        (r.get("code") == 0x01 and len(r.get("words")) >= 1) or
        (r.get("code") == 0x11 and len(r.get("words")) == 1))


TOP_KEYS = ["format", "source", "bytes", "records", "classes", "errors", "notes", "truncated"]
# Base mnemonics whose name doc/views.md leaves no doubt about (named from primary and
# extended opcode): top_mnemonics must count these exactly as the model does when it lists them.
CONFIDENT = {"bc", "b", "bclr", "bcctr", "sc", "rfi", "twi", "lwz", "lwzu", "stw", "stwu", "lbz",
             "lbzu", "lhz", "lha", "lhau", "sth", "stb", "lfs", "lfd", "lfdu", "stfs", "stfd",
             "stfdu", "lmw", "stmw", "rlwinm", "addi", "addis", "lswi", "stswi", "lswx",
             "stswx", "dcbz", "dcba", "dcbt", "dcbtst", "dcbf", "dcbst", "dcbi", "icbi", "lvx",
             "stvx", "lvxl", "stvxl", "lwarx", "stwcx.", "isync", "fadd", "lbzx", "lhzx",
             "lhbrx", "lwzx", "lwbrx", "lfdx", "lvebx", "lvehx", "lvewx", "eciwx", "ecowx",
             "stbx", "sthx", "sthbrx", "stwx", "stfiwx", "stfdx", "stvebx", "stvewx"}


class Rec:
    __slots__ = ("kind", "num", "pc", "word", "off", "len", "f")

    def __init__(self, kind, num, pc, word, off, length, f):
        self.kind, self.num, self.pc, self.word = kind, num, pc, word
        self.off, self.len, self.f = off, length, f

    def get(self, k, default=None):
        return self.f.get(k, default)


HEX_FIELDS = {"next", "ea", "xer", "ctl", "addr", "code"}
INT_FIELDS = {"off", "len", "size", "cond", "pair", "twi", "cache", "split", "count", "afterpos"}


def parse_fields(parts):
    f = {}
    for p in parts:
        k, _, v = p.partition("=")
        if k in HEX_FIELDS:
            f[k] = int(v, 16)
        elif k in INT_FIELDS:
            f[k] = None if v == "?" else int(v)
        elif k == "words":
            f[k] = [int(x, 16) for x in v.split(",")] if v else []
        else:
            f[k] = v
    return f


def load_truth(path):
    recs = []
    with open(path) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            f = parse_fields(parts[4:])
            recs.append(Rec(parts[0], int(parts[1]), int(parts[2], 16), int(parts[3], 16),
                            f.pop("off"), f.pop("len"), f))
    return recs


def write_truth(recs, path):
    with open(path, "w") as fh:
        for r in recs:
            fields = ["off=%d" % r.off, "len=%d" % r.len]
            for k, v in r.f.items():
                if k == "words":
                    fields.append("words=" + ",".join("%08x" % w for w in v))
                elif k in HEX_FIELDS:
                    fields.append("%s=%0*x" % (k, 2 if k == "code" else 8, v))
                elif v is None:
                    fields.append("%s=?" % k)
                else:
                    fields.append("%s=%s" % (k, v))
            fh.write("%s\t%d\t%08x\t%08x\t%s\n" % (r.kind, r.num, r.pc, r.word, "\t".join(fields)))


def escape_name(code):
    if code in ESCAPE_NAMES:
        return ESCAPE_NAMES[code]
    if 0x20 <= code <= 0x3f:
        return "sync_reserved"
    return "unknown"


# ---- dump.txt, class/*.txt, sync.txt, din ----

def dump_prefix(r):
    return "%12d %08x %08x " % (r.num, r.pc, r.word)


def dump_text(r):
    """The TEXT column when doc/views.md fixes it, else None (Capstone's)."""
    if r.kind == "initial_pc":
        return "-"
    if r.kind in ("escape", "sync"):
        return "escape " + escape_name(r.get("code"))
    return None


def size_field(size):
    return "???" if size is None else "%3d" % size


def dump_suffix(r):
    k = r.kind
    if k == "flow":
        return "flow next=%08x" % r.get("next")
    if k == "memory":
        ea = "????????" if no_address(r) else "%08x" % r.get("ea")
        return "memory ea=%s size=%s" % (ea, size_field(r.get("size")))
    if k == "memext":
        if "ctl" in r.f:
            return "memext ea=%08x size=  0 ctl=%08x" % (r.get("ea"), r.get("ctl"))
        return "memext ea=%08x size=%s xer=%08x" % (r.get("ea"), size_field(r.get("size")),
                                                  r.get("xer"))
    if k == "sync":
        return "sync addr=%08x count=%08x" % (r.get("addr"), r.get("count"))
    if k == "escape":
        words = r.get("words")
        return "escape code=0x%02x words=%d%s" % (r.get("code"), len(words),
                                                  "".join(" %08x" % w for w in words))
    return k


def expected_masked(r):
    return dump_prefix(r) + "|" + dump_suffix(r)


def number_overflow(line):
    """How far a NUMBER wider than its 12 columns (a position record can set any 64-bit
    number) pushes the other columns to the right."""
    n = len(line) - len(line.lstrip(" "))
    digits = len(line) - n - len(line[n:].lstrip("0123456789"))
    return max(0, n + digits - 12)


def mask(line):
    """A dump line without its TEXT column, or "MALFORMED ..." when the columns are not where
    doc/views.md puts them: NUMBER(12) PC(8) WORD(8) TEXT(36, left-aligned) CLASS..."""
    k = number_overflow(line)
    if len(line) < 69 + k or line[30 + k] != " " or line[67 + k] != " " or line[31 + k] == " " \
            or line[68 + k] == " ":
        return "MALFORMED " + line
    return line[:31 + k] + "|" + line[68 + k:]


def text_of(line):
    k = number_overflow(line)
    return line[31 + k:67 + k].rstrip(" ")


def columns(line):
    """A dump line's columns, NUMBER PC WORD TEXT and the rest (CLASS and its fields), without
    the padding doc/views.md lays them out with; None when they are not where it puts them."""
    if mask(line).startswith("MALFORMED"):
        return None
    k = number_overflow(line)
    return [line[:12 + k].lstrip(" "), line[13 + k:21 + k], line[22 + k:30 + k], text_of(line),
            line[68 + k:]]


def masked_equal(want, got):
    """want may hold size=??? for a size the reference reading does not know."""
    if "size=???" in want and got.startswith(want[:want.index("size=???")]):
        i = want.index("size=???")
        got = got[:i + 5] + "???" + got[i + 8:]
    return want == got


def sync_lines(recs):
    return ["%12d %08x %-9s %08x %d" % (r.num, r.pc, r.get("kind"), r.get("addr"), r.get("count"))
            for r in recs if r.kind == "sync"]


def din_counts(recs):
    """stats.json's din object: the din's lines by label."""
    labels = [l[0] for l in din_lines(recs)]
    return {"fetches": labels.count("2"), "reads": labels.count("0"),
            "writes": labels.count("1")}


def din_lines(recs):
    out = []
    for r in recs:
        if r.kind not in INSTRUCTIONS:
            continue
        out.append("2 %08x" % r.pc)
        if r.kind not in ("memory", "memext") or r.get("din", "-") == "-" or no_address(r):
            continue
        label = "0" if r.get("din") == "r" else "1"
        ea, size = r.get("ea"), r.get("size")
        if r.get("split"):
            for k in range((size + 3) // 4):
                out.append("%s %08x" % (label, (ea + 4 * k) & 0xffffffff))
        else:
            out.append("%s %08x" % (label, ea))
    return out


# ---- bytes: the records re-encoded, class streams, conversions ----

def record_words(r):
    k = r.kind
    if k in ("initial_pc", "compute"):
        return [r.word]
    if k == "flow":
        return [r.word, r.get("next")]
    if k == "memory":
        return [r.word, r.get("ea")]
    if k == "memext":
        return [r.word, r.get("ea"), r.get("ctl", r.get("xer"))]
    if k == "sync":
        return [r.word, r.get("addr"), r.get("count")]
    return [r.word] + r.get("words")


def pack(words):
    return struct.pack(">%dI" % len(words), *[w & 0xffffffff for w in words])


def position_record(r):
    return pack([0x00100003, r.pc, r.num >> 32, r.num & 0xffffffff])


def class_stream(recs, raw, cls, fmt=None):
    """INITIAL_PC, then the class's records; a position record before each record whose
    predecessor in the trace is not in the stream (the INITIAL_PC record is), or is a position
    record (afterpos=1: only in a trace that holds position records)."""
    if not recs:
        return b""
    out = [raw[recs[0].off:recs[0].off + recs[0].len]]
    prev_in = True
    for r in recs[1:]:
        if r.kind == cls:
            if not prev_in or r.get("afterpos"):
                out.append(position_record(r))
            if fmt == "tt6e" and no_address(r):  # TT6's streams hold no dcbx address
                out.append(pack([NO_ADDRESS]))
            out.append(raw[r.off:r.off + r.len])
            prev_in = True
        else:
            prev_in = False
    return b"".join(out)


SYNTHETIC_PAIR = [0x48000702, 0x00000700, 0x4c000064]


def convert(recs, fmt):
    """TT6 -> TT6E (fmt "tt6") or TT6E -> TT6 (fmt "tt6e"), by doc/formats.md, from the
    model's fields: a TT6 dcbx's address (ea=, what the TT6E form carries) and TT6E's
    synthetic pair records (pair=1)."""
    out = []
    for i, r in enumerate(recs):
        if fmt == "tt6":
            if r.kind == "escape" and r.get("code") == 0x11:
                continue
            if r.kind == "compute" and r.get("cache") and no_address(r):
                out += [NO_ADDRESS, r.word, 0]
            elif r.kind == "compute" and r.get("cache"):
                out += [r.word, r.get("ea")]
            elif r.kind == "compute" and r.get("twi"):
                out += [r.word] + SYNTHETIC_PAIR + [(r.pc + 4) & 0xffffffff]
            else:
                out += record_words(r)
        else:
            if r.get("pair"):
                continue
            if r.kind == "memory" and r.get("cache") and no_address(r):
                # TT6 reads a dcbx as having no address unless the record before lends one:
                # only there does the escape 0x12 say something
                out += ([NO_ADDRESS] if i and lends_address(recs[i - 1]) else []) + [r.word]
            elif r.kind == "memory" and r.get("cache"):
                ea = r.get("ea")
                prev = recs[i - 1]
                after01 = prev.kind == "escape" and prev.get("code") == 0x01 and \
                    prev.get("words")[:1] == [ea]
                if not after01:  # an address 0 too: TT6 without an escape has none
                    out += [0x00110001, ea]
                out.append(r.word)
            else:
                out += record_words(r)
    return pack(out)


# ---- stats.json ----

def no_address_note(recs, fmt):
    """TT6E's errors.txt line counting its dcbx without an address, as a list of 0 or 1."""
    unknown = sum(1 for r in recs if r.kind in INSTRUCTIONS and no_address(r))
    return [{NO_ADDRESS_NOTE % unknown}] if fmt == "tt6e" and unknown else []


def model_mnemonics(recs):
    counts = {}
    for r in recs:
        if r.kind in INSTRUCTIONS:
            mn = r.get("mn")
            counts[mn] = counts.get(mn, 0) + 1
    return counts


def expected_stats(recs, size, source, fmt, nerrors, truncated):
    classes = {c: 0 for c in ALL_CLASSES}
    for r in recs:
        classes[r.kind] += 1
    loads, stores = {}, {}
    cache_ops = twi_pairs = 0
    br = {"conditional_taken": 0, "conditional_not_taken": 0, "unconditional": 0}
    no_addr = 0
    pcs, dlines, dpages, esc = set(), set(), set(), {}
    sync = {k: 0 for k in SYNC_ORDER}
    for r in recs:
        k = r.kind
        if k in INSTRUCTIONS:
            pcs.add(r.pc)
        if k in INSTRUCTIONS and no_address(r):
            no_addr += 1
        if k in ("memory", "memext") and not no_address(r):
            # doc/views.md: every line from EA to EA + size - 1 (EA's line for size 0)
            ea, moved = r.get("ea"), r.get("size") or 0
            for line in range(ea >> 6, ((ea + max(moved, 1) - 1) >> 6) + 1):
                dlines.add(line)
                dpages.add(line >> 6)
        if k in ("memory", "memext"):
            d = r.get("dir")
            if d in ("load", "store"):
                h = loads if d == "load" else stores
                key = str(r.get("size"))
                h[key] = h.get(key, 0) + 1
            if r.get("cache"):
                cache_ops += 1
        if k == "flow":
            if r.get("cond"):
                taken = r.get("next") != (r.pc + 4) & 0xffffffff
                br["conditional_taken" if taken else "conditional_not_taken"] += 1
            else:
                br["unconditional"] += 1
            if r.get("pair") and r.word >> 26 == 18:
                twi_pairs += 1
        if k in ("escape", "sync"):
            key = "0x%02x" % r.get("code")
            esc[key] = esc.get(key, 0) + 1
        if k == "sync":
            sync[r.get("kind")] += 1
    t = {
        "instructions": sum(classes[c] for c in INSTRUCTIONS),
        "initial_pc": "0x%08x" % recs[0].pc if recs else None,
        "loads": {"total": sum(loads.values()), "by_size": loads},
        "stores": {"total": sum(stores.values()), "by_size": stores},
        "cache_ops": cache_ops,
        "din": din_counts(recs),
        "branches": br,
        "distinct_pcs": len(pcs),
        "code_lines_64b": len({p >> 6 for p in pcs}),
        "code_pages_4k": len({p >> 12 for p in pcs}),
        "data_lines_64b": len(dlines),
        "data_pages_4k": len(dpages),
        "cache_ops_without_address": no_addr,
        "escape_codes": esc,
        "sync_events": sync,
        "twi_pairs": twi_pairs,
    }
    top = [("format", fmt), ("source", os.path.basename(source)), ("bytes", size), ("records", len(recs)),
           ("classes", classes), ("errors", nerrors), ("notes", 0), ("truncated", truncated)]
    return top, t


# ---- the reference reading (inputs without a model) ----

MEM_MAJOR = {32: (4, "load"), 33: (4, "load"), 34: (1, "load"), 35: (1, "load"),
             36: (4, "store"), 37: (4, "store"), 38: (1, "store"), 39: (1, "store"),
             40: (2, "load"), 41: (2, "load"), 42: (2, "load"), 43: (2, "load"),
             44: (2, "store"), 45: (2, "store"), 46: ("mult", "load"), 47: ("mult", "store"),
             48: (4, "load"), 49: (4, "load"), 50: (8, "load"), 51: (8, "load"),
             52: (4, "store"), 53: (4, "store"), 54: (8, "store"), 55: (8, "store"),
             58: ("ds58", "load"), 62: ("ds62", "store")}
MEM_31 = {597: ("nb", "load"), 119: (1, "load"), 87: (1, "load"), 631: (8, "load"),
          599: (8, "load"), 567: (4, "load"), 535: (4, "load"), 375: (2, "load"),
          343: (2, "load"), 790: (2, "load"), 311: (2, "load"), 279: (2, "load"),
          20: (4, "load"), 534: (4, "load"), 55: (4, "load"), 23: (4, "load"), 7: (1, "load"),
          39: (2, "load"), 71: (4, "load"), 103: (16, "load"), 359: (16, "load"),
          310: (4, "load"), 438: (4, "store"), 247: (1, "store"), 215: (1, "store"),
          759: (8, "store"), 727: (8, "store"), 983: (4, "store"), 695: (4, "store"),
          663: (4, "store"), 918: (2, "store"), 439: (2, "store"), 407: (2, "store"),
          725: ("nb", "store"), 662: (4, "store"), 150: (4, "store"), 183: (4, "store"),
          151: (4, "store"), 135: (1, "store"), 167: (2, "store"), 199: (4, "store"),
          231: (16, "store"), 487: (16, "store"), 21: (8, "load"), 53: (8, "load"),
          84: (8, "load"), 341: (4, "load"), 373: (4, "load"), 149: (8, "store"),
          181: (8, "store"), 214: (8, "store")}
CACHE_31 = {758: "w", 86: "-", 470: "-", 54: "-", 278: "r", 246: "r", 1014: "w", 982: "-"}
MEMEXT_31 = {533: "load", 661: "store", 342: "touch", 374: "touch"}


def mem_size(word, spec):
    if spec == "mult":
        return 4 * (32 - ((word >> 21) & 31))
    if spec == "nb":
        nb = (word >> 11) & 31
        return nb or 32
    if spec == "ds58":
        return {0: 8, 1: 8, 2: 4}.get(word & 3)
    if spec == "ds62":
        return {0: 8, 1: 8}.get(word & 3)
    return spec


def is_flow(major, minor):
    return major in (16, 17, 18) or (major == 19 and minor in (16, 528, 50, 18))


def is_conditional(word):
    major, minor = word >> 26, (word >> 1) & 0x3ff
    if major == 16 or (major == 19 and minor in (16, 528)):
        return ((word >> 21) & 0x14) != 0x14
    return False


def reference_decode(data, fmt):
    """Records, expected problems (sets of acceptable offsets) and the truncated flag of a
    trace, read by doc/formats.md."""
    recs, errs = [], []
    n = len(data)
    if n < 4:
        return recs, ([{0}] if n else []), n > 0
    u32 = lambda o: struct.unpack_from(">I", data, o)[0]
    pc = u32(0)
    num = 0
    recs.append(Rec("initial_pc", 0, pc, pc, 0, 4, {}))
    pos, truncated, afterpos, mark = 4, False, False, False
    while pos < n:
        if n - pos < 4:
            errs.append({pos})
            truncated = True
            break
        w = u32(pos)
        major, minor = w >> 26, (w >> 1) & 0x3ff
        f = {}
        if major == 0:
            code, cnt = (w >> 16) & 0x3ff, w & 0xffff
            length = 4 + 4 * cnt
            if pos + length > n:
                errs.append({pos})
                truncated = True
                break
            words = [u32(pos + 4 + 4 * i) for i in range(cnt)]
            if code == 0x12 and cnt == 0:  # no record: the next dcbx has no address
                mark = True
                pos += length
                continue
            mark = False
            if code == 0x10 and cnt == 3:
                pc, num = words[0], words[1] << 32 | words[2]
                pos += length
                afterpos = True
                continue
            if code in SYNC_KINDS and cnt == 2:
                kind = "sync"
                f = {"code": code, "kind": SYNC_KINDS[code], "addr": words[0], "count": words[1]}
            else:
                kind = "escape"
                f = {"code": code, "words": words}
                if code not in KNOWN_CODES:
                    errs.append({pos})
        elif major == 31 and minor in MEMEXT_31:
            kind, length = "memext", 12
        elif (major in MEM_MAJOR or (major == 31 and minor in MEM_31)
              or (fmt == "tt6e" and major == 31 and minor in CACHE_31)):
            kind, length = "memory", 8
        elif is_flow(major, minor):
            kind, length = "flow", 8
        else:
            kind, length = "compute", 4
        if pos + length > n:
            errs.append({pos})
            truncated = True
            break
        if kind == "memext":
            third = u32(pos + 8)
            d = MEMEXT_31[minor]
            f = {"ea": u32(pos + 4), "size": 0 if d == "touch" else third & 0x7f, "dir": d,
                 "din": "w" if d == "store" else "r", "split": 0 if d == "touch" else 1}
            f["ctl" if d == "touch" else "xer"] = third
        elif kind == "memory":
            ea = u32(pos + 4)
            if major == 31 and minor in CACHE_31:
                f = {"ea": ea, "size": 0, "dir": "cache", "din": CACHE_31[minor], "split": 0,
                     "cache": 1}
                if mark:
                    f.update({"noea": 1, "marked": 1})
            else:
                spec, d = MEM_MAJOR[major] if major != 31 else MEM_31[minor]
                f = {"ea": ea, "size": mem_size(w, spec), "dir": d,
                     "din": "r" if d == "load" else "w",
                     "split": 1 if spec in ("mult", "nb") else 0}
        elif kind == "flow":
            f = {"next": u32(pos + 4), "cond": 1 if is_conditional(w) else 0}
        elif kind == "compute":
            if major == 3:
                f["twi"] = 1
            if major == 31 and minor in CACHE_31:
                prev = recs[-1]
                ea, noea = 0, 1  # TT6 records none, unless an escape 0x01 or 0x11 says it
                if not mark and lends_address(prev):
                    ea, noea = prev.get("words")[0], 0
                f.update({"cache": 1, "ea": ea, "din": CACHE_31[minor]})
                if noea:
                    f.update({"noea": 1, "marked": 1 if mark else 0})
        if mark and kind in INSTRUCTIONS and not f.get("cache"):
            errs.append({pos})  # an escape 0x12 before what is no dcbx
        if kind in INSTRUCTIONS:
            mark = False
        if afterpos:
            f["afterpos"] = 1
            afterpos = False
        r = Rec(kind, num, pc, w, pos, length, f)
        recs.append(r)
        pos += length
        if kind in INSTRUCTIONS:
            num = (num + 1) & 0xffffffffffffffff  # a 64-bit count, as a position record sets it
            pc = f["next"] if kind == "flow" else (pc + 4) & 0xffffffff
    if fmt == "tt6e":
        mark_pairs(recs, n, errs)
    return recs, errs, truncated


def mark_pairs(recs, size, errs):
    """TT6E: after every twi, a major-18 branch to 0x700, then rfi; else a problem."""
    for i, r in enumerate(recs):
        if r.kind != "compute" or r.word >> 26 != 3:
            continue
        b = recs[i + 1] if i + 1 < len(recs) else None
        if not (b and b.kind == "flow" and b.word >> 26 == 18 and b.get("next") == 0x700):
            errs.append({r.off, b.off if b else size})
            continue
        c = recs[i + 2] if i + 2 < len(recs) else None
        if not (c and c.kind == "flow" and c.word >> 26 == 19 and (c.word >> 1) & 0x3ff == 50):
            errs.append({r.off, b.off, c.off if c else size})
            continue
        b.f["pair"] = 1
        c.f["pair"] = 1


# ---- comparing a trace folder ----

def read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        return "error: %s" % e


def describe(want, got):
    if not isinstance(got, bytes):
        return got
    if want == got:
        return "equal"
    k = next((i for i in range(min(len(want), len(got))) if want[i] != got[i]),
             min(len(want), len(got)))
    return "differs from byte %d (expected %d bytes, got %d)" % (k, len(want), len(got))


def first_diff(want, got, label):
    """None, or the first differing line: "line N: expected ... got ..."."""
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else "<none>"
        g = got[i] if i < len(got) else "<none>"
        if not masked_equal(w, g):
            return "%s line %d: expected %r, got %r (%d vs %d lines)" % (label, i + 1, w, g,
                                                                       len(want), len(got))
    return None


def with_mnemonics(recs, truth):
    """The reading's records, each instruction given the mnemonic gen_tt6 chose for it: the
    generator's instructions in order, matched by PC and word (a trace edited after gen_tt6
    wrote it may lack some)."""
    gen = [r for r in load_truth(truth) if r.kind in INSTRUCTIONS]
    k = 0
    for r in recs:
        if r.kind not in INSTRUCTIONS:
            continue
        j = next((j for j in range(k, len(gen)) if (gen[j].pc, gen[j].word) == (r.pc, r.word)),
                 None)
        if j is not None:
            r.f["mn"] = gen[j].get("mn")
            k = j + 1
    return recs


def sync_plot_model(recs):
    """plots/sync.svg (doc/plots.md): the sync records of each kind, by their record's number
    (records from 0, the initial_pc included), over the records."""
    events = [(i, r.get("kind")) for i, r in enumerate(recs) if r.kind == "sync"]
    return series_expect.model(events, reach=(0, len(recs) - 1) if recs else ())


def compare_sync_plot(recs, d, name, check):
    path = os.path.join(d, "plots/sync.svg")
    series_expect.compare(path, sync_plot_model(recs), "%s: plots/sync.svg" % name,
                          "position in the trace (records)", check)
    if not any(r.kind == "sync" for r in recs):
        text = read(path)
        check("%s: plots/sync.svg says there are no sync records" % name, True,
              isinstance(text, bytes) and b"no sync records" in text)


def compare(trace, d, source, fmt, errors=None, truncated=None, skip=(), partial_stats=False,
            truth=None):
    out = []

    def check(desc, want, got):
        out.append("%s\t%s\t%s" % (desc, json.dumps(want, sort_keys=True),
                                   json.dumps(got, sort_keys=True)))

    raw = read(trace)
    if not isinstance(raw, bytes):
        check("read the trace", "bytes", raw)
        return out
    recs, read_errors, cut = reference_decode(raw, fmt)
    if truth:
        recs = with_mnemonics(recs, truth)
    if truncated is None:
        truncated = cut
    base = os.path.basename(trace)
    stem = base[:base.rindex(".")] if "." in base[1:] else base
    ext = fmt
    oext = "tt6" if fmt == "tt6e" else "tt6e"
    name = os.path.basename(d.rstrip("/"))
    sizes = {}

    def view(v):
        data = read(os.path.join(d, v))
        if isinstance(data, bytes):
            sizes[v] = len(data)
        return data

    def lines_of(data):
        return data.decode("utf-8", "replace").split("\n")[:-1] if isinstance(data, bytes) else None

    views = ["raw", "dump.txt", "stats.json", "errors.txt"]
    for c in CLASSES:
        views += ["class/%s.txt" % c, "class/%s.%s" % (c, ext)]
    views += ["sync.txt", "convert/%s.%s" % (stem, oext), "convert/%s.din" % stem]
    views += ["spix/%s.spixcounts" % stem, "spix/summary.txt"]
    views += ["plots/mix.svg", "plots/footprint.svg"]
    views += ["plots/hot.svg"]  # calls/' hottest functions
    views += ["plots/addresses.svg"]
    views += ["plots/sync.svg"]
    # no folded-time.txt: TT6 has no time
    views += ["calls/" + v for v in ("tree.txt", "profile.txt", "profile.json", "folded.txt",
                                     "flamegraph.svg")]
    if "listing" not in skip:
        found = sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d)
                       for f in fs)
        check("%s: the folder holds exactly the views" % name,
              sorted(views + ["report.html"]), found)  # every trace's page

    check("%s: raw equals the trace" % name, "equal", describe(raw, view("raw")))

    # dump.txt
    dump = lines_of(view("dump.txt"))
    if dump is None:
        check("%s: dump.txt readable" % name, True, False)
        return out
    data = read(os.path.join(d, "dump.txt"))
    check("%s: dump.txt ends with a newline (or is empty)" % name, True,
          data == b"" or data.endswith(b"\n"))
    check("%s: dump.txt lines = records" % name, len(recs), len(dump))
    want = [expected_masked(r) for r in recs]
    got = [mask(l) for l in dump]
    check("%s: dump.txt, every column but TEXT" % name, None, first_diff(want, got, "dump.txt"))
    bad = None
    for r, l in zip(recs, dump):
        t = dump_text(r)
        txt = text_of(l)
        if (t is not None and txt != t) or txt == "" or "  " in txt.strip():
            bad = "record %d (%s %08x): TEXT %r, expected %r" % (r.num, r.kind, r.word, txt, t)
            break
    check("%s: dump.txt TEXT column (escape/initial_pc exact, others non-empty)" % name, None, bad)

    # class/*.txt: the initial_pc line then the dump lines of the class, exactly (TEXT too).
    for c in CLASSES:
        v = "class/%s.txt" % c
        got = lines_of(view(v))
        exp_lines = [l for r, l in zip(recs, dump) if r.kind in ("initial_pc", c)]
        check("%s: %s is the initial_pc line and the dump.txt lines of its class" % (name, v),
              None, first_diff(exp_lines, got or [], v) if got is not None else "unreadable")
        wantm = [expected_masked(r) for r in recs if r.kind in ("initial_pc", c)]
        check("%s: %s against the model" % (name, v), None,
              first_diff(wantm, [mask(l) for l in got or []], v))
        v = "class/%s.%s" % (c, ext)
        if v not in skip:
            check("%s: %s: INITIAL_PC, the class's records, position records" % (name, v),
                  "equal", describe(class_stream(recs, raw, c, fmt), view(v)))

    if "sync.txt" not in skip:
        check("%s: sync.txt" % name, None,
              first_diff(sync_lines(recs), lines_of(view("sync.txt")) or [], "sync.txt"))
    if "plots/sync.svg" not in skip:
        compare_sync_plot(recs, d, name, check)
    v = "convert/%s.din" % stem
    if v not in skip and "convert" not in skip:
        check("%s: %s" % (name, v), None, first_diff(din_lines(recs), lines_of(view(v)) or [], v))
    v = "convert/%s.%s" % (stem, oext)
    if v not in skip and "convert" not in skip:
        check("%s: %s" % (name, v), "equal", describe(convert(recs, fmt), view(v)))

    # errors.txt
    errors = (read_errors if errors is None else errors) + no_address_note(recs, fmt)
    elines = lines_of(view("errors.txt")) or []
    offs = []
    for l in elines:
        if l.startswith("offset ") and ":" in l:
            try:
                offs.append(int(l[7:l.index(":")]))
            except ValueError:
                offs.append(l)
        else:
            offs.append(l)
    unmatched = list(offs)
    missing = []
    for acceptable in errors:
        hit = next((o for o in unmatched if o in acceptable), None)
        if hit is None:
            missing.append(sorted(acceptable))
        else:
            unmatched.remove(hit)
    check("%s: errors.txt has a line at each expected offset" % name, [], missing)
    check("%s: errors.txt has no other line" % name, [], [l for l, o in zip(elines, offs)
                                                          if o in unmatched])

    # stats.json
    try:
        st = json.loads(read(os.path.join(d, "stats.json")))
    except Exception as e:
        check("%s: stats.json parses" % name, "valid JSON", str(e))
        return out
    top, t = expected_stats(recs, len(raw), source, fmt, len(errors),
                            truncated if truncated != "any" else None)
    check("%s: stats.json top-level keys" % name, TOP_KEYS + [fmt, "spix", "calls", "plots"],
          list(st.keys()))
    for k, v in top:
        if k == "truncated" and v is None:
            continue
        check("%s: stats.json %s" % (name, k), v, st.get(k, "MISSING"))
    check("%s: stats.json class order" % name, ALL_CLASSES, list(st.get("classes", {}).keys()))
    o = st.get(fmt, {})
    if not isinstance(o, dict):
        o = {}
    # twi_pairs is a TT6E count (doc/views.md); a TT6 object may leave it out.
    got_keys = list(o.keys())
    if fmt == "tt6" and got_keys == TT6_KEYS[:-1]:
        got_keys.append("twi_pairs")
        o = dict(o, twi_pairs=0)
    check("%s: stats.json %s keys" % (name, fmt), TT6_KEYS, got_keys)
    keys = ["instructions", "initial_pc", "escape_codes", "sync_events"] if partial_stats \
        else [k for k in TT6_KEYS if k != "top_mnemonics"]
    for k in keys:
        check("%s: stats.json %s.%s" % (name, fmt, k), t[k], o.get(k, "MISSING"))
    if not partial_stats:
        check("%s: stats.json %s.loads.by_size keys are sizes" % (name, fmt), True,
              all(k.isdigit() for k in o.get("loads", {}).get("by_size", {})))
    if not partial_stats and all(r.get("mn") for r in recs if r.kind in INSTRUCTIONS):
        check("%s: stats.json top_mnemonics" % name, None,
              top_mnemonics_problem(o.get("top_mnemonics"), model_mnemonics(recs),
                                    t["instructions"]))
    for v, n in sizes.items():
        try:
            st_size = os.stat(os.path.join(d, v)).st_size
        except OSError as e:
            st_size = str(e)
        check("%s: stat size of %s equals its length" % (name, v), n, st_size)
    return out


def top_mnemonics_problem(top, model, instructions):
    if not isinstance(top, dict):
        return "not an object: %r" % (top,)
    vals = list(top.values())
    if len(top) > 20:
        return "more than 20 entries"
    if len(top) < min(20, len(model) - 3):
        return "only %d entries" % len(top)
    if any(not isinstance(v, int) for v in vals) or vals != sorted(vals, reverse=True):
        return "not most frequent first: %r" % vals
    if sum(vals) > instructions:
        return "counts add up to more than the instructions"
    for k, v in top.items():
        if k in CONFIDENT and model.get(k, 0) != v:
            return "%s: model executed %d, stats say %d" % (k, model.get(k, 0), v)
    ranked = sorted(model.items(), key=lambda kv: -kv[1])
    if ranked and ranked[0][0] in CONFIDENT and (len(ranked) == 1 or ranked[1][1] < ranked[0][1]):
        if next(iter(top), None) != ranked[0][0]:
            return "the most frequent is %s (%d), stats put %r first" % (
                ranked[0][0], ranked[0][1], next(iter(top), None))
    return None


# ---- self-check of the tools ----

def selfcheck(truth, trace, fmt):
    gen = load_truth(truth)
    raw = read(trace)
    problems = []
    ref, errs, trunc = reference_decode(raw, fmt)
    a = ["%s %d %08x %08x %d+%d" % (r.kind, r.num, r.pc, r.word, r.off, r.len) for r in gen]
    b = ["%s %d %08x %08x %d+%d" % (r.kind, r.num, r.pc, r.word, r.off, r.len) for r in ref]
    if a != b:
        problems.append("the reading differs from the generator: " +
                        str(first_diff(a, b, "record")))
    unknown = [{r.off} for r in gen if r.kind == "escape" and r.word >> 16 & 0x3ff not in KNOWN_CODES]
    if [sorted(e) for e in errs] != [sorted(e) for e in unknown]:
        problems.append("reading's problems %r, the generator's unknown escapes %r"
                        % (errs, unknown))
    if trunc:
        problems.append("the reading finds the trace cut")
    return problems


def main(argv):
    cmd = argv[1]
    if cmd == "compare":
        trace, d, source = argv[2:5]
        opts = {"fmt": None, "errors": None, "truncated": None, "skip": [],
                "partial_stats": False, "truth": None}
        i = 5
        while i < len(argv):
            a = argv[i]
            if a == "--format":
                opts["fmt"] = argv[i + 1]
            elif a == "--truth":
                opts["truth"] = argv[i + 1]
            elif a == "--errors":
                with open(argv[i + 1]) as fh:
                    opts["errors"] = [set(int(x) for x in l.split(",")) for l in fh if l.strip()]
            elif a == "--truncated":
                v = argv[i + 1]
                opts["truncated"] = "any" if v == "any" else v == "1"
            elif a == "--skip":
                opts["skip"].append(argv[i + 1])
            elif a == "--partial-stats":
                opts["partial_stats"] = True
                i += 1
                continue
            else:
                raise SystemExit("unknown option " + a)
            i += 2
        fmt = opts.pop("fmt") or os.path.splitext(trace)[1][1:]
        print("\n".join(compare(trace, d, source, fmt, **opts)))
    elif cmd in ("decode", "expect"):
        if cmd == "decode":
            trace, fmt, tout, eout = argv[2:6]
        else:
            trace, out = argv[2:4]
            fmt = os.path.splitext(trace)[1][1:]
            os.makedirs(out, exist_ok=True)
            tout, eout = os.path.join(out, "records"), os.path.join(out, "errors")
        recs, errs, trunc = reference_decode(read(trace), fmt)
        write_truth(recs, tout)
        with open(eout, "w") as fh:
            fh.writelines(",".join(str(o) for o in sorted(e)) + "\n" for e in errs)
        if cmd == "decode":
            print("truncated %d" % trunc)
    elif cmd == "selfcheck":
        truth, trace = argv[2:4]
        fmt = argv[4] if len(argv) > 4 else os.path.splitext(trace)[1][1:]
        p = selfcheck(truth, trace, fmt)
        print("\n".join(p) if p else "ok")
        return 1 if p else 0
    elif cmd == "syncplot":
        trace, d = argv[2:4]
        out = []
        recs = reference_decode(read(trace), os.path.splitext(trace)[1][1:])[0]
        compare_sync_plot(recs, d, os.path.basename(trace),
                          lambda desc, want, got: out.append("%s\t%s\t%s" % (
                              desc, json.dumps(want), json.dumps(got))))
        print("\n".join(out))
    elif cmd == "columns":
        with open(argv[2], encoding="utf-8", errors="replace") as fh:
            for line in fh:
                c = columns(line.rstrip("\n"))
                print("\t".join(c) if c else "MALFORMED\t" + line.rstrip("\n"))
    elif cmd == "din":
        trace, fmt, outp = argv[2:5]
        with open(outp, "w") as fh:
            fh.writelines(l + "\n" for l in din_lines(reference_decode(read(trace), fmt)[0]))
    elif cmd == "convert":
        trace, fmt, outp = argv[2:5]
        with open(outp, "wb") as fh:
            fh.write(convert(reference_decode(read(trace), fmt)[0], fmt))
    else:
        raise SystemExit("unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
