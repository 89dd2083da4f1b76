"""The tests' call model: calls/'s views of a trace (doc/calls.md), from the trace's
instructions as the tests' own format readers find them, never from tracemount's code or output.

  events_of(fmt, path) -> {processor: [Event]}   the instructions of a trace, one list per
      processor, read by tt6_expect.py (TT6, TT6E), cis501_expect.py and cis501_families.py
      (CIS501), tarmac_expect.py (Tarmac, QEMU4V) or the FULL layout of full_model.py; each
      instruction's kind (call, return, jump, plain) by doc/calls.md's "Calls and returns per
      instruction set", written here from that table.
  track(events, check_sp) -> Tracker   doc/calls.md's rules applied to one processor's
      instructions; Tracker.folded(), .folded_time(), .profile(), .tree() and .counts are the
      views and stats.json's figures they must give.

The model follows "The tracker" and "Views" of doc/calls.md: an event's effect is decided by the
next event's pc; calls push a frame entered at the callee's first instruction; a return closes
the innermost frame whose return address is where control went, unwinding those above it (one
resynchronisation), else begins a new root (only the root open) or counts as unmatched; a taken
jump to the innermost return address is a return, to another function's entry (an address some
call entered before: no symbols here) a tail call; a plain instruction not followed by its
successor is a discontinuity; with check_sp, a higher stack pointer after a return or a jump
closes the frames whose call had a lower one (and after an unmatched return those with the same);
4096 calls pending at most, further calls not pushed and their returns absorbed. Every
instruction counts to the innermost frame when it runs; its time lasts until the next one's.

Limits of the model (doc/calls.md describes more than it does): functions are named by entry
address only (no program images: calls_expect.py name checks the naming by symbols from the
address-named views); the bounds on distinct functions, stacks and listed calls are not
modelled (the traces checked stay far below them); MIPS code in QEMU4V (delay slots, $sp on
register lines) is not read: its known program is checked against the program that wrote it;
the ARM classifier knows the mnemonics doc/calls.md's table names, as Fast Models and the
generated traces spell them, not every AArch32 form that writes pc."""

import struct

import cis501_expect
import tarmac_expect
import tt6_expect
from cis501_families import family_of

PLAIN, CALL, RETURN, TRANSFER = "plain", "call", "return", "transfer"
MAX_DEPTH = 4096  # calls pending (doc/calls.md, "Bounds on memory")
MARKS = ("root", "mid-function", "tail-call", "tail-called-out", "unwound", "no-return")


class Event:
    __slots__ = ("pc", "size", "kind", "insn_no", "target", "return_pc", "sp", "time")

    def __init__(self, pc, size, kind, insn_no, target=None, return_pc=None, sp=None,
                 time=None):
        self.pc, self.size, self.kind, self.insn_no = pc, size, kind, insn_no
        self.target, self.return_pc, self.sp, self.time = target, return_pc, sp, time


# ---- kinds, per instruction set (doc/calls.md's table)

def ppc_kind(word):
    """PowerPC: LK = 1 on b, bc, bclr, bcctr, bctar calls; bclr without it returns; sc, rfi,
    rfid and the other branches jump."""
    major, xo, link = word >> 26, (word >> 1) & 0x3FF, word & 1
    if major in (16, 18):
        return CALL if link else TRANSFER
    if major == 17:
        return TRANSFER
    if major == 19 and xo == 16:
        return CALL if link else RETURN
    if major == 19 and xo in (528, 560):
        return CALL if link else TRANSFER
    if major == 19 and xo in (18, 50):
        return TRANSFER
    return PLAIN


CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge",
              "lt", "gt", "le", "al")


def _strip_condition(m, base):
    """m without its condition code when m is base plus one (or base itself); else None."""
    if m == base:
        return base
    if m.startswith(base) and m[len(base):] in CONDITIONS:
        return base
    return None


