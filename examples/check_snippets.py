#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that code quoted in a Markdown page still matches the example it quotes.

    python3 examples/check_snippets.py docs/python-to-porta.md [repo-root]

A fenced code block preceded by `<!-- snippet: <path> -->` must appear in <path> (relative to the
repository root): its non-blank lines, in order and consecutive, compared with runs of whitespace
collapsed. A line `// ...` inside the block stands for omitted lines: the parts around it are
matched separately, in order. Exits 1 and names each stale quote.
"""
import pathlib
import re
import sys


def norm(line):
    return " ".join(line.split())


def find_run(haystack, needle, start):
    """Index in haystack where the consecutive lines `needle` begin, at or after start; -1 if none."""
    for i in range(start, len(haystack) - len(needle) + 1):
        if haystack[i : i + len(needle)] == needle:
            return i
    return -1


def main():
    page = pathlib.Path(sys.argv[1])
    root = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else page.resolve().parent.parent
    lines = page.read_text().splitlines()
    marker = re.compile(r"<!--\s*snippet:\s*(\S+)\s*-->")
    checked, stale = 0, []
    i = 0
    while i < len(lines):
        m = marker.search(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        i = end + 1
        source = root / m.group(1)
        if not source.is_file():
            stale.append(f"{page}:{start}: {m.group(1)} does not exist")
            continue
        text = [norm(l) for l in source.read_text().splitlines() if l.strip()]
        parts, part = [], []
        for l in lines[start:end]:
            if norm(l) == "// ...":
                parts.append(part)
                part = []
            elif l.strip():
                part.append(norm(l))
        parts.append(part)
        pos = 0
        for p in (p for p in parts if p):
            found = find_run(text, p, pos)
            if found < 0:
                stale.append(f"{page}:{start}: not found in {m.group(1)} (from here on):\n    " + "\n    ".join(p))
                break
            pos = found + len(p)
        checked += 1
    for s in stale:
        print(s)
    print(f"{checked} snippets checked, {len(stale)} stale")
    return 1 if stale or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
