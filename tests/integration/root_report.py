#!/usr/bin/env python3
"""Reads the table of .tracemount/report.html back, with Python's HTML parser.

  root_report.py rows PAGE
      One line per row of the table, in page order, its fields tab-separated: the link's
      href, then each cell's text (path, format, size, records, errors, state), then the
      size, records and errors cells' data-v. A tab or newline in a text is shown as \\t, \\n.
"""
import html.parser
import sys


class Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.row, self.cell, self.in_body = [], None, None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tbody":
            self.in_body = True
        elif tag == "tr" and self.in_body:
            self.row = {"href": None, "cells": [], "values": []}
        elif tag == "td" and self.row is not None:
            self.cell = ""
            if "data-v" in a:
                self.row["values"].append(a["data-v"])
        elif tag == "a" and self.row is not None:
            self.row["href"] = a.get("href")

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row["cells"].append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None
        elif tag == "tbody":
            self.in_body = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "rows":
        sys.exit(__doc__)
    p = Rows()
    with open(sys.argv[2], encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    for r in p.rows:
        fields = [r["href"] or ""] + r["cells"] + r["values"]
        print("\t".join(x.replace("\t", "\\t").replace("\n", "\\n") for x in fields))


if __name__ == "__main__":
    main()
