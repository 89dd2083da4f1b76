#!/usr/bin/env python3
"""calls/'s expectations, computed without tracemount (doc/calls.md).

  calls_expect.py write FORMAT OUT EXPECTED
      Runs a small program of known call structure (nested calls, recursion, a tail call, a
      longjmp back to a return address, a call that never returns) and writes its execution as
      a trace of FORMAT (tt6, cis501, tarmac, qemu4v-arm: QEMU4V with AArch32 code, or mips:
      QEMU4V's MIPS code, each jump and branch followed by its delay slot) to OUT, and the
      folded stacks it ran to EXPECTED.folded (sorted), EXPECTED.time (the same by time,
      Tarmac and QEMU4V only), its
      figures to EXPECTED.json, and to EXPECTED.hot the bars of plots/hot.svg as
      plots_check.py bars lists them: the functions by self instructions, then inclusive,
      then first run, each with its entries (calls, tail calls, the root). The program keeps its own stack as it runs: nothing here
      reads a trace.
      FORMAT tarmac-cpus: the program on processor 0 and the same program 0x10000 higher on
      processor 1, their instructions interleaved in one Tarmac trace (cpu0, cpu1), with a
      register line of processor 2, which runs nothing; EXPECTED.cpuN.folded, .time and .json
      are processor N's, EXPECTED.folded and the others processor 0's (calls/ shows it), and
      EXPECTED.cpus lists the processors that have calls/cpu/N/.
  calls_expect.py model FORMAT TRACE TRACE_FOLDER
      The oracle for any trace: call_model.py reads TRACE's instructions with the tests' own
      format readers (FORMAT tt6, tt6e, cis501, tarmac, qemu4v or full; not MIPS code) and
      applies doc/calls.md's rules; tree.txt, profile.txt, folded.txt and folded-time.txt of
      calls/ and each calls/cpu/N/ of the mounted TRACE_FOLDER are compared with it line by
      line (the first differing line), and stats.json's calls figures per processor. Functions
      are named by address: a trace with images is checked by `name` below. Prints
      "description<TAB>expected<TAB>actual" lines.
  calls_expect.py model-folded FORMAT TRACE
      The model's folded stacks of TRACE's lowest processor, which the tests compare with the
      program's (EXPECTED.folded) to check the model itself.
  calls_expect.py check TRACE_FOLDER
      Not an oracle, a consistency check kept beside `model`:
      checks a mounted trace folder's calls/ views against each other and against stats.json
      (any trace), profile.json's demangled names against c++filt's of its symbols,
      plots/hot.svg's bars against profile.json, and calls/cpu/N/ of every
      processor that ran instructions when two or more did, none otherwise: prints "description<TAB>expected<TAB>actual" lines.
  calls_expect.py name SYMBOLS OFFSET TRACE_FOLDER EXPECTED
      The views a program image gives (doc/calls.md, "Symbols"), from the same trace's views
      without one (TRACE_FOLDER, functions named by entry address) and SYMBOLS, the output of
      `readelf -hsW IMAGE` (binutils, not libelf): each function named by the symbol that
      holds its entry, demangled by `c++filt -i`, OFFSET (decimal or 0x hex) added to the symbols. Writes
      EXPECTED.folded (sorted, a stack's counts added up), EXPECTED.tree,
      EXPECTED.profile and EXPECTED.hot (plots/hot.svg's bars, from that profile). Fails when two entries fall in one symbol (the views would then
      merge functions, which this does not model).
"""
import os
import json
import struct
import sys
import xml.etree.ElementTree as ET

PLAIN, CALL, RETURN, JUMP, SLOT = "plain", "call", "return", "jump", "slot"


