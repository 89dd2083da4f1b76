"""Spixcounts files, and the views tracemount should show for them, computed in plain Python
from the rules of doc/formats.md (spixcounts) and never from tracemount's output.

    spix_expect.py write OUT ORDER BLOCKS [--tsize N] [--tsum N] [--nbb N] [--cut N]
                   [--tail HEX]
        writes a spixcounts file: ORDER "be" or "le"; BLOCKS "LEN:C0:C1,..." ("-" for
        SPIX_SC_BADCNT, "" for none); --tsize defaults to the lengths' sum, --nbb to the
        blocks' count; --cut keeps the first N bytes; --tail appends bytes.
    spix_expect.py views FILE OUTDIR
        writes OUTDIR/summary.txt and OUTDIR/blocks.txt expected of a spixcounts file, and
        OUTDIR/hot.txt, the bars of its plots/hot.svg as plots_check.py bars prints them.
    spix_expect.py synth FORMAT TRACE OUTDIR
        writes OUTDIR/counts.spixcounts and OUTDIR/summary.txt expected in spix/ of an
        instruction trace (FORMAT cis501, tarmac, tt6 or tt6e; TRACE may be gzip), and prints
        the number of instructions.
    spix_expect.py sum OUT FILE...
        writes the sum of spixcounts files, as sadd adds them, or prints the overflow.

The synthesized table follows the rules stated for users, instruction by instruction (the
daemon's builder works by runs): a block begins at the first executed address, where the
previous instruction of the same processor does not lead (a branch target, a PC that does not
follow), after an instruction that altered the flow or after which the PC did not follow,
after a gap, and after 255 instructions; a gap of G bytes is ceil(G/4) non-executable words
in blocks of at most 255, or one word past 256 KiB.
"""

import re
import struct
import sys

BADCNT = 0xFFFFFFFF
MAGIC = 0x62620011
MAX_GAP = 256 << 10
MAX_RUN = 4096


def encode(order, tsize, tsum, nbb, blocks):
    e = ">" if order == "be" else "<"
    out = struct.pack(e + "4I", MAGIC, tsize, tsum, nbb)
    out += bytes(b[0] for b in blocks)
    out += b"\0" * ((4 - len(blocks) % 4) % 4)
    for _, c0, c1 in blocks:
        out += struct.pack(e + "2I", c0, c1)
    return out


def parse_blocks(text):
    blocks = []
    for item in filter(None, text.split(",")):
        n, c0, c1 = item.split(":")
        blocks.append((int(n), BADCNT if c0 == "-" else int(c0), BADCNT if c1 == "-" else int(c1)))
    return blocks


