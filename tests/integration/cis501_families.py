"""The tests' CIS501 macro-opcode families, read from cis501_families.txt (its head says how):
FAMILIES, the families in doc/views.md's order, and family_of(macro_opcode)."""

import os

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cis501_families.txt")


def _read(path):
    exact, rules, order = {}, [], []
    for line in open(path, encoding="ascii"):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "name":
            fam = words[1]
            for n in words[2:]:
                exact[n] = fam
        elif words[0] == "else":
            fam = words[1]
            rules.append(("else", "", fam))
        else:
            fam = words[2]
            rules.append((words[0], words[1], fam))
        if fam not in order:
            order.append(fam)
    return exact, rules, order


_EXACT, _RULES, FAMILIES = _read(TABLE)


def family_of(name):
    if name in _EXACT:
        return _EXACT[name]
    for kind, text, fam in _RULES:
        if (kind == "else" or (kind == "prefix" and name.startswith(text))
                or (kind == "suffix" and name.endswith(text))
                or (kind == "contains" and text in name)):
            return fam
    raise ValueError("cis501_families.txt has no else line")