class Program:
    """Instructions of 4 bytes, each (pc, kind, next pc); the stack and the folded counts as
    calls/ must find them: a call instruction counts to its caller, a return to its callee.
    With delay_slots (MIPS), each call, return and jump is followed by its delay slot (kind
    SLOT), which runs before control moves and counts where the branch does; a call returns
    past it, to its pc + 8. depths[i]: the calls pending after instruction i."""

    def __init__(self, delay_slots=False):
        self.delay_slots = delay_slots
        self.depths = []
        self.insns = []
        self.keys = []  # each instruction's stack, as folded.txt names it
        self.stack = []  # (function entry, return address)
        self.folded = {}
        self.pc = None
        self.calls = self.returns = self.tail_calls = self.resyncs = 0
        self.entries = {}  # function -> entries, in order of first entry
        self.max_depth = 0

    def _count(self):
        key = ";".join("0x%x" % f for f, _ in self.stack)
        self.folded[key] = self.folded.get(key, 0) + 1
        self.keys.append(key)

    def _branch(self, kind, target):
        """The branch (and its delay slot) at pc, going to target; returns the address after
        them, a call's return address."""
        if not self.delay_slots:
            self._count()
            self.insns.append((self.pc, kind, target))
            self.depths.append(len(self.stack) - 1)
            return self.pc + 4
        for k, nxt in ((kind, self.pc + 4), (SLOT, target)):
            self._count()
            self.insns.append((self.pc + 4 * (k == SLOT), k, nxt))
            self.depths.append(len(self.stack) - 1)
        return self.pc + 8

    def _moved(self):
        """The stack changed with the last branch: its depth is the new one."""
        self.depths[-1] = len(self.stack) - 1

    def _enter(self, f):
        self.entries[f] = self.entries.get(f, 0) + 1

    def start(self, pc):
        self.pc = pc
        self.stack = [(pc, None)]
        self._enter(pc)

    def plain(self, n=1):
        for _ in range(n):
            self._count()
            self.insns.append((self.pc, PLAIN, self.pc + 4))
            self.depths.append(len(self.stack) - 1)
            self.pc += 4

    def call(self, target):
        self.stack.append((target, self._branch(CALL, target)))
        self._enter(target)
        self._moved()
        self.calls += 1
        self.max_depth = max(self.max_depth, len(self.stack) - 1)
        self.pc = target

    def ret(self, frames=1):
        """Returns to the return address of the frame `frames` below the top: 1 is a plain
        return, more a longjmp to an outer return address (one resynchronisation)."""
        to = self.stack[-frames][1]
        self._branch(RETURN, to)
        del self.stack[-frames:]
        self._moved()
        if frames == 1:
            self.returns += 1
        else:
            self.returns += 1
            self.resyncs += 1
        self.pc = to

    def tail(self, target):
        self._branch(JUMP, target)
        self.stack[-1] = (target, self.stack[-1][1])
        self._enter(target)
        self.tail_calls += 1
        self.pc = target


def run(base=0, delay_slots=False):
    """main at 0x1000: f calls g; r recurses 3 deep; u; s tail-calls u; a calls b, which calls
    lj, which returns straight to main past b and a; h never returns. Every address base
    higher."""
    p = Program(delay_slots)
    F, G, R, U, S, A, B, LJ, H = (base + a for a in (0x2000, 0x2100, 0x3000, 0x4000, 0x4100,
                                                     0x5000, 0x5100, 0x5200, 0x6000))
    p.start(base + 0x1000)
    p.plain(2)
    p.call(F)
    p.plain(3)
    p.call(G)
    p.plain(5)
    p.ret()
    p.plain(1)
    p.ret()

    def recurse(depth):
        p.plain(2)
        if depth:
            p.call(R)  # from R + 8
            recurse(depth - 1)
        p.plain(1)
        p.ret()

    p.plain(1)
    p.call(R)
    # recursion: each activation runs R, R+4, then calls from R+8
    recurse(3)
    p.call(U)
    p.plain(4)
    p.ret()
    p.call(S)
    p.plain(2)
    p.tail(U)
    p.plain(4)
    p.ret()
    p.call(A)
    p.plain(1)
    p.call(B)
    p.plain(2)
    p.call(LJ)
    p.plain(3)
    p.ret(frames=3)  # to main, past lj, b and a
    p.plain(2)
    p.call(H)
    p.plain(6)  # never returns: the trace ends
    return p


def be32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def write_tt6(p, out):
    """TT6: INITIAL_PC, then each instruction's word, a branch's followed by its next PC."""
    b = bytearray(be32(p.insns[0][0]))
    for pc, kind, nxt in p.insns:
        if kind == PLAIN:
            b += be32(0x38600001)  # li r3,1
        elif kind == CALL:
            b += be32(0x48000001 | ((nxt - pc) & 0x03FFFFFC)) + be32(nxt)  # bl
        elif kind == RETURN:
            b += be32(0x4E800020) + be32(nxt)  # blr
        else:
            b += be32(0x48000000 | ((nxt - pc) & 0x03FFFFFC)) + be32(nxt)  # b
    out.write(bytes(b))


