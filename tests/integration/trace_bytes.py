"""What the *_expect.py scripts share: a trace's bytes, decompressed when it is gzip."""

import gzip


def read_bytes(path):
    """The whole trace at path; a gzip file (by its magic, whatever its name) decompressed."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return f.read()
