"""What the *_expect.py scripts and the tests share, none of it about a format: a trace's
bytes, decompressed when it is gzip; and a stats.json compared with a model's, key by key."""

import gzip


def read_bytes(path):
    """The whole trace at path; a gzip file (by its magic, whatever its name) decompressed."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return f.read()


def json_checks(want, got, path="stats.json"):
    """(description, expected, actual) for the keys of every object of want, in order, and
    every value under them; a number that is not an integer need only agree to 6 significant
    digits (doc/views.md)."""
    if isinstance(want, dict):
        out = [(path + " keys", list(want), list(got) if isinstance(got, dict) else got)]
        for k, v in want.items():
            out += json_checks(v, got.get(k, "MISSING") if isinstance(got, dict) else "MISSING",
                               path + "." + k)
        return out
    if isinstance(want, float) and type(got) in (int, float) and \
            abs(got - want) <= 5e-6 * abs(want) + 1e-12:
        got = want
    return [(path, want, got)]