def write_cis501(p, out):
    """CIS501: a call and a return in three micro-ops, the last the branch; jumps in one."""
    lines = []
    for pc, kind, nxt in p.insns:
        ft = pc + 4
        if kind == PLAIN:
            lines.append("1 %x -1 -1 3 - - - 0 0 %x 0 ADD ADD" % (pc, ft))
            continue
        macro, uops = {CALL: ("CALL", ["SAVE_PC", "STORE"]),
                       RETURN: ("RET", ["LOAD", "ADD_IMM"]), JUMP: ("J", [])}[kind]
        for k, u in enumerate(uops):
            lines.append("%d %x 4 -1 4 - - - 8 0 %x 0 %s %s" % (k + 1, pc, ft, macro, u))
        lines.append("%d %x -1 -1 -1 - T - 0 0 %x %x %s BRANCH" %
                     (len(uops) + 1, pc, ft, nxt, macro))
    out.write(("\n".join(lines) + "\n").encode())


def write_tarmac(p, out):
    """Fast Models AArch64, one instruction every 10 ticks."""
    lines = []
    for n, (pc, kind, nxt) in enumerate(p.insns):
        dis = {PLAIN: "NOP", CALL: "BL 0x%x" % nxt, RETURN: "RET", JUMP: "B 0x%x" % nxt}[kind]
        lines.append("%d clk IT (%d) %08x d503201f O EL1h_s : %s" % (10 * (n + 1), n + 1, pc,
                                                                    dis))
    out.write(("\n".join(lines) + "\n").encode())


def write_qemu4v_arm(p, out):
    """QEMU4V with AArch32 code (ISET A), one instruction every 10 clk on cpu 0: BL, BX lr and B
    with their A32 words, which encode no MIPS jump or branch (doc/formats.md, "MIPS code")."""
    lines = []
    for n, (pc, kind, nxt) in enumerate(p.insns):
        word, dis = {PLAIN: ("e320f000", "NOP"), CALL: ("eb000000", "BL 0x%x" % nxt),
                     RETURN: ("e12fff1e", "BX lr"), JUMP: ("ea000000", "B 0x%x" % nxt)}[kind]
        lines.append("%d clk 0 IT (%d) %08x %s A svc : %s" % (10 * (n + 1), n + 1, pc, word, dis))
    out.write(("\n".join(lines) + "\n").encode())


def write_tarmac_cpus(programs, out):
    """Fast Models AArch64 with a cpu column: the programs' instructions in turn, one line every
    10 ticks, program k on processor k; then a register line of processor len(programs).
    Returns each program's instruction times."""
    lines, times = [], [[] for _ in programs]
    at = [0] * len(programs)
    while any(at[k] < len(p.insns) for k, p in enumerate(programs)):
        for k, p in enumerate(programs):
            if at[k] == len(p.insns):
                continue
            pc, kind, nxt = p.insns[at[k]]
            at[k] += 1
            dis = {PLAIN: "NOP", CALL: "BL 0x%x" % nxt, RETURN: "RET", JUMP: "B 0x%x" % nxt}[kind]
            t = 10 * (len(lines) + 1)
            times[k].append(t)
            lines.append("%d clk cpu%d IT (%d) %08x d503201f O EL1h_s : %s" % (t, k, at[k], pc,
                                                                             dis))
    lines.append("%d clk cpu%d R X0 0000000000000000" % (10 * (len(lines) + 1), len(programs)))
    out.write(("\n".join(lines) + "\n").encode())
    return times


def mips_j(op, target):
    return "%08x" % (op << 26 | (target >> 2) & 0x3FFFFFF)


