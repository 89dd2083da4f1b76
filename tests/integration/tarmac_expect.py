"""Expected views of a QEMU4V or ARM Tarmac text trace, computed from the original file with
plain Python string splitting, never from tracemount's output.

    tarmac_expect.py expect TRACE OUTDIR STEM EXT
        writes OUTDIR/dump.txt, OUTDIR/class/NAME.txt and NAME.EXT, OUTDIR/cpu/N.txt,
        OUTDIR/convert/STEM.din and OUTDIR/meta.json (line count, the lines this reader could
        not read, stats.json's expected counts). TRACE may be gzip.
    tarmac_expect.py processors OUTDIR SVG
        compares the plots/processors.svg at SVG with OUTDIR's model, as compare does.
    tarmac_expect.py note OUTDIR
        prints "nodata" when OUTDIR's model of plots/processors.svg is a one-line note.
    tarmac_expect.py compare OUTDIR MOUNTED_FOLDER LABEL
        compares the mounted folder with OUTDIR and prints one
        "description<TAB>expected<TAB>actual" line per check.

This reader knows the spec's kinds (specs/004) and those of the Fast Models and gem5 traces
in realtraces/tarmac: IT, IS, M[RW]n, R, E, CADI E, SIGNAL:, comments and blank lines. Lines
of other kinds (the ES, LD/ST lines of Cycle Models in parsertest.txt) are "foreign": for a
trace with foreign lines only what does not depend on them is compared, namely that no line
is lost (every line in exactly one class stream and one cpu file, records = lines, no
unknown) and that every line this reader knows is in its class stream; of the foreign lines it
knows one kind, ES with an opcode of dashes (a failed fetch), class fetch_failed.

The rules (doc/views.md, doc/formats.md):
- A line is the bytes up to "\\n"; fields are separated by runs of spaces and tabs. Optional
  time "T UNIT" (T decimal, maybe -1; UNIT lower-case letters), optional "cpuN", or a decimal
  cpu just before IT/IS.
- The record's cpu: its own, else that of the last instruction (IT/IS) before it, else 0.
- dump.txt: "TIME UNIT CPU KIND FIELDS" ("-" for no time): IT/IS "ADDR OPCODE ISET MODE
  DISASM" (ADDR the leading hex digits of the address token, DISASM the words after " : "
  joined by one space, "-" if none); MR/MW "ADDR SIZE DATA" (DATA the data tokens joined, "_"
  removed); R "NAME VALUE" (the value tokens joined by one space); events "E TEXT" (the tokens
  after the time and cpu, "-" for a blank line). A memory access whose data is (ABORTED), or whose
  attribute letters end in _I (an RTL instruction fetch), is an event.
- stats.json time: first, last, min and max over the times of 0 and more.
- Classes: IT lines are "executed", IS lines "condition_failed" (the instruction failed its
  condition code: it was fetched, and did nothing).
- convert/STEM.din: "2 VA" per IT and per IS (a condition-failed instruction was fetched too),
  "0 VA" per read, "1 VA" per write, hex without 0x.
- plots/processors.svg (series_expect.py): a one-line note for one processor at a steady rate
  or without time stamps; else a lane per processor ("cpu N", the first 8 to run
  an instruction, the rest "other cpus") of its IT, IS and ES lines (but failed fetches); x is
  the time when the first of them has one (a line without one counts at the last time seen),
  else the line's number from 0; the unit the first line's with a time.
- calls/: six views, and calls/cpu/N/ the same six for each cpu below 16 with IT or IS lines
  when two or more cpus have some (their content is calls_expect.py's).
"""

import json
import os
import re
import sys

import series_expect
from trace_bytes import read_bytes

CLASSES = ["executed", "condition_failed", "fetch_failed", "memory_reads", "memory_writes",
           "registers", "events", "unknown"]
