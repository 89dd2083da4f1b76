"""A small PowerPC program model that writes FULL traces, and the views tracemount must show for
them, computed from the model's own register states (never from tracemount's code or output).

  full_model.py gen OUT [--steps N] [--seed S] [--layout L] [--jump-at K] [--loop]
      runs the program for N instructions and writes the FULL trace: the magic, then per
      instruction its opcode and the registers before it. L: packed (1004-byte records, the
      default), pad_opcode or pad_thread (1008 bytes, 4 bytes of padding after the opcode or
      after the thread state). --jump-at K: before instruction K the model takes an
      "interrupt": the PC moves to 0x00030000 without a branch (a discontinuity).
      --loop: OUT gets only records (no magic) and N is rounded up to whole passes of the main
      loop, so that copies of the file can be concatenated after one magic word (scripts/bench).
  full_model.py expect DIR [same options]
      writes the expected views into DIR: dump.masked (dump.txt with the TEXT column masked),
      regs/{gpr,fpr,vr,spr}.txt, convert/{tt6,tt6e,din}, class/CLASS.masked, class/CLASS.full,
      pcs (one PC per line), stats.json (the keys the model knows), errors (offsets of
      expected problems), accesses.json (plots/addresses.svg's data: the fetches, reads and
      writes, and per 4 KiB page touched, keyed "0x" + its first address in hex, the three
      counts), registers.json (plots/registers.svg's data: the changes each register shows
      from one record to the next, for those that change, by name: r0-r31, f0-f31, v0-v31 and
      the special registers).

The model executes every instruction with PowerPC semantics for what tracemount derives from
registers (effective addresses, branch outcomes) and plausible effects for the rest; each record
holds the state before its instruction, as doc/formats.md says a FULL record does."""

import json
import os
import struct
import sys

MAGIC = 0xA1118E17
LAYOUTS = {"packed": (1004, 4, 164, 428), "pad_opcode": (1008, 8, 168, 432),
           "pad_thread": (1008, 4, 168, 432)}
LAYOUT_NAMES = {"packed": "packed", "pad_opcode": "padded_after_opcode",
                "pad_thread": "padded_after_thread_state"}
SPRS = ["msr", "cr", "xer", "lr", "ctr", "mq", "vrsave", "fpscr", "vscr", "vrvalid"]
M32 = 0xFFFFFFFF


def s16(v):
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


# Instruction words.
def d_form(op, rt, ra, d):
    return op << 26 | rt << 21 | ra << 16 | (d & 0xFFFF)


def x_form(rt, ra, rb, xo, rc=0):
    return 31 << 26 | rt << 21 | ra << 16 | rb << 11 | xo << 1 | rc


def spr_field(spr):
    return ((spr & 31) << 16) | ((spr >> 5) << 11)


class Insn:
    """An instruction: its word, class (by the TT6E macros), and flags for the views."""

    def __init__(self, word, cls, mn, **kw):
        self.word, self.cls, self.mn = word, cls, mn
        self.twi = kw.get("twi", False)
        self.cache = kw.get("cache", False)  # dcbx/icbi: MEMORY in TT6E, COMPUTE in TT6
        self.unit = kw.get("unit", "other")
        self.access = kw.get("access")  # "load", "store", "touch", "zero", "flush"
        self.ext = kw.get("ext")  # memext third word: "xer" or "ctl"


def float_bits(x):
    return struct.unpack(">Q", struct.pack(">d", x))[0]


def bits_float(b):
    return struct.unpack(">d", struct.pack(">Q", b))[0]