def write_mips(p, out):
    """QEMU4V as MicroTESK writes MIPS code (specs/004): one instruction every 10 clk on cpu 0,
    jal, jr ra and j for calls, returns and the tail call, each followed by its delay slot; a
    bne never taken at main's entry; $sp (r29) 32 bytes lower per call pending, on register
    lines after the delay slots that move it (the initial one at time -1, before the first
    instruction, as MicroTESK writes the registers' values)."""
    def sp(depth):
        return 0x80000 - 32 * depth

    lines = ["-1 clk R r29 %08x" % sp(0)]
    kinds = [k for _, k, _ in p.insns]
    for n, (pc, kind, nxt) in enumerate(p.insns):
        if kind == CALL:
            word, dis = mips_j(3, p.insns[n + 1][2]), "jal 0x%x" % p.insns[n + 1][2]
        elif kind == RETURN:
            word, dis = "03e00008", "jr ra"
        elif kind == JUMP:
            word, dis = mips_j(2, p.insns[n + 1][2]), "j 0x%x" % p.insns[n + 1][2]
        elif kind == SLOT and p.depths[n] != p.depths[n - 1]:
            delta = sp(p.depths[n]) - sp(p.depths[n - 1])
            word, dis = "27bd%04x" % (delta & 0xFFFF), "addiu sp,sp,%d" % delta
        elif kind == SLOT:
            word, dis = "00000000", "nop"
        elif pc == 0x1000:  # not taken: it and its delay slot run on
            word, dis = "15080003", "bne t0,t0,0x1010"
        else:
            word, dis = "25080001", "addiu t0,t0,1"
        lines.append("%d clk 0 IT (%d) %08x %s A svc : %s" % (10 * (n + 1), n + 1, pc, word,
                                                               dis))
        if kind == SLOT and kinds[n - 1] != JUMP and p.depths[n] != p.depths[n - 1]:
            lines.append("%d clk R r29 %08x" % (10 * (n + 1), sp(p.depths[n])))
    out.write(("\n".join(lines) + "\n").encode())


def folded_time(p, times=None):
    """Each instruction lasts until the next one's time (10 later, or times[i]); the last has
    none."""
    times = times or [10 * (n + 1) for n in range(len(p.insns))]
    out = {}
    for i in range(len(p.insns) - 1):
        out[p.keys[i]] = out.get(p.keys[i], 0) + times[i + 1] - times[i]
    return out


HOT_BARS = 20  # the bars of plots/hot.svg (bars.h's TM_BARS_TOP)


def hot_lines(bars):
    """bars: (name, self, inclusive, entries) in profile order; plots/hot.svg's bars, ranked
    by self, then inclusive, then that order (a stable sort), as plots_check.py bars lists
    them."""
    ranked = sorted((b for b in bars if b[1]), key=lambda b: (-b[1], -b[2]))[:HOT_BARS]
    return ["%d\t%s\t%d\t%d\t%d" % ((k,) + tuple(b)) for k, b in enumerate(ranked, 1)]


def program_hot(p):
    """p's functions as plots/hot.svg ranks them: self instructions from its stacks' last
    function, inclusive ones counting each instruction once per function on its stack."""
    self_, incl = {}, {}
    for key, n in p.folded.items():
        funcs = key.split(";")
        self_[funcs[-1]] = self_.get(funcs[-1], 0) + n
        for f in set(funcs):
            incl[f] = incl.get(f, 0) + n
    return hot_lines([("0x%x" % f, self_.get("0x%x" % f, 0), incl.get("0x%x" % f, 0), n)
                      for f, n in p.entries.items()])


def write_expected(p, expected, times):
    """p's folded stacks, by time when there are times, and figures, to EXPECTED.*."""
    with open(expected + ".folded", "w") as f:
        for line in sorted("%s %d" % kv for kv in p.folded.items()):
            f.write(line + "\n")
    with open(expected + ".time", "w") as f:
        if times:
            for line in sorted("%s %d" % kv for kv in folded_time(p, times).items() if kv[1]):
                f.write(line + "\n")
    figures = {"instructions": len(p.insns), "calls": p.calls, "returns": p.returns,
               "tail_calls": p.tail_calls, "resynchronisations": p.resyncs,
               "never_returned": len(p.stack) - 1, "max_depth": p.max_depth,
               "unmatched_returns": 0, "discontinuities": 0}
    with open(expected + ".json", "w") as f:
        json.dump(figures, f, sort_keys=True)
    with open(expected + ".hot", "w") as f:
        f.write("".join(line + "\n" for line in program_hot(p)))


def write(fmt, out_path, expected):
    if fmt == "tarmac-cpus":
        programs = [run(), run(0x10000)]
        with open(out_path, "wb") as out:
            times = write_tarmac_cpus(programs, out)
        write_expected(programs[0], expected, times[0])
        for k, p in enumerate(programs):
            write_expected(p, "%s.cpu%d" % (expected, k), times[k])
        with open(expected + ".cpus", "w") as f:
            f.write("".join("%d\n" % k for k in range(len(programs))))
        return
    p = run(delay_slots=fmt == "mips")
    with open(out_path, "wb") as out:
        {"tt6": write_tt6, "cis501": write_cis501, "tarmac": write_tarmac,
         "mips": write_mips, "qemu4v-arm": write_qemu4v_arm}[fmt](p, out)
    write_expected(p, expected, [10 * (n + 1) for n in range(len(p.insns))]
                   if fmt in ("tarmac", "mips", "qemu4v-arm") else None)