# An ES line whose opcode is dashes: the fetch failed (an ECC fault), nothing ran.
FETCH_FAILED = re.compile(rb"\s*(?:[0-9]+\s+[a-z]+\s+)?ES\s+\([0-9a-fA-F]+:-+\)")
DEC = re.compile(rb"-?[0-9]+\Z")
UNIT = re.compile(rb"[a-z]{1,8}\Z")
CPU = re.compile(rb"cpu([0-9]+)\Z")
MEMORY = re.compile(rb"M[A-Z]?([RW])([0-9]+)([A-Za-z_]*)\Z")
HEXLEAD = re.compile(rb"[0-9a-fA-F]+")
EVENT_KINDS = (b"E", b"CADI", b"SIGNAL:")


def split_lines(data):
    """The lines of the trace, each with its newline (the last may have none)."""
    lines = data.split(b"\n")
    out = [l + b"\n" for l in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def read_line(line):
    """(class, own cpu or None, (time, unit) or None, dump fields after the cpu, din line or
    None, facts for the statistics), or None for a foreign line."""
    text = line.rstrip(b"\n")
    if text.endswith(b"\r"):
        text = text[:-1]
    toks = text.replace(b"\t", b" ").split(b" ")
    toks = [t for t in toks if t]
    if not toks or toks[0].startswith(b"#"):
        return "events", None, None, b"E " + (b" ".join(toks) or b"-"), None, {}
    i = 0
    time = None
    if len(toks) > 1 and DEC.match(toks[0]) and UNIT.match(toks[1]):
        time = (toks[0], toks[1])
        i = 2
    cpu = None
    if i < len(toks) and CPU.match(toks[i]):
        cpu = int(CPU.match(toks[i]).group(1))
        i += 1
    elif i + 1 < len(toks) and DEC.match(toks[i]) and toks[i + 1] in (b"IT", b"IS"):
        cpu = int(toks[i])
        i += 1
    if i >= len(toks):
        return None
    kind, rest = toks[i], toks[i + 1:]
    facts = {"time": time}
    if kind in (b"IT", b"IS"):
        if len(rest) < 6 or not rest[0].startswith(b"(") or rest[5] != b":":
            return None
        addr = HEXLEAD.match(rest[1]).group(0)
        disasm = b" ".join(rest[6:]) or b"-"
        fields = b" ".join([kind, addr, rest[2], rest[3], rest[4], disasm])
        va = int(addr, 16)
        facts.update(pc=va, iset=rest[3], mode=rest[4], mnemonic=rest[6].lower() if
                     len(rest) > 6 else None)
        cls = "executed" if kind == b"IT" else "condition_failed"
        return cls, cpu, time, fields, b"2 %x\n" % va, facts
    m = MEMORY.match(kind)
    if m and (rest[1:2] == [b"(ABORTED)"] or m.group(3).endswith(b"_I")):
        return "events", cpu, time, b"E " + b" ".join(toks[i:]), None, facts
    if m and rest and HEXLEAD.match(rest[0]):
        write = m.group(1) == b"W"
        size = int(m.group(2))
        addr = HEXLEAD.match(rest[0]).group(0)
        data = b"".join(rest[1:]).replace(b"_", b"") or b"-"
        va = int(addr, 16)
        facts.update(address=va, size=size)
        fields = b"%s %s %d %s" % (b"MW" if write else b"MR", addr, size, data)
        return ("memory_writes" if write else "memory_reads", cpu, time, fields,
                b"%d %x\n" % (1 if write else 0, va), facts)
    if kind == b"R" and len(rest) >= 2:
        facts.update(register=rest[0])
        return "registers", cpu, time, b"R " + b" ".join(rest), None, facts
    if kind in EVENT_KINDS:
        return "events", cpu, time, b"E " + b" ".join(toks[i:]), None, facts
    return None


TIME_AND_UNIT = re.compile(rb"(-?[0-9]{1,18})([a-z]{1,8})\Z")
ES_INSTRUCTION = re.compile(rb"\([0-9a-fA-F_]+:[0-9a-fA-F]")


def processors_model(lines):
    """plots/processors.svg's lanes and x axis, read from the lines on their own (ES lines
    too): (series_expect.model's dict, the x axis's label)."""
    events, names = [], {}
    last_cpu, unit, by_time, at = 0, None, None, 0
    for n, line in enumerate(lines):
        toks = [t for t in line.rstrip(b"\r\n").replace(b"\t", b" ").split(b" ") if t]
        i, time = 0, None
        if len(toks) > 1 and DEC.match(toks[0]) and UNIT.match(toks[1]):
            time, u, i = int(toks[0]), toks[1], 2
        elif toks and TIME_AND_UNIT.match(toks[0]):
            m = TIME_AND_UNIT.match(toks[0])
            time, u, i = int(m.group(1)), m.group(2), 1
        if time is not None and unit is None:
            unit = u.decode()
        cpu = None
        if i < len(toks) and CPU.match(toks[i]):
            cpu, i = int(CPU.match(toks[i]).group(1)), i + 1
        elif i + 1 < len(toks) and DEC.match(toks[i]) and toks[i + 1] in (b"IT", b"IS"):
            cpu, i = int(toks[i]), i + 1
        kind = toks[i] if i < len(toks) else b""
        insn = (kind in (b"IT", b"IS") and i + 1 < len(toks) and toks[i + 1].startswith(b"(")) \
            or (kind == b"ES" and i + 1 < len(toks) and ES_INSTRUCTION.match(toks[i + 1]))
        failed = kind == b"ES" and FETCH_FAILED.match(line)
        if kind in (b"IT", b"IS", b"ES") and (insn or failed):
            last_cpu = cpu if cpu is not None else last_cpu
        if not insn or failed:
            continue
        timed = time is not None and time >= 0
        if by_time is None:
            by_time = timed
        if by_time and timed:
            at = time
        if last_cpu not in names:
            names[last_cpu] = "cpu %d" % last_cpu if len(names) < 8 else "other cpus"
        events.append((at if by_time else n, names[last_cpu]))
    if by_time:
        label = "time (%s)" % unit
        origin = events[0][0]
        if origin:
            label = "time since %d %s (%s)" % (origin, unit, unit)
    else:
        label = "position in the trace (records)"
    want = series_expect.model(events)
    want["untimed_single"] = not by_time and len(names) == 1
    return want, label


def ranked(counter, limit=None):
    """Most frequent first, ties in byte order of the name."""
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(items[:limit] if limit else items)



# stats.json spells the instruction sets (doc/views.md): Tarmac's ISET tokens, any case, by the
# names a reader knows; other tokens as written. (Generated traces hold no MIPS code.)
ISA_NAMES = {"O": "AArch64", "A64": "AArch64", "A": "AArch32", "A32": "AArch32",
             "T": "Thumb", "T16": "Thumb", "T32": "Thumb"}

def expect(trace, outdir, stem, ext):
    data = read_bytes(trace)
    lines = split_lines(data)
    views = {"dump.txt": [], "convert/%s.din" % stem: []}
    for c in CLASSES:
        views["class/%s.txt" % c] = []
        views["class/%s.%s" % (c, ext)] = []
    known = {c: [] for c in CLASSES}  # lines this reader placed, for foreign traces
    cpus = {}
    ran = set()  # the processors that ran instructions (calls/cpu/N/ when two or more)
    insn_times = {}  # each processor's instructions' times: folded-time.txt when they differ
    foreign = []
    last_cpu = 0
    isets, modes, mnemonics, sizes, registers = {}, {}, {}, {}, {}
    times, pcs, addresses = [], [], []

    def bump(d, k):
        d[k] = d.get(k, 0) + 1

    for n, line in enumerate(lines, 1):
        r = read_line(line)
        if r is None:
            foreign.append(n)
            if FETCH_FAILED.match(line):
                known["fetch_failed"].append(line)
            continue
        cls, own, time, fields, din, facts = r
        cpu = own if own is not None else last_cpu
        if cls in ("executed", "condition_failed"):
            last_cpu = cpu
            ran.add(cpu)
            if time:
                insn_times.setdefault(cpu, set()).add(int(time[0]))
            iset = facts["iset"].decode()
            bump(isets, ISA_NAMES.get(iset.upper(), iset))
            bump(modes, facts["mode"].decode())
            pcs.append(facts["pc"])
            if cls == "executed" and facts["mnemonic"]:
                bump(mnemonics, facts["mnemonic"].decode())
        if "size" in facts:
            bump(sizes, str(facts["size"]) if facts["size"] < 64 else "64+")
            addresses.append(facts["address"])
        if "register" in facts:
            bump(registers, facts["register"].decode())
        if time:
            times.append((int(time[0]), time[1].decode()))
        head = b"%s %s %d " % (time[0], time[1], cpu) if time else b"- - %d " % cpu
        views["dump.txt"].append(head + fields + b"\n")
        views["class/%s.txt" % cls].append(head + fields + b"\n")
        views["class/%s.%s" % (cls, ext)].append(line)
        known[cls].append(line)
        views.setdefault("cpu/%d.txt" % cpu, []).append(line)
        per_cpu = cpus.setdefault(cpu, {c: 0 for c in CLASSES})
        per_cpu[cls] += 1
        if din:
            views["convert/%s.din" % stem].append(din)
    unit = times[0][1] if times else None
    positive = [t for t, _ in times if t >= 0]  # first, last, min, max: over these
    stats = {
        "records": len(lines),
        "classes": {c: len(known[c]) for c in CLASSES},
        "cpus": {str(c): cpus[c] for c in sorted(cpus)},
        "instruction_sets": ranked(isets),
        "modes": ranked(modes),
        "top_mnemonics": ranked(mnemonics, 10),
        "memory_accesses_by_size": dict(sorted(sizes.items(), key=lambda kv: (
            kv[0] == "64+", int(kv[0]) if kv[0] != "64+" else 0))),
        "registers_written": ranked(registers),
        "time": {
            "unit": unit,
            "first": positive[0] if positive else None,
            "last": positive[-1] if positive else None,
            "min": min(positive) if positive else None,
            "max": max(positive) if positive else None,
            "backwards": sum(1 for a, b in zip(times, times[1:]) if b[0] < a[0]),
            "negative": sum(1 for t, _ in times if t < 0),
            "other_units": sum(1 for _, u in times if u != unit),
        },
        "pc_min": "0x%x" % min(pcs) if pcs else None,
        "pc_max": "0x%x" % max(pcs) if pcs else None,
        "address_min": "0x%x" % min(addresses) if addresses else None,
        "address_max": "0x%x" % max(addresses) if addresses else None,
        "code_lines_64b": len({p >> 6 for p in pcs}),
        "code_pages_4k": len({p >> 12 for p in pcs}),
        "data_lines_64b": len({a >> 6 for a in addresses}),
        "data_pages_4k": len({a >> 12 for a in addresses}),
        # the din's lines by label: a fetch per IT and IS line
        "din": {k: sum(1 for l in views["convert/%s.din" % stem] if l.startswith(label))
                for k, label in (("fetches", b"2 "), ("reads", b"0 "), ("writes", b"1 "))},
    }
    os.makedirs(outdir, exist_ok=True)
    if not foreign:
        for name, content in views.items():
            path = os.path.join(outdir, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.writelines(content)
    meta = {"ext": ext, "lines": len(lines), "foreign": foreign, "stats": stats,
            "views": sorted(views) if not foreign else [],
            "processors": processors_model(lines),
            "derived": ["spix/%s.spixcounts" % stem, "spix/summary.txt"] +
            ["calls/" + c + v for k, c in [(min(ran, default=0), "")] +
             ([(k, "cpu/%d/" % k) for k in sorted(ran) if k < 16] if len(ran) > 1 else [])
             for v in ("tree.txt", "profile.txt", "profile.json", "folded.txt",
                       "folded-time.txt", "flamegraph.svg")
             # folded-time.txt only where the processor's time goes on
             if v != "folded-time.txt" or len(insn_times.get(k, ())) > 1] +
            ["plots/mix.svg", "plots/footprint.svg"] +
            ["plots/hot.svg"] +  # calls/' hottest functions
            ["plots/addresses.svg", "plots/processors.svg"],
            "known": {c: [l.decode("latin-1") for l in known[c]] for c in CLASSES}}
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(outdir, "lines"), "wb") as f:
        f.writelines(lines)


def compare(outdir, mnt, label):
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    out = []

    def check(what, want, got):
        out.append("%s: %s\t%s\t%s" % (label, what, want, got))

    def mounted(name):
        with open(os.path.join(mnt, name), "rb") as f:
            return f.read()

    ext = meta["ext"]
    stats = json.loads(mounted("stats.json"))
    own = stats.get(stats.get("format"), {})
    lines = split_lines(open(os.path.join(outdir, "lines"), "rb").read())
    check("stats.json records = lines of the trace", meta["lines"], stats["records"])
    check("dump.txt has one line per line of the trace", meta["lines"],
          len(split_lines(mounted("dump.txt"))))
    check("no unknown line", 0, stats["classes"]["unknown"])
    want, axis = meta["processors"]
    series_expect.compare(os.path.join(mnt, "plots/processors.svg"), want,
                          "plots/processors.svg", axis, check)
    # No line lost: the class streams, and the cpu files, hold every line once.
    streams = b"".join(mounted("class/%s.%s" % (c, ext)) for c in CLASSES)
    check("the class streams hold every line of the trace once", "yes",
          "yes" if sorted(split_lines(streams)) == sorted(lines) else "no")
    cpu_files = sorted(os.listdir(os.path.join(mnt, "cpu")))
    joined = b"".join(mounted("cpu/" + f) for f in cpu_files)
    check("the cpu files hold every line of the trace once", "yes",
          "yes" if sorted(split_lines(joined)) == sorted(lines) else "no")
    if meta["foreign"]:
        # Only the lines this reader knows: each in its class stream.
        for c in CLASSES:
            have = {}
            for l in split_lines(mounted("class/%s.%s" % (c, ext))):
                have[l] = have.get(l, 0) + 1
            missing = 0
            for l in meta["known"][c]:
                l = l.encode("latin-1")
                if have.get(l, 0):
                    have[l] -= 1
                else:
                    missing += 1
            check("class/%s.%s holds the %d lines known to be of it" % (
                c, ext, len(meta["known"][c])), 0, missing)
        print("\n".join(out))
        return
    want = meta["stats"]
    check("stats.json classes", json.dumps(want["classes"]), json.dumps(stats["classes"]))
    for key in want:
        if key not in ("records", "classes"):
            check("stats.json %s" % key, json.dumps(want[key]), json.dumps(own.get(key)))
    check("the views", " ".join(sorted(meta["views"] + ["errors.txt", "raw", "stats.json"] +
                                       meta["derived"] +
                                       ["report.html"])),  # every trace's page
          " ".join(sorted(
              os.path.relpath(os.path.join(d, f), mnt) for d, _, fs in os.walk(mnt)
              for f in fs)))
    for name in meta["views"]:
        with open(os.path.join(outdir, name), "rb") as f:
            expected = f.read()
        got = mounted(name)
        check("%s byte for byte" % name, "%d bytes" % len(expected),
              "%d bytes" % len(got) + ("" if got == expected else ", different"))
    print("\n".join(out))


def main(argv):
    if len(argv) == 6 and argv[1] == "expect":
        expect(argv[2], argv[3], argv[4], argv[5])
    elif len(argv) == 4 and argv[1] == "processors":
        want, axis = json.load(open(os.path.join(argv[2], "meta.json")))["processors"]
        out = []
        series_expect.compare(argv[3], want, "plots/processors.svg", axis,
                              lambda what, w, g: out.append("%s\t%s\t%s" % (what, w, g)))
        print("\n".join(out))
    elif len(argv) == 3 and argv[1] == "note":
        want, _ = json.load(open(os.path.join(argv[2], "meta.json")))["processors"]
        print("nodata" if series_expect.is_note(want) else "")
    elif len(argv) == 5 and argv[1] == "compare":
        compare(argv[2], argv[3], argv[4])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