def arm_kind(iset, disassembly):
    """ARM, from the disassembly (any case, .W/.N ignored) and the ISET: 'O' (or none)
    AArch64, else AArch32 Arm or Thumb."""
    words = disassembly.lower().replace(".w ", " ").replace(".n ", " ").split(None, 1)
    if not words:
        return PLAIN
    m = words[0]
    for suffix in (".w", ".n"):
        if m.endswith(suffix):
            m = m[:-len(suffix)]
    ops = [o.strip() for o in words[1].split(",")] if len(words) > 1 else []
    if iset in ("O", "o", None):
        if m in ("bl", "blr", "blraa", "blraaz", "blrab", "blrabz"):
            return CALL
        if m in ("ret", "retaa", "retab"):
            return RETURN
        if (m in ("b", "br", "braa", "braaz", "brab", "brabz", "cbz", "cbnz", "tbz", "tbnz",
                  "eret", "svc", "hvc", "smc") or m.startswith("b.") or m.startswith("bc.")):
            return TRANSFER
        return PLAIN
    if _strip_condition(m, "b"):  # before BL: BLS, BLT, BLE are B with a condition
        return TRANSFER
    if _strip_condition(m, "bl") or _strip_condition(m, "blx"):
        return CALL
    if _strip_condition(m, "bx"):
        return RETURN if ops[:1] == ["lr"] else TRANSFER
    text = words[1] if len(words) > 1 else ""
    in_list = "pc" in text[text.find("{"):] if "{" in text else False
    if m.startswith("pop") or m.startswith("ldm"):
        return RETURN if in_list else PLAIN
    if m.startswith("ldr") and ops[:1] == ["pc"]:
        return RETURN if text.replace(" ", "")[3:].startswith("[sp") else TRANSFER
    if (m.startswith("mov") and ops[:2] == ["pc", "lr"]):
        return RETURN
    if m in ("cbz", "cbnz", "tbb", "tbh", "svc", "hvc", "smc", "eret") or ops[:1] in (["pc"],
                                                                                       ["r15"]):
        return TRANSFER
    return PLAIN


# ---- readers: a trace's instructions, per processor

def tt6_events(path, fmt):
    with open(path, "rb") as f:
        recs, _, _ = tt6_expect.reference_decode(f.read(), fmt)
    out = []
    for r in recs:
        if r.kind not in tt6_expect.INSTRUCTIONS:
            continue
        if r.kind != "flow":
            out.append(Event(r.pc, 4, PLAIN, len(out) + 1))
            continue
        nxt = r.get("next")
        taken = not (r.get("cond") and nxt == (r.pc + 4) & 0xFFFFFFFF)
        out.append(Event(r.pc, 4, ppc_kind(r.word) if taken else PLAIN, len(out) + 1,
                         target=nxt))
    return {0: out}


def full_events(path):
    """FULL, as full_model.py packs it: the magic, then records of the opcode and the thread
    state before the instruction (pc, msr, r0..r31...); a branch's target is the next
    record's pc, its stack pointer r1. The packed layout only."""
    with open(path, "rb") as f:
        data = f.read()
    size = 1004
    recs = [struct.unpack_from(">II8xI", data, o) for o in range(4, len(data) - size + 1, size)]
    out = []
    for i, (word, pc, r1) in enumerate(recs):
        nxt = recs[i + 1][1] if i + 1 < len(recs) else None
        kind, target = PLAIN, None
        if tt6_expect.is_flow(word >> 26, (word >> 1) & 0x3FF):
            taken = not (tt6_expect.is_conditional(word) and nxt == pc + 4)
            kind, target = ppc_kind(word) if taken else PLAIN, nxt
        out.append(Event(pc, 4, kind, i + 1, target=target, sp=r1))
    return {0: out}


def cis501_events(path):
    """An x86 instruction is its macro-op: a record whose Uop is 1 and those after it; its
    size from its fall-through (1 when that says 0 or more than 15); CALL* call, RET*
    return (cis501_families.txt), any other macro-op with a branch micro-op (T or N) jumps."""
    records, _, _, _ = cis501_expect.analyse(path, None)
    out = []
    for vals, _, _ in records:
        uop, pc, branch, fall, macro = vals[0], vals[1], vals[6], vals[10], vals[12]
        if uop == 1 or not out:
            if uop != 1 and branch == "-":
                continue  # micro-ops of a macro-op whose start the trace lacks
            size = fall - pc
            fam = family_of(macro)
            kind = CALL if fam == "call" else RETURN if fam == "ret" else PLAIN
            out.append(Event(pc, size if 0 < size < 16 else 1, kind, len(out) + 1))
        if branch != "-" and out[-1].kind == PLAIN:
            out[-1].kind = TRANSFER
    return {0: out}