MAX_STREAM_VIEWS = 16  # processors with calls/cpu/N/ (view.h's TM_MAX_STREAM_VIEWS)


def check(folder):
    """The views of one trace against each other: sums, counts, parses; calls/cpu/N/ for each
    processor that ran instructions when two or more did, none otherwise."""
    def read(name):
        with open(folder + "/" + name, "rb") as f:
            return f.read().decode()

    def listing(name):
        return os.listdir(folder + "/" + name)

    out = []

    def eq(what, want, got):
        out.append("%s: %s\t%s\t%s" % (folder.rsplit("/", 1)[-1], what, want, got))

    calls = json.loads(read("stats.json"))["calls"]
    omitted = calls["omitted_views"]
    for v in omitted:  # too deep to render: empty (folded-time.txt unlisted), said in errors.txt
        if not v.endswith("folded-time.txt"):
            eq("%s is empty, omitted" % v, "", read(v))
        eq("errors.txt says why %s is empty" % v, True,
           ("%s is empty" % v) in read("errors.txt"))
    check_views(read, listing, eq, "calls/", calls, omitted)
    ran = sorted(int(k) for k, p in calls["processors"].items() if p["instructions"])
    shown = [k for k in ran if k < MAX_STREAM_VIEWS] if len(ran) > 1 else []
    has_cpu = os.path.isdir(folder + "/calls/cpu")
    eq("calls/cpu exists when two or more processors ran", bool(shown), has_cpu)
    listed = sorted(os.listdir(folder + "/calls/cpu"), key=int) if has_cpu else []
    eq("calls/cpu lists the processors that ran", [str(k) for k in shown], listed)
    for k in shown:
        check_views(read, listing, eq, "calls/cpu/%d/" % k, calls["processors"][str(k)],
                    omitted)
    if shown:
        eq("calls/ shows the lowest processor", ran[0], calls["processor"])
        for v in ("tree.txt", "folded.txt", "profile.txt"):
            if "calls/" + v not in omitted:
                eq("calls/%s is calls/cpu/%d/%s" % (v, ran[0], v), True,
                   read("calls/" + v) == read("calls/cpu/%d/%s" % (ran[0], v)))
    for line in out:
        print(line)


def model(fmt, trace, folder):
    """The calls/ views of the mounted TRACE folder against call_model.py's reading of TRACE
    (format fmt): tree.txt, profile.txt, folded.txt and folded-time.txt line by line, and
    stats.json's calls, for calls/ and each calls/cpu/N/."""
    import call_model
    out = []
    label = folder.rsplit("/", 1)[-1]

    def eq(what, want, got):
        out.append("%s: model: %s\t%s\t%s" % (label, what, want, got))

    def lines(view):
        path = folder + "/" + view
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read().decode("latin-1").splitlines()

    def same_lines(view, want):
        got = lines(view)
        if got is None:
            eq(view + " exists", True, False)
            return
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                eq("%s line %d" % (view, i + 1), w, g)
                return
        eq(view + ": lines", len(want), len(got))

    stats = json.loads(open(folder + "/stats.json").read())["calls"]
    omitted = stats["omitted_views"]
    per_cpu = call_model.events_of(fmt, trace)
    ran = sorted(k for k, ev in per_cpu.items() if ev)
    folders = [("calls/", ran[0] if ran else None)]
    if len(ran) > 1:
        folders += [("calls/cpu/%d/" % k, k) for k in ran if k < MAX_STREAM_VIEWS]
    eq("processors that ran instructions", ran,
       sorted(int(k) for k, p in stats["processors"].items() if p["instructions"]))
    for at, cpu in folders:
        if cpu is None:
            continue
        t = call_model.track(per_cpu[cpu], check_sp=fmt == "full")
        views = {"tree.txt": t.tree(), "profile.txt": t.profile(), "folded.txt": t.folded()}
        if t.has_time:
            views["folded-time.txt"] = t.folded_time()
        else:
            eq(at + "folded-time.txt: none without time", False,
               os.path.exists(folder + "/" + at + "folded-time.txt"))
        for v, want in views.items():
            same_lines(at + v, [] if at + v in omitted else want)
        figures = stats["processors"][str(cpu)]
        for key, want in sorted(t.counts.items()):
            eq("%sstats.json %s" % (at, key), want, figures.get(key))
    for line in out:
        print(line)


