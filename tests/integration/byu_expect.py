"""The expected stats.json of a BYU trace, computed from the reference decoder's dump.

Shared by the integration tests. It reads only byu_refdec's output and the trace's size, never
tracemount's, so it stays an independent expectation."""

ORDER = ["invalid", "int_ack", "special", "io_read", "io_write", "i_fetch", "nc_i_fetch",
         "d_read", "nc_d_read", "write_back", "d_write"]
MEMORY = {"I_FETCH", "NC_I_FETCH", "D_READ", "NC_D_READ", "WRITE_BACK", "D_WRITE"}
FLAG = "probably not a 6-byte BYU trace"


def flagged(records, invalid):
    """Whether a trace is flagged as probably not a 6-byte BYU trace."""
    return records >= 64 and invalid * 10 >= records * 9


def expected_stats(dump_lines, size, source):
    """(key, value) pairs for stats.json; keys of the byu object are "byu.NAME"."""
    classes = {n: 0 for n in ORDER}
    be_hist, lines, pages = {}, set(), set()
    records = nmem = req = 0
    amin = amax = None
    for line in dump_lines:
        a, be, op = line.split()
        records += 1
        classes[op.lower()] += 1
        be_hist[be] = be_hist.get(be, 0) + 1
        if op in MEMORY:
            x = int(a, 16)
            nmem += 1
            req += 8 - bin(int(be, 16)).count("1")
            amin = x if amin is None else min(amin, x)
            amax = x if amax is None else max(amax, x)
            lines.add(x >> 6)
            pages.add(x >> 12)
    flag = flagged(records, classes["invalid"])
    return [
        ("format", "byu"), ("source", source), ("bytes", size), ("records", records),
        ("classes", classes), ("errors", (1 if size % 6 else 0) + (1 if flag else 0)),
        ("truncated", size % 6 != 0), ("byu.memory_references", nmem),
        ("byu.byte_enables", be_hist),
        ("byu.address_min", "0x%08x" % amin if amin is not None else None),
        ("byu.address_max", "0x%08x" % amax if amax is not None else None),
        ("byu.distinct_lines_64b", len(lines)), ("byu.distinct_pages_4k", len(pages)),
        ("byu.bytes_requested", req),
        # the din's lines: fetches 2, reads 0, write-backs and writes 1 (doc/views.md)
        ("byu.din", {"fetches": classes["i_fetch"] + classes["nc_i_fetch"],
                     "reads": classes["d_read"] + classes["nc_d_read"],
                     "writes": classes["write_back"] + classes["d_write"]}),
        ("byu.invalid_fraction", classes["invalid"] / records if records else 0.0),
        ("byu.probably_not_byu", flag),
    ]


def stats_value(d, key, want):
    """The value at key ("byu.NAME") of a parsed stats.json, or "MISSING"; invalid_fraction
    equals want when it agrees to 6 significant digits (doc/views.md)."""
    v = d
    for p in key.split("."):
        v = v.get(p, "MISSING") if isinstance(v, dict) else "MISSING"
    if key == "byu.invalid_fraction" and type(v) in (int, float) and \
            abs(v - want) <= 5e-6 * abs(want) + 1e-12:
        v = want
    return v