class Machine:
    def __init__(self, seed):
        self.gpr = [(0x1000 * n + seed * 7) & M32 for n in range(32)]
        self.gpr[1] = 0x7FFF0000  # stack
        self.gpr[2] = 0x00020000  # data
        self.gpr[6] = 0x40  # vector index
        self.gpr[9] = 0x100  # lswx offset
        self.gpr[10] = 7  # XER byte count
        self.gpr[11] = 0x01020304  # dst control
        self.gpr[3] = seed & 0xFF
        self.fpr = [float_bits(n * 0.5 + seed) for n in range(32)]
        self.fpr[5] = float_bits(0.1)
        self.fpr[6] = float_bits(-2.5e-300)
        self.vr = [tuple((n * 0x01010101 + k) & M32 for k in range(4)) for n in range(32)]
        self.cr, self.xer, self.lr, self.ctr, self.mq = 0x22000000, 0x20000000, 0, 0, 0
        self.vrsave, self.msr, self.fpscr, self.vscr, self.vrvalid = 0, 0xD032, 0, 0x10000, 0
        self.mem = {}
        self.pc = 0

    def load(self, addr, n):
        return bytes(self.mem.get((addr + k) & M32, ((addr + k) * 131 + 7) & 0xFF)
                     for k in range(n))

    def store(self, addr, data):
        for k, b in enumerate(data):
            self.mem[(addr + k) & M32] = b

    def ra0(self, ra):
        return self.gpr[ra] if ra else 0

    def set_cr0(self, v):
        v &= M32
        sv = v - (1 << 32) if v & 0x80000000 else v
        bits = 8 if sv < 0 else 4 if sv > 0 else 2
        bits |= 1 if self.xer & 0x80000000 else 0
        self.cr = (self.cr & 0x0FFFFFFF) | bits << 28

    def state(self):
        return dict(pc=self.pc, gpr=list(self.gpr), fpr=list(self.fpr), vr=list(self.vr),
                    spr=[self.msr, self.cr, self.xer, self.lr, self.ctr, self.mq, self.vrsave,
                         self.fpscr, self.vscr, self.vrvalid])


def branch_taken(m, bo, bi, decrement=True):
    """PowerPC bc semantics; decrements CTR when BO says so (not for bcctr)."""
    ctr_ok = True
    if decrement and not bo & 4:
        m.ctr = (m.ctr - 1) & M32
        ctr_ok = (m.ctr != 0) != bool(bo & 2)
    cond_ok = bool(bo & 16) or ((m.cr >> (31 - bi)) & 1) == ((bo >> 3) & 1)
    return ctr_ok and cond_ok


MAIN = 0x00010000
FUNC = 0x00012000
FUNC2 = 0x00012100
FUNC3 = 0x00012200
HANDLER = 0x00030000