def read_symbols(path, offset):
    """The functions of `readelf -hsW` output: [(start, size, name)] sorted, one per address,
    as calls.md says: STT_FUNC and GNU_IFUNC, defined; .symtab, else .dynsym; ARM's Thumb bit
    cleared; of aliases, global before weak before local, then a sized one, then by name; a
    size of 0 reaches the next function (1 for the last)."""
    arm = False
    tables = {}
    table = None
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.split()
        if line.strip().startswith("Machine:"):
            arm = line.split(":", 1)[1].strip() == "ARM"
        elif line.startswith("Symbol table"):
            table = tables.setdefault(line.split("'")[1], [])
        elif table is not None and len(f) >= 8 and f[0].endswith(":") and f[0][:-1].isdigit():
            value, size, kind, bind, ndx, name = f[1], f[2], f[3], f[4], f[6], f[7]
            if kind not in ("FUNC", "IFUNC") or ndx == "UND" or not name:
                continue
            addr = int(value, 16) & (~1 if arm else ~0)
            rank = {"GLOBAL": 0, "WEAK": 1}.get(bind, 2)
            table.append(((addr + offset) % 2**64, rank, int(size, 0) == 0, name.encode(),
                          int(size, 0)))
    syms = tables.get(".symtab", tables.get(".dynsym", []))
    syms.sort()
    kept = []
    for s in syms:
        if not kept or kept[-1][0] != s[0]:
            kept.append(s)
    out = []
    for i, (addr, _, _, name, size) in enumerate(kept):
        if not size:
            size = kept[i + 1][0] - addr if i + 1 < len(kept) else 1
        out.append((addr, size, name.decode()))
    return out


def shown(name):
    """A name as the views show it: '?' outside printable ASCII, ';' as ':'."""
    return "".join("?" if not 32 <= ord(c) < 127 else ":" if c == ";" else c for c in name)


def demangled(symbols):
    """{symbol: the name c++filt -i (binutils) gives it}: C++ names demangled, std::string
    and the like kept short; a name it cannot read stays as it is. Each symbol is an argument,
    read whole, as the views read it."""
    import subprocess
    symbols = sorted(set(symbols))
    if not symbols:
        return {}
    out = subprocess.run(["c++filt", "-i", "--"] + symbols, check=True, capture_output=True,
                         text=True).stdout.split("\n")
    return dict(zip(symbols, out[:len(symbols)]))


def name(symbols_path, offset, folder, expected):
    import bisect
    syms = read_symbols(symbols_path, int(offset, 0))
    starts = [s[0] for s in syms]
    readable = demangled(s[2] for s in syms)

    def symbol(addr):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr - syms[i][0] < syms[i][1]:
            return syms[i]
        return None

    names = {}  # "0x..." -> (name, at its entry)
    def rename(f):
        if not f.startswith("0x"):
            return f, True
        if f not in names:
            s = symbol(int(f, 16))
            names[f] = (shown(readable[s[2]]), s[0] == int(f, 16)) if s else (f, True)
        return names[f]

    def read(view):
        with open(folder + "/" + view, "rb") as f:
            return f.read().decode().splitlines()

    folded = {}
    for line in read("calls/folded.txt"):
        stack, n = line.rsplit(" ", 1)
        key = ";".join(rename(f)[0] for f in stack.split(";"))
        folded[key] = folded.get(key, 0) + int(n)
    with open(expected + ".folded", "w") as out:
        for k in sorted(folded, key=lambda k: k.encode()):
            out.write("%s %d\n" % (k, folded[k]))
    with open(expected + ".tree", "w") as out:
        for line in read("calls/tree.txt"):
            if line.startswith("#"):
                out.write(line + "\n")
                continue
            body = line.lstrip(" ")
            indent = line[:len(line) - len(body)]
            func, rest = body.split("  ", 1)
            new, at_entry = rename(func)
            if "[root" in rest and not at_entry:  # the trace began inside a function
                rest = rest.replace("[root", "[root mid-function", 1)
            out.write("%s%s  %s\n" % (indent, new, rest))
    bars = []
    with open(expected + ".profile", "w") as out:
        for line in read("calls/profile.txt"):
            if not line.startswith("#"):
                cols, func = line.rsplit("  ", 1)
                line = cols + "  " + rename(func)[0]
                incl, excl, entries = (int(c) for c in cols.split()[:3])
                bars.append((rename(func)[0], excl, incl, entries))
            out.write(line + "\n")
    with open(expected + ".hot", "w") as out:
        out.write("".join(line + "\n" for line in hot_lines(bars)))
    by_name = {}
    for f, (n, _) in names.items():
        by_name.setdefault(n, []).append(f)
    merged = [fs for fs in by_name.values() if len(fs) > 1]
    if merged:
        sys.exit("entries in one function, not modelled: %s" % merged)


