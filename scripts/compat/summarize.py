#!/usr/bin/env python3
"""Summarise JUnit XML files (ctest --output-junit, pytest --junitxml).

usage: summarize.py [--no-skip=TEXT] LABEL=FILE [LABEL=FILE ...]
Prints one line per file and a final 'N passed, N failed, N skipped' line; lists failed test names.
Exit status: 0 when nothing failed and every file exists, else 1.
--no-skip=TEXT: a skipped test whose classname.name contains TEXT fails too (listed as SKIPPED).
"""
import sys
import xml.etree.ElementTree as ET


def count(path):
    root = ET.parse(path).getroot()
    passed = failed = skipped = 0
    failures, skips = [], []
    for case in root.iter("testcase"):
        name = ".".join(x for x in (case.get("classname"), case.get("name")) if x)
        status = (case.get("status") or "").lower()
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped += 1
            skips.append(name)
        else:
            passed += 1
    return passed, failed, skipped, failures, skips


def main(args):
    tot = [0, 0, 0]
    ok = True
    no_skip = [a.partition("=")[2] for a in args if a.startswith("--no-skip=")]
    for arg in (a for a in args if not a.startswith("--no-skip=")):
        label, _, path = arg.partition("=")
        try:
            p, f, s, names, skips = count(path)
        except (OSError, ET.ParseError) as e:
            print(f"{label}: no results ({e})")
            ok = False
            continue
        print(f"{label}: {p} passed, {f} failed, {s} skipped")
        for n in names[:50]:
            print(f"  FAILED {n}")
        if len(names) > 50:
            print(f"  ... and {len(names) - 50} more")
        banned = [n for n in skips if any(t in n for t in no_skip)]
        for n in banned:
            print(f"  SKIPPED {n} (not allowed to skip)")
        tot = [tot[0] + p, tot[1] + f, tot[2] + s]
        ok = ok and f == 0 and not banned
    print(f"TOTAL: {tot[0]} passed, {tot[1]} failed, {tot[2]} skipped")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