def decode(data):
    """(order, tsize, tsum, blocks read whole), or None for a bad magic or a short header."""
    if len(data) < 16:
        return None
    for e, order in ((">", "big"), ("<", "little")):
        magic, tsize, tsum, nbb = struct.unpack_from(e + "4I", data)
        if magic == MAGIC:
            break
    else:
        return None
    cnt = 16 + (nbb + 3) // 4 * 4
    whole = max(0, min(nbb, (len(data) - cnt) // 8))
    blocks = []
    for b in range(whole):
        c0, c1 = struct.unpack_from(e + "2I", data, cnt + 8 * b)
        blocks.append((data[16 + b], c0, c1))
    return order, tsize, tsum, blocks


def executed(block):
    n, c0, c1 = block
    return 0 if c0 == BADCNT and c1 == BADCNT else n * (c0 + c1)


def blocks_text(blocks):
    out, off = [], 0
    for i, (n, c0, c1) in enumerate(blocks):
        f = lambda c: "-" if c == BADCNT else str(c)
        out.append("%d 0x%08x %d %s %s\n" % (i, off, n, f(c0), f(c1)))
        off += 4 * n
    return "".join(out)


def summary_text(order, tsize, tsum, blocks, addrs=None):
    offs, off = [], 0
    for n, _, _ in blocks:
        offs.append(off)
        off += 4 * n
    total = sum(executed(b) for b in blocks)
    ranked = sorted((i for i in range(len(blocks)) if executed(blocks[i])),
                    key=lambda i: (-executed(blocks[i]), i))
    bad = sum(1 for _, c0, c1 in blocks if c0 == BADCNT and c1 == BADCNT)
    out = ["magic 0x62620011 %s-endian\n" % order, "text_size %d\n" % tsize,
           "text_checksum 0x%08x\n" % tsum, "blocks %d\n" % len(blocks),
           "non_executable_blocks %d\n" % bad, "executed_blocks %d\n" % len(ranked),
           "instructions %d\n\n" % total,
           "rank block offset length executions instructions percent cumulative%s\n"
           % (" address" if addrs is not None else "")]
    cum = 0
    for k, i in enumerate(ranked, 1):
        n = executed(blocks[i])
        cum += n
        line = "%d %d 0x%08x %d %d %d %.2f %.2f" % (k, i, offs[i], blocks[i][0],
                                                   n // blocks[i][0], n, 100.0 * n / total,
                                                   100.0 * cum / total)
        if addrs is not None:
            line += " 0x%x" % addrs[i]
        out.append(line + "\n")
    return "".join(out)


def hot_text(blocks, top=20):
    """plots/hot.svg's bars: the executed blocks by instructions, then block number, the
    first top; each "RANK<TAB>block B at +0xOFFSET<TAB>INSTRUCTIONS<TAB>-<TAB>EXECUTIONS"."""
    offs, off = [], 0
    for n, _, _ in blocks:
        offs.append(off)
        off += 4 * n
    ranked = sorted((i for i in range(len(blocks)) if executed(blocks[i])),
                    key=lambda i: (-executed(blocks[i]), i))[:top]
    return "".join("%d\tblock %d at +0x%x\t%d\t-\t%d\n"
                   % (k, i, offs[i], executed(blocks[i]), blocks[i][1] + blocks[i][2])
                   for k, i in enumerate(ranked, 1))


# Instruction streams: (processor, pc, size, flow, more); flow None, "jump", "taken",
# "not_taken"; more: a further micro-op of the processor's last instruction.

def cis501_stream(path):
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    import cis501_expect
    records, _, _, _ = cis501_expect.analyse(path, 4096)
    for vals, _, _ in records:
        uop, pc, branch, fall, macro = vals[0], vals[1], vals[6], vals[10], vals[12].upper()
        flow = None
        if branch in "TN":
            cond = not macro.startswith("JMP") and (macro.startswith("J") or
                                                    macro.startswith("LOOP"))
            flow = ("taken" if branch == "T" else "not_taken") if cond else "jump"
        if uop != 1 and flow is None:
            continue
        size = fall - pc
        yield 0, pc, size if 0 < size < 16 else 1, flow, uop != 1


ARM_COND = "(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)"
ARM_ALWAYS = {"b", "bl", "bx", "blx", "br", "blr", "ret", "eret", "braa", "brab", "blraa",
              "blrab", "retaa", "retab", "eretaa", "eretab"}


def arm_branch(words):
    """None, "jump" or "cond" for an ARM instruction's disassembly words, by doc/formats.md."""
    if not words:
        return None
    m = re.sub(r"\.[wn]$", "", words[0].decode("latin-1").lower())
    operands = " ".join(w.decode("latin-1") for w in words[1:]).split(";")[0].lower()
    if (m.startswith("b.") or m in ("cbz", "cbnz", "tbz", "tbnz")
            or re.fullmatch("(b|bl|bx|blx)" + ARM_COND, m)):
        return "cond"
    if m in ARM_ALWAYS or ((m == "pop" or m.startswith("ldm"))
                           and re.search(r"(^|[^a-z0-9])pc([^a-z0-9]|$)", operands)):
        return "jump"
    return None


def tarmac_stream(path):
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    import tarmac_expect
    from trace_bytes import read_bytes
    last_cpu = 0
    for line in tarmac_expect.split_lines(read_bytes(path)):
        r = tarmac_expect.read_line(line)
        if r is None:
            raise SystemExit("foreign line: %r" % line)
        cls, own, _, fields, _, facts = r
        if cls not in ("executed", "condition_failed"):
            continue
        cpu = own if own is not None else last_cpu
        last_cpu = cpu
        words = fields.split(b" ")  # KIND ADDR OPCODE ISET MODE DISASSEMBLY...
        disasm = [] if words[5:] == [b"-"] else words[5:]
        branch = arm_branch(disasm)
        flow = branch and ("not_taken" if cls == "condition_failed" else branch)
        yield cpu if cpu < 64 else 0, facts["pc"], len(words[2]) // 2 or 4, flow, False


def tt6_stream(path, fmt):
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    import tt6_expect
    from trace_bytes import read_bytes
    recs, _, _ = tt6_expect.reference_decode(read_bytes(path), fmt)
    for r in recs:
        if r.kind not in tt6_expect.INSTRUCTIONS:
            continue
        flow = None
        if r.kind == "flow":
            if not tt6_expect.is_conditional(r.word):
                flow = "jump"
            else:
                flow = "not_taken" if r.f["next"] == (r.pc + 4) & 0xFFFFFFFF else "taken"
        yield 0, r.pc, 4, flow, False


def synthesize(stream):
    """(blocks, addresses, instructions) by the rules, instruction by instruction."""
    count, size, starts, ends, taken, not_taken = {}, {}, set(), set(), {}, {}
    last = {}  # processor -> [pc, size, ended, run length, "cond" or None]
    total = 0

    def outcome(pc, flow):  # a conditional branch's
        if flow in ("taken", "not_taken"):
            d = taken if flow == "taken" else not_taken
            d[pc] = d.get(pc, 0) + 1

    for cpu, pc, sz, flow, more in stream:
        p = last.get(cpu)
        if p and p[4] == "cond" and not more:  # a conditional branch taken where PCs jump
            outcome(p[0], "taken" if pc != p[0] + p[1] else "not_taken")
            p[4] = None
        if more:
            if p and not p[2] and p[0] == pc and flow:
                p[2] = True
                ends.add(pc)
                outcome(pc, flow)
            continue
        run = p[3] + 1 if p and not p[2] and pc == p[0] + p[1] and p[3] < MAX_RUN else 1
        if run == 1:
            starts.add(pc)
            if p and not p[2]:
                ends.add(p[0])
        count[pc] = count.get(pc, 0) + 1
        size.setdefault(pc, sz)
        total += 1
        ended = flow is not None
        if ended:
            ends.add(pc)
            outcome(pc, flow)
        last[cpu] = [pc, sz, ended, run, flow]
    for p in last.values():
        if not p[2]:
            ends.add(p[0])
        if p[4] == "cond":  # the last branch's outcome is unknown: not taken
            outcome(p[0], "not_taken")

    blocks, addrs = [], []
    cur = None  # [start, length, count, last pc]

    def close():
        s, n, c, lp = cur
        if lp in taken or lp in not_taken:
            # executions that did not branch, whatever the address held then, are not taken
            blocks.append((n, taken.get(lp, 0), c - taken.get(lp, 0)))
        else:
            blocks.append((n, c, 0))
        addrs.append(s)

    prev = None
    for pc in sorted(count):
        end = prev + size[prev] if prev is not None else None
        cut = (prev is None or pc in starts or prev in ends or end != pc or cur[1] == 255
               or count[pc] != cur[2])
        if cut and prev is not None:
            close()
        if end is not None and end < pc:
            gap, a = pc - end, end
            if gap > MAX_GAP:
                blocks.append((1, BADCNT, BADCNT))
                addrs.append(a)
            else:
                words = (gap + 3) // 4
                while words:
                    n = min(words, 255)
                    blocks.append((n, BADCNT, BADCNT))
                    addrs.append(a)
                    a += 4 * n
                    words -= n
        if cut:
            cur = [pc, 0, count[pc], pc]
        cur[1] += 1
        cur[3] = pc
        prev = pc
    if prev is not None:
        close()
    return blocks, addrs, total


def main(argv):
    cmd = argv[1]
    if cmd == "write":
        out, order, blocks = argv[2], argv[3], parse_blocks(argv[4])
        opts = dict(zip(argv[5::2], argv[6::2]))
        tsize = int(opts.get("--tsize", 4 * sum(b[0] for b in blocks)))
        data = encode(order, tsize, int(opts.get("--tsum", "0"), 0),
                      int(opts.get("--nbb", len(blocks))), blocks)
        if "--cut" in opts:
            data = data[:int(opts["--cut"])]
        data += bytes.fromhex(opts.get("--tail", ""))
        open(out, "wb").write(data)
    elif cmd == "views":
        d = decode(open(argv[2], "rb").read())
        order, tsize, tsum, blocks = d if d else ("big", 0, 0, [])
        open(argv[3] + "/summary.txt", "w").write(summary_text(order, tsize, tsum, blocks))
        open(argv[3] + "/blocks.txt", "w").write(blocks_text(blocks))
        open(argv[3] + "/hot.txt", "w").write(hot_text(blocks))
    elif cmd == "synth":
        fmt, trace, outdir = argv[2], argv[3], argv[4]
        stream = {"cis501": lambda: cis501_stream(trace),
                  "tarmac": lambda: tarmac_stream(trace),
                  "tt6": lambda: tt6_stream(trace, "tt6"),
                  "tt6e": lambda: tt6_stream(trace, "tt6e")}[fmt]()
        blocks, addrs, total = synthesize(stream)
        tsize = 4 * sum(b[0] for b in blocks)
        open(outdir + "/counts.spixcounts", "wb").write(encode("be", tsize, 0, len(blocks),
                                                              blocks))
        open(outdir + "/summary.txt", "w").write(summary_text("big", tsize, 0, blocks, addrs))
        print(total)
    elif cmd == "sum":
        tables = [decode(open(p, "rb").read()) for p in argv[3:]]
        order, tsize, tsum, blocks = tables[0]
        sums = [list(b) for b in blocks]
        off = 0
        for k, b in enumerate(sums):
            for t in tables[1:]:
                for i in (1, 2):
                    x, y = b[i], t[3][k][i]
                    if BADCNT in (x, y):
                        if x != y:
                            print("block %d (text offset 0x%08x) is executable in one file "
                                  "only" % (k, off))
                            return 1
                        continue
                    if x + y >= BADCNT:
                        print("counter overflow at block %d (text offset 0x%08x)" % (k, off))
                        return 1
                    b[i] = x + y
            off += 4 * b[0]
        open(argv[2], "wb").write(encode("be" if order == "big" else "le", tsize, tsum,
                                         len(sums), [tuple(b) for b in sums]))
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