def check_views(read, listing, eq, at, stats, omitted):
    """The views in folder `at` (calls/ or calls/cpu/N/) against stats, their processor's
    figures; listing(at) lists the folder."""
    folded = [l.rsplit(" ", 1) for l in read(at + "folded.txt").splitlines()]
    if at + "folded.txt" not in omitted:
        eq(at + "folded.txt adds up to the instructions", stats["instructions"],
           sum(int(n) for _, n in folded))
    eq(at + "folded.txt: one line per stack", len(folded), len(set(s for s, _ in folded)))
    prof = json.loads(read(at + "profile.json"))
    eq(at + "profile.json: instructions", stats["instructions"], prof["instructions"])
    eq(at + "profile.json: exclusive counts add up", stats["instructions"],
       sum(f["exclusive_instructions"] for f in prof["functions"]))
    eq(at + "profile.json: one entry per function", stats["functions"], len(prof["functions"]))
    readable = demangled(f["name"] for f in prof["functions"])
    eq(at + "profile.json: each name (the symbol) demangled as c++filt -i does",
       [readable[f["name"]] for f in prof["functions"]],
       [f["demangled"] for f in prof["functions"]])
    text = read(at + "profile.txt").splitlines()
    eq(at + "profile.txt: one line per function", stats["functions"],
       len([l for l in text if not l.startswith("#")]))
    if at + "tree.txt" in omitted:
        return
    tree = [l for l in read(at + "tree.txt").splitlines() if not l.startswith("#")]
    roots = len([l for l in tree if "[root" in l])
    eq(at + "tree.txt: one line per call, tail call and root", stats["calls"] +
       stats["tail_calls"] + roots, len(tree))
    eq(at + "tree.txt: no-return marks", stats["never_returned"],
       len([l for l in tree if "no-return" in l]))
    if at + "flamegraph.svg" not in omitted:
        svg = ET.fromstring(read(at + "flamegraph.svg"))
        eq(at + "flamegraph.svg: an SVG document", "{http://www.w3.org/2000/svg}svg", svg.tag)
        eq(at + "flamegraph.svg: no script", 0,
           len([e for e in svg.iter() if e.tag.endswith("script")]))
    # listed only where not empty: where the trace gives time and it was not omitted
    listed = "folded-time.txt" in listing(at)
    eq(at + "folded-time.txt: listed where there is time", prof["has_time"] and
       at + "folded-time.txt" not in omitted, listed)
    if listed:
        eq(at + "folded-time.txt: not empty", True, bool(read(at + "folded-time.txt")))
    if at == "calls/":  # plots/hot.svg draws the processor calls/ shows
        svg = ET.fromstring(read("plots/hot.svg"))
        drawn = ["\t".join(g.get(k, "-") for k in ("data-rank", "data-name", "data-value",
                                                     "data-total", "data-extra"))
                 for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "bar"]
        eq("plots/hot.svg: the hottest functions of profile.json", hot_lines(
            [(f["demangled"], f["exclusive_instructions"], f["inclusive_instructions"],
              f["calls"]) for f in prof["functions"]]), drawn)


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "check":
        check(sys.argv[2])
    elif sys.argv[1] == "model-folded":
        import call_model
        per_cpu = call_model.events_of(sys.argv[2], sys.argv[3])
        print("\n".join(call_model.track(per_cpu[min(per_cpu)]).folded()))
    elif sys.argv[1] == "model":
        model(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "name":
        name(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit("usage: see the docstring")


if __name__ == "__main__":
    main()