def tarmac_events(path):
    """IT and IS lines, on their processor (its own, else the last instruction's, else 0);
    IS lines are plain; the size is the opcode's bytes; times of 0 and more."""
    with open(path, "rb") as f:
        lines = tarmac_expect.split_lines(f.read())
    out, last_cpu = {}, 0
    for line in lines:
        r = tarmac_expect.read_line(line)
        if not r or r[0] not in ("executed", "condition_failed"):
            continue
        cls, cpu, time, fields = r[0], r[1], r[2], r[3]
        cpu = last_cpu if cpu is None else cpu
        last_cpu = cpu
        _, _, opcode, iset, _, dis = fields.split(b" ", 5)
        ev = out.setdefault(cpu, [])
        kind = PLAIN
        if cls == "executed":
            kind = arm_kind(iset.decode(), dis.decode("latin-1"))
        t = int(time[0]) if time and int(time[0]) >= 0 else None
        ev.append(Event(r[5]["pc"], len(opcode) // 2 or 4, kind, len(ev) + 1, time=t))
    return out


def events_of(fmt, path):
    if fmt in ("tt6", "tt6e"):
        return tt6_events(path, fmt)
    if fmt == "full":
        return full_events(path)
    if fmt == "cis501":
        return cis501_events(path)
    if fmt in ("tarmac", "qemu4v"):
        return tarmac_events(path)
    raise ValueError("no reader for " + fmt)


# ---- the tracker

class Frame:
    __slots__ = ("func", "stack", "return_pc", "sp", "record")

    def __init__(self, func, stack, return_pc, sp, record):
        self.func, self.stack, self.return_pc, self.sp = func, stack, return_pc, sp
        self.record = record


class Tracker:
    def __init__(self, check_sp=False):
        self.check_sp = check_sp
        self.frames = []
        self.overflow = 0
        self.called = set()  # functions a call entered: a jump to one is a tail call
        self.functions = []  # in order of first entry
        self.entries = {}
        self.self_insns, self.self_time = {}, {}  # stack (tuple of functions) -> cost
        self.records = []  # [function, depth, entry event, exit event, marks]
        self.prev = None
        self.has_time = False
        self.counts = dict.fromkeys((
            "instructions", "calls", "returns", "tail_calls", "resynchronisations",
            "frames_unwound", "unmatched_returns", "returns_past_root", "never_returned",
            "discontinuities", "max_depth", "depth_overflows"), 0)

    def _open(self, e, return_pc, sp, caller, marks):
        f = e.pc
        if f not in self.entries:
            self.functions.append(f)
            self.entries[f] = 0
        self.entries[f] += 1
        if "root" not in marks:
            self.called.add(f)
        self.counts["max_depth"] = max(self.counts["max_depth"], len(self.frames))
        self.records.append([f, len(self.frames), e, None, list(marks)])
        self.frames.append(Frame(f, caller + (f,), return_pc, sp, len(self.records) - 1))

    def _close(self, mark=None):
        fr = self.frames.pop()
        rec = self.records[fr.record]
        rec[3] = self.prev
        if mark:
            rec[4].append(mark)
        return fr

    def _unwind_to(self, keep):
        """Closes the frames above index keep: one resynchronisation."""
        if len(self.frames) <= keep + 1:
            return
        self.counts["resynchronisations"] += 1
        while len(self.frames) > keep + 1:
            self._close("unwound")
            self.counts["frames_unwound"] += 1
        self.overflow = 0

    def _sp(self, sp, left):
        if not self.check_sp or sp is None:
            return
        keep = len(self.frames) - 1
        while keep > 0 and self.frames[keep].sp is not None and (
                sp > self.frames[keep].sp or (left and sp == self.frames[keep].sp)):
            keep -= 1
        self._unwind_to(keep)

    def _return(self, e):
        if self.overflow:
            self.overflow -= 1
            return True
        for k in range(len(self.frames) - 1, 0, -1):
            if self.frames[k].return_pc == e.pc:
                self._unwind_to(k)
                self._close()
                self.counts["returns"] += 1
                return True
        return False

    def _jump(self, e):
        top = self.frames[-1]
        if len(self.frames) > 1 and not self.overflow and top.return_pc == e.pc:
            self._close()
            self.counts["returns"] += 1
        elif e.pc in self.called and e.pc != top.func:
            root = len(self.frames) == 1
            self._close("tail-called-out")
            self.counts["tail_calls"] += 1
            self._open(e, top.return_pc, top.sp, top.stack[:-1],
                       ["root", "tail-call"] if root else ["tail-call"])
        self._sp(e.sp, False)

    def _resolve(self, p, e):
        nxt = p.pc + p.size
        if p.kind == PLAIN:  # it should be followed by its successor, or its known target
            if e.pc != nxt or (p.target is not None and p.target != e.pc):
                self.counts["discontinuities"] += 1
            return
        if p.target is not None and p.target != e.pc:
            self.counts["discontinuities"] += 1
        if p.kind == CALL:
            ret = p.return_pc if p.return_pc is not None else nxt
            if e.pc == ret:
                return
            if len(self.frames) - 1 >= MAX_DEPTH:
                self.overflow += 1
                self.counts["depth_overflows"] += 1
                return
            self.counts["calls"] += 1
            self._open(e, ret, p.sp, self.frames[-1].stack, [])
            return
        if e.pc == nxt:
            return  # a return or jump not taken
        if p.kind == TRANSFER:
            self._jump(e)
        elif self._return(e):
            self._sp(e.sp, False)
        elif len(self.frames) == 1:
            self._close()
            self.counts["returns_past_root"] += 1
            self._open(e, None, None, (), ["root"])
        else:
            self.counts["unmatched_returns"] += 1
            self._sp(e.sp, True)

    def add(self, e):
        if self.prev is None:
            self._open(e, None, None, (), ["root"])
        else:
            self._resolve(self.prev, e)
        stack = self.frames[-1].stack
        self.self_insns[stack] = self.self_insns.get(stack, 0) + 1
        self.counts["instructions"] += 1
        if e.time is not None:
            self.has_time = True
            p = self.prev
            if p is not None and p.time is not None and e.time >= p.time:
                self.self_time[self.prev_stack] = (self.self_time.get(self.prev_stack, 0) +
                                                   e.time - p.time)
        self.prev, self.prev_stack = e, stack

    def finish(self):
        while len(self.frames) > 1:
            self._close("no-return")
            self.counts["never_returned"] += 1
        if self.frames:
            self._close()
        self.counts["functions"] = len(self.functions)
        return self

    # ---- views

    @staticmethod
    def name(f):
        return "0x%x" % f

    def _folded(self, cost):
        """Depth-first: a stack before its callees, callees in byte order of name."""
        stacks = set()
        for s in list(self.self_insns) + list(self.self_time):
            for k in range(1, len(s) + 1):
                stacks.add(s[:k])
        children = {}
        for s in stacks:
            children.setdefault(s[:-1], []).append(s)
        out = []

        def walk(s):
            if s and cost.get(s):
                out.append("%s %d" % (";".join(self.name(f) for f in s), cost[s]))
            for c in sorted(children.get(s, []), key=lambda c: self.name(c[-1]).encode()):
                walk(c)
        walk(())
        return out

    def folded(self):
        return self._folded(self.self_insns)

    def folded_time(self):
        return self._folded(self.self_time)

    def profile(self):
        """profile.txt's lines: inclusive counts an instruction once per function on its
        stack (the outermost activation), exclusive where it is last; by inclusive, then
        exclusive, descending, then first entry."""
        incl, excl, incl_t, excl_t = {}, {}, {}, {}
        for table, i, x in ((self.self_insns, incl, excl), (self.self_time, incl_t, excl_t)):
            for s, n in table.items():
                x[s[-1]] = x.get(s[-1], 0) + n
                for f in set(s):
                    i[f] = i.get(f, 0) + n
        order = sorted(range(len(self.functions)), key=lambda k: (
            -incl.get(self.functions[k], 0), -excl.get(self.functions[k], 0), k))
        lines = ["# %d instructions, %d functions, by inclusive instructions" %
                 (self.counts["instructions"], len(self.functions)),
                 "#%13s %14s %10s" % ("inclusive", "exclusive", "calls") +
                 (" %14s %14s" % ("incl_time", "excl_time") if self.has_time else "") +
                 "  function"]
        for k in order:
            f = self.functions[k]
            line = "%14d %14d %10d" % (incl.get(f, 0), excl.get(f, 0), self.entries[f])
            if self.has_time:
                line += " %14d %14d" % (incl_t.get(f, 0), excl_t.get(f, 0))
            lines.append(line + "  " + self.name(f))
        return lines

    def tree(self):
        def end(e):
            return "#%d @0x%x%s" % (e.insn_no, e.pc, "" if e.time is None else " t%d" % e.time)
        lines = ["# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]"]
        for f, depth, entry, exit_, marks in self.records:
            shown = [m for m in MARKS if m in marks]
            lines.append("%s%s  %s -> %s%s" % ("  " * depth, self.name(f), end(entry), end(exit_),
                                                "  [%s]" % " ".join(shown) if shown else ""))
        return lines


def track(events, check_sp=False):
    t = Tracker(check_sp)
    for e in events:
        t.add(e)
    return t.finish()