def program():
    """The program: address -> (Insn, effect). An effect runs the instruction on the machine
    and returns (ea, size, third word) for memory instructions."""
    prog = {}
    pc = [MAIN]

    def at(addr):
        pc[0] = addr

    def emit(insn, effect):
        prog[pc[0]] = (insn, effect)
        pc[0] += 4

    def compute(word, mn, fn, **kw):
        emit(Insn(word, "compute", mn, **kw), fn)

    def mem(word, mn, access, fn, cls="memory", **kw):
        emit(Insn(word, cls, mn, access=access, **kw), fn)

    def set_gpr(r, v):
        def fn(m):
            m.gpr[r] = v(m) & M32
        return fn

    # --- main loop ---
    at(MAIN)
    compute(d_form(14, 3, 3, 1), "addi", set_gpr(3, lambda m: m.gpr[3] + 1))

    def lwz(m):
        ea = (m.ra0(2) + 8) & M32
        m.gpr[4] = int.from_bytes(m.load(ea, 4), "big")
        return ea, 4
    mem(d_form(32, 4, 2, 8), "lwz", "load", lwz)

    def stw(m):
        ea = (m.ra0(2) + 12) & M32
        m.store(ea, m.gpr[3].to_bytes(4, "big"))
        return ea, 4
    mem(d_form(36, 3, 2, 12), "stw", "store", stw)

    def lbz(m):
        ea = (m.ra0(1) - 3) & M32
        m.gpr[5] = m.load(ea, 1)[0]
        return ea, 1
    mem(d_form(34, 5, 1, -3), "lbz", "load", lbz)

    def lha(m):  # rA = 0: the displacement alone
        ea = s16(0x7FF0) & M32
        v = int.from_bytes(m.load(ea, 2), "big")
        m.gpr[7] = (v - 0x10000 if v & 0x8000 else v) & M32
        return ea, 2
    mem(d_form(42, 7, 0, 0x7FF0), "lha", "load", lha)

    def lwzu(m):
        ea = (m.gpr[2] + 4) & M32
        m.gpr[8] = int.from_bytes(m.load(ea, 4), "big")
        m.gpr[2] = ea
        return ea, 4
    mem(d_form(33, 8, 2, 4), "lwzu", "load", lwzu)

    def stwu(m):
        ea = (m.gpr[1] - 16) & M32
        m.store(ea, m.gpr[1].to_bytes(4, "big"))
        m.gpr[1] = ea
        return ea, 4
    mem(d_form(37, 1, 1, -16), "stwu", "store", stwu)

    def lfd(m):
        ea = (m.ra0(2) + 16) & M32
        m.fpr[1] = int.from_bytes(m.load(ea, 8), "big")
        return ea, 8
    mem(d_form(50, 1, 2, 16), "lfd", "load", lfd, unit="fp")

    def fadd(m):
        a, b = bits_float(m.fpr[5]), bits_float(m.fpr[2])
        m.fpr[2] = float_bits(a + b)
        m.fpscr = (m.fpscr & ~0x1F000) | (0x4000 if a + b > 0 else 0x8000)
    compute(63 << 26 | 2 << 21 | 5 << 16 | 2 << 11 | 21 << 1, "fadd", fadd, unit="fp")

    def fmul(m):
        m.fpr[3] = float_bits(bits_float(m.fpr[2]) * bits_float(m.fpr[6]))
    compute(63 << 26 | 3 << 21 | 2 << 16 | 6 << 6 | 25 << 1, "fmul", fmul, unit="fp")

    def stfd(m):
        ea = (m.ra0(2) + 24) & M32
        m.store(ea, m.fpr[2].to_bytes(8, "big"))
        return ea, 8
    mem(d_form(54, 2, 2, 24), "stfd", "store", stfd, unit="fp")

    def lfdx(m):
        ea = (m.ra0(2) + m.gpr[9]) & M32
        m.fpr[4] = int.from_bytes(m.load(ea, 8), "big")
        return ea, 8
    mem(x_form(4, 2, 9, 599), "lfdx", "load", lfdx, unit="fp")

    def lvx(m):
        ea = (m.ra0(2) + m.gpr[6]) & M32
        data = m.load(ea & ~15, 16)
        m.vr[1] = struct.unpack(">4I", data)
        m.vrvalid |= 1 << 1
        return ea, 16
    mem(x_form(1, 2, 6, 103), "lvx", "load", lvx, unit="vector")

    def vadd(m):
        a = struct.pack(">4I", *m.vr[1])
        b = struct.pack(">4I", *m.vr[2])
        m.vr[2] = struct.unpack(">4I", bytes((x + y) & 0xFF for x, y in zip(a, b)))
        m.vrvalid |= 1 << 2
    compute(4 << 26 | 2 << 21 | 1 << 16 | 2 << 11, "vaddubm", vadd, unit="vector")

    def stvx(m):
        ea = (m.ra0(2) + m.gpr[6]) & M32
        m.store(ea & ~15, struct.pack(">4I", *m.vr[2]))
        return ea, 16
    mem(x_form(2, 2, 6, 231), "stvx", "store", stvx, unit="vector")

    def lmw(m):
        ea = (m.ra0(2) + 64) & M32
        for k, r in enumerate(range(28, 32)):
            m.gpr[r] = int.from_bytes(m.load(ea + 4 * k, 4), "big")
        return ea, 16
    mem(d_form(46, 28, 2, 64), "lmw", "load", lmw)

    def stmw(m):
        ea = (m.ra0(1) + 128) & M32
        for k, r in enumerate(range(29, 32)):
            m.store(ea + 4 * k, m.gpr[r].to_bytes(4, "big"))
        return ea, 12
    mem(d_form(47, 29, 1, 128), "stmw", "store", stmw)

    def load_string(m, ea, n, rt):
        data = m.load(ea, n) + bytes(-n % 4)
        for k in range(0, len(data), 4):
            m.gpr[(rt + k // 4) % 32] = int.from_bytes(data[k:k + 4], "big")

    def lswi(m):
        ea = m.ra0(2)
        load_string(m, ea, 7, 20)
        return ea, 7
    mem(x_form(20, 2, 7, 597), "lswi", "load", lswi)

    compute(x_form(10, 0, 0, 467) | spr_field(1), "mtxer",
            lambda m: setattr(m, "xer", (m.xer & ~0x7F) | (m.gpr[10] & 0x7F)))

    def lswx(m):
        ea = (m.ra0(2) + m.gpr[9]) & M32
        n = m.xer & 0x7F
        load_string(m, ea, n, 24)
        return ea, n, m.xer
    mem(x_form(24, 2, 9, 533), "lswx", "load", lswx, cls="memext", ext="xer")

    def stswx(m):
        ea = (m.ra0(1) + m.gpr[9]) & M32
        n = m.xer & 0x7F
        m.store(ea, b"".join(m.gpr[(12 + k) % 32].to_bytes(4, "big") for k in range(2))[:n])
        return ea, n, m.xer
    mem(x_form(12, 1, 9, 661), "stswx", "store", stswx, cls="memext", ext="xer")

    def dst(m):
        return m.gpr[2], 0, m.gpr[11]
    mem(x_form(1, 2, 11, 342), "dst", "touch", dst, cls="memext", ext="ctl", unit="vector")

    def dcbz(m):
        ea = (m.ra0(0) + m.gpr[2]) & M32
        m.store(ea & ~31, bytes(32))
        return ea, 0
    mem(x_form(0, 0, 2, 1014), "dcbz", "zero", dcbz, cache=True)

    def dcbt(m):
        return (m.ra0(1) + m.gpr[9]) & M32, 0
    mem(x_form(0, 1, 9, 278), "dcbt", "touch", dcbt, cache=True)

    def icbi(m):
        return (m.ra0(2) + m.gpr[6]) & M32, 0
    mem(x_form(0, 2, 6, 982), "icbi", "flush", icbi, cache=True)

    compute(3 << 26 | 0 << 21 | 3 << 16 | 0, "twi", lambda m: None, twi=True)
    compute(x_form(12, 0, 0, 467) | spr_field(256), "mtvrsave",
            lambda m: setattr(m, "vrsave", m.gpr[12]))
    compute(x_form(3, 0, 0, 467) | spr_field(0), "mtmq", lambda m: setattr(m, "mq", m.gpr[3]))

    def mtvscr(m):
        m.vscr = m.vr[2][3] & 0x10001
    compute(4 << 26 | 2 << 11 | 1604, "mtvscr", mtvscr, unit="vector")
    # counted loop: li r12, 3; mtctr r12; loop: addi r13, r13, 2; bdnz loop
    compute(d_form(14, 12, 0, 3), "li", set_gpr(12, lambda m: 3))
    compute(x_form(12, 0, 0, 467) | spr_field(9), "mtctr", lambda m: setattr(m, "ctr", m.gpr[12]))
    loop = pc[0]
    compute(d_form(14, 13, 13, 2), "addi", set_gpr(13, lambda m: m.gpr[13] + 2))
    emit(Insn(16 << 26 | 16 << 21 | ((loop - pc[0]) & 0xFFFC), "flow", "bdnz"),
         lambda m, here=pc[0], loop=loop: loop if branch_taken(m, 16, 0) else here + 4)

    # andi. r16, r3, 3; beq +8 (skip one addi)
    def andi(m):
        m.gpr[16] = m.gpr[3] & 3
        m.set_cr0(m.gpr[16])
    compute(28 << 26 | 3 << 21 | 16 << 16 | 3, "andi.", andi)
    here = pc[0]
    emit(Insn(16 << 26 | 12 << 21 | 2 << 16 | 8, "flow", "beq"),
         lambda m, here=here: here + 8 if branch_taken(m, 12, 2) else here + 4)
    compute(d_form(14, 17, 17, 1), "addi", set_gpr(17, lambda m: m.gpr[17] + 1))
    # bl FUNC
    here = pc[0]

    def bl(m, here=here):
        m.lr = here + 4
        return FUNC
    emit(Insn(18 << 26 | ((FUNC - here) & 0x3FFFFFC) | 1, "flow", "bl"), bl)
    # lis r15, FUNC2@h; ori r15, r15, FUNC2@l; mtctr r15; bctrl
    compute(d_form(15, 15, 0, FUNC2 >> 16), "lis", set_gpr(15, lambda m: (FUNC2 >> 16) << 16))
    compute(d_form(24, 15, 15, FUNC2 & 0xFFFF), "ori",
            set_gpr(15, lambda m: m.gpr[15] | (FUNC2 & 0xFFFF)))
    compute(x_form(15, 0, 0, 467) | spr_field(9), "mtctr", lambda m: setattr(m, "ctr", m.gpr[15]))
    here = pc[0]

    def bctrl(m, here=here):
        m.lr = here + 4
        return m.ctr & ~3
    emit(Insn(19 << 26 | 20 << 21 | 528 << 1 | 1, "flow", "bctrl"), bctrl)
    # bl FUNC3 (a conditional return)
    here = pc[0]

    def bl3(m, here=here):
        m.lr = here + 4
        return FUNC3
    emit(Insn(18 << 26 | ((FUNC3 - here) & 0x3FFFFFC) | 1, "flow", "bl"), bl3)
    here = pc[0]

    def sc(m, here=here):
        m.gpr[3] = (m.gpr[3] + 0x100) & M32  # the kernel's return value ...
        m.msr ^= 0x2000  # ... and a changed MSR bit
        return here + 4
    emit(Insn(0x44000002, "flow", "sc"), sc)
    here = pc[0]
    emit(Insn(18 << 26 | ((MAIN - here) & 0x3FFFFFC), "flow", "b"), lambda m: MAIN)

    # FUNC: addi r14, r14, 1; blr
    at(FUNC)
    compute(d_form(14, 14, 14, 1), "addi", set_gpr(14, lambda m: m.gpr[14] + 1))
    emit(Insn(0x4E800020, "flow", "blr"), lambda m: m.lr & ~3)
    # FUNC2: mtfsfi 7, 1; blr
    at(FUNC2)

    def mtfsfi(m):
        m.fpscr = (m.fpscr & ~0xF) | 1
    compute(63 << 26 | 7 << 23 | 1 << 12 | 134 << 1, "mtfsfi", mtfsfi, unit="fp")
    emit(Insn(0x4E800020, "flow", "blr"), lambda m: m.lr & ~3)
    # FUNC3: andi. r18, r3, 1; beqlr; addi r19, r19, 1; blr
    at(FUNC3)

    def andi1(m):
        m.gpr[18] = m.gpr[3] & 1
        m.set_cr0(m.gpr[18])
    compute(28 << 26 | 3 << 21 | 18 << 16 | 1, "andi.", andi1)
    here = pc[0]
    emit(Insn(0x4D820020, "flow", "beqlr"),
         lambda m, here=here: (m.lr & ~3) if branch_taken(m, 12, 2) else here + 4)
    compute(d_form(14, 19, 19, 1), "addi", set_gpr(19, lambda m: m.gpr[19] + 1))
    emit(Insn(0x4E800020, "flow", "blr"), lambda m: m.lr & ~3)
    # HANDLER: an interrupt handler the model jumps into (--jump-at): addi r21; b MAIN
    at(HANDLER)
    compute(d_form(14, 21, 21, 1), "addi", set_gpr(21, lambda m: m.gpr[21] + 1))
    here = pc[0]
    emit(Insn(18 << 26 | ((MAIN - here) & 0x3FFFFFC), "flow", "b"), lambda m: MAIN)
    return prog


class Step:
    __slots__ = ("state", "insn", "ea", "size", "w2", "next")


def run(steps, seed, jump_at=None, loop=False):
    """Executes the program; returns the steps: the state before, the instruction, and what
    it did."""
    prog = program()
    m = Machine(seed)
    m.pc = MAIN
    out = []
    while len(out) < steps or (loop and m.pc != MAIN):
        if jump_at is not None and len(out) == jump_at:
            m.pc = HANDLER
        insn, effect = prog[m.pc]
        st = Step()
        st.state = m.state()
        st.insn = insn
        st.ea = st.size = st.w2 = None
        if insn.cls == "flow":
            st.next = effect(m) & M32
        else:
            res = effect(m)
            if insn.cls in ("memory", "memext"):
                st.ea, st.size = res[0] & M32, res[1]
                if insn.cls == "memext":
                    st.w2 = res[2] & M32
            st.next = (m.pc + 4) & M32
        m.pc = st.next
        out.append(st)
    return out


def pack_record(st, layout):
    size, _, _, _ = LAYOUTS[layout]
    s = st.state
    thread = struct.pack(">40I", s["pc"], s["spr"][0], *s["gpr"], s["spr"][1], s["spr"][2],
                         s["spr"][3], s["spr"][4], s["spr"][5], s["spr"][6])
    fp = struct.pack(">32QII", *s["fpr"], 0, s["spr"][7])
    vec = b"".join(struct.pack(">4I", *v) for v in s["vr"])
    vec += struct.pack(">4I", 0, 0, 0, s["spr"][8]) + bytes(16)
    vec += struct.pack(">I", s["spr"][9]) + bytes(28)
    pad = b"\x55\x55\x55\x55"
    op = struct.pack(">I", st.insn.word)
    if layout == "packed":
        rec = op + thread + fp + vec
    elif layout == "pad_opcode":
        rec = op + pad + thread + fp + vec
    else:
        rec = op + thread + pad + fp + vec
    assert len(rec) == size
    return rec


def fmt_double(bits):
    x = bits_float(bits)
    if x != x:
        return "-nan" if bits >> 63 else "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    for digits in (15, 16, 17):
        text = "%.*g" % (digits, x)
        if float(text) == x:
            return text
    return text


def changes(prev, cur):
    if prev is None:
        return ""
    out = []
    for n in range(32):
        if cur["gpr"][n] != prev["gpr"][n]:
            out.append(" r%d=0x%08x" % (n, cur["gpr"][n]))
    for n in range(32):
        if cur["fpr"][n] != prev["fpr"][n]:
            out.append(" f%d=%s" % (n, fmt_double(cur["fpr"][n])))
    for n in range(32):
        if cur["vr"][n] != prev["vr"][n]:
            out.append(" v%d=0x%s" % (n, "".join("%08x" % w for w in cur["vr"][n])))
    for k, name in enumerate(SPRS):
        if cur["spr"][k] != prev["spr"][k]:
            out.append(" %s=0x%08x" % (name, cur["spr"][k]))
    return "".join(out)


def dump_masked(num, st, prev):
    """The dump line with the TEXT column replaced by '|' (tt6_expect's convention)."""
    i = st.insn
    head = "%12d %08x %08x " % (num, st.state["pc"], i.word)
    if i.cls == "flow":
        tail = "flow next=%08x" % st.next
    elif i.cls == "memory":
        tail = "memory ea=%08x size=%3d" % (st.ea, st.size)
    elif i.cls == "memext":
        tail = "memext ea=%08x size=%3d %s=%08x" % (st.ea, st.size, i.ext, st.w2)
    else:
        tail = "compute"
    return head + "|" + tail + changes(prev, st.state)


def tt6_words(steps, tt6e):
    """The conversion: INITIAL_PC, then each instruction's TT6(E) record, a position record
    (escape 0x10: PC, number high, low) before an instruction the previous one does not lead
    to, and in TT6E the synthetic pair after a twi."""
    words = []
    expect = None
    for num, st in enumerate(steps):
        pc = st.state["pc"]
        if num == 0:
            words.append(pc)
        elif pc != expect:
            words += [0x10 << 16 | 3, pc, num >> 32, num & M32]
        i = st.insn
        words.append(i.word)
        if i.cls == "flow":
            words.append(st.next)
        elif i.cls in ("memory", "memext") and (tt6e or not i.cache):
            words.append(st.ea)
        if i.cls == "memext":
            words.append(st.w2)
        if tt6e and i.twi:
            words += [0x48000702, 0x700, 0x4C000064, pc + 4]
        expect = st.next
    return struct.pack(">%dI" % len(words), *words)


def din_lines(steps):
    out = []
    for st in steps:
        out.append("2 %08x\n" % st.state["pc"])
        i = st.insn
        if i.access in ("load", "store"):
            label = "0" if i.access == "load" else "1"
            n = 1 if i.mn in ("lwz", "stw", "lbz", "lha", "lwzu", "stwu", "lfd", "stfd",
                              "lfdx", "lvx", "stvx") else (st.size + 3) // 4
            out += ["%s %08x\n" % (label, st.ea + 4 * k) for k in range(n)]
        elif i.access in ("touch", "zero"):
            out.append("%s %08x\n" % ("1" if i.access == "zero" else "0", st.ea))
    return "".join(out)


def regs_line(num, st, family):
    s = st.state
    head = "%12d %08x" % (num, s["pc"])
    if family == "gpr":
        cols = ["%08x" % v for v in s["gpr"]]
    elif family == "fpr":
        cols = ["%24s" % fmt_double(v) for v in s["fpr"]]
    elif family == "vr":
        cols = ["".join("%08x" % w for w in v) for v in s["vr"]]
    else:
        cols = ["%08x" % v for v in s["spr"]]
    return head + "".join(" " + c for c in cols) + "\n"


def stats(steps, layout):
    counts = {"compute": 0, "flow": 0, "memory": 0, "memext": 0}
    written = {"gpr": 0, "fpr": 0, "vr": 0, "spr": 0}
    fp = vector = jumps = taken = not_taken = uncond = 0
    prev = None
    expect = None
    for st in steps:
        i = st.insn
        counts[i.cls] += 1
        fp += i.unit == "fp"
        vector += i.unit == "vector"
        if i.cls == "flow":
            if i.mn in ("bdnz", "beq", "beqlr"):
                if st.next == st.state["pc"] + 4:
                    not_taken += 1
                else:
                    taken += 1
            else:
                uncond += 1
        if prev is not None:
            for fam in ("gpr", "fpr", "vr", "spr"):
                written[fam] += sum(a != b for a, b in zip(prev[fam], st.state[fam]))
            jumps += st.state["pc"] != expect
        prev = st.state
        expect = st.next
    return {"records": len(steps), "classes": counts,
            "full": {"instructions": len(steps),
                     "initial_pc": "0x%08x" % steps[0].state["pc"] if steps else None,
                     "record_size": LAYOUTS[layout][0] if steps else None,
                     "layout": LAYOUT_NAMES[layout] if steps else None,
                     "registers_changed": written, "fp_instructions": fp,
                     "vector_instructions": vector, "pc_discontinuities": jumps,
                     "branches": {"conditional_taken": taken, "conditional_not_taken": not_taken,
                                  "unconditional": uncond}}}


def accesses(steps):
    """Each instruction's fetch, and a memory instruction's data access at its first byte, and
    at its last where that is on another page: a store writes, the others (loads, touches,
    cache-block operations) read, as doc/plots.md says TT6's and FULL's accesses are."""
    total = {"fetch": 0, "read": 0, "write": 0}
    pages = {}

    def add(addr, kind):
        total[kind] += 1
        counts = pages.setdefault("0x%x" % (addr >> 12 << 12), [0, 0, 0])
        counts[("fetch", "read", "write").index(kind)] += 1

    for st in steps:
        add(st.state["pc"], "fetch")
        if st.insn.cls in ("memory", "memext") and st.insn.access:
            kind = "write" if st.insn.access == "store" else "read"
            add(st.ea, kind)
            last = st.ea + (st.size - 1 if st.size else 0)
            if last >> 12 != st.ea >> 12:
                add(last, kind)
    return dict(total, pages=pages)


def register_writes(steps):
    """Each register's changes between successive records' states."""
    names = (["r%d" % n for n in range(32)] + ["f%d" % n for n in range(32)] +
             ["v%d" % n for n in range(32)] + SPRS)
    counts = [0] * len(names)
    for prev, cur in zip(steps, steps[1:]):
        values = [v for fam in ("gpr", "fpr", "vr", "spr") for v in
                  zip(prev.state[fam], cur.state[fam])]
        for k, (a, b) in enumerate(values):
            counts[k] += a != b
    return {name: n for name, n in zip(names, counts) if n}


def parse(argv):
    opts = {"steps": 1000, "seed": 1, "layout": "packed", "jump_at": None, "loop": False}
    args = []
    k = 0
    while k < len(argv):
        a = argv[k]
        if a == "--loop":
            opts["loop"] = True
        elif a in ("--steps", "--seed", "--jump-at"):
            opts[a[2:].replace("-", "_")] = int(argv[k + 1])
            k += 1
        elif a == "--layout":
            opts["layout"] = argv[k + 1]
            k += 1
        else:
            args.append(a)
        k += 1
    return args, opts


def write(path, data):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    args, o = parse(argv)
    steps = run(o["steps"], o["seed"], o["jump_at"], o["loop"])
    if cmd == "gen":
        with open(args[0], "wb") as f:
            if not o["loop"]:
                f.write(struct.pack(">I", MAGIC))
            for st in steps:
                f.write(pack_record(st, o["layout"]))
        return
    out = args[0]
    size = LAYOUTS[o["layout"]][0]
    masked, by_class = [], {"compute": [], "flow": [], "memory": [], "memext": []}
    streams = {c: [] for c in by_class}
    errors = []
    prev, expect = None, None
    for num, st in enumerate(steps):
        line = dump_masked(num, st, prev and prev.state)
        masked.append(line)
        by_class[st.insn.cls].append(line)
        if not streams[st.insn.cls]:
            streams[st.insn.cls].append(struct.pack(">I", MAGIC))
        streams[st.insn.cls].append(pack_record(st, o["layout"]))
        if prev is not None and st.state["pc"] != expect:
            errors.append(4 + num * size)
        prev, expect = st, st.next
    write(os.path.join(out, "dump.masked"), "".join(x + "\n" for x in masked))
    for c in by_class:
        write(os.path.join(out, "class", c + ".masked"), "".join(x + "\n" for x in by_class[c]))
        write(os.path.join(out, "class", c + ".full"), b"".join(streams[c]))
    for fam in ("gpr", "fpr", "vr", "spr"):
        write(os.path.join(out, "regs", fam + ".txt"),
              "".join(regs_line(n, st, fam) for n, st in enumerate(steps)))
    write(os.path.join(out, "convert", "tt6"), tt6_words(steps, False))
    write(os.path.join(out, "convert", "tt6e"), tt6_words(steps, True))
    write(os.path.join(out, "convert", "din"), din_lines(steps))
    write(os.path.join(out, "pcs"), "".join("%08x\n" % st.state["pc"] for st in steps))
    write(os.path.join(out, "stats.json"), json.dumps(stats(steps, o["layout"]), indent=1))
    write(os.path.join(out, "errors"), "".join("%d\n" % e for e in errors))
    write(os.path.join(out, "accesses.json"), json.dumps(accesses(steps), indent=1))
    write(os.path.join(out, "registers.json"), json.dumps(register_writes(steps), indent=1))


if __name__ == "__main__":
    main()
