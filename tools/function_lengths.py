#!/usr/bin/env python3
"""Lists C/C++ function definitions longer than a threshold, using Universal Ctags' end lines.

  function_lengths.py [--over N ...] [DIR_OR_FILE ...]   (default: --over 60 --over 100,
                                                          libdlio/src apps preload)

A function's length is its last line minus its first plus one (signature to closing brace),
lambdas and local classes included (a lambda is not listed on its own). Run from the repository
root. Needs `ctags` (Universal Ctags, JSON output with end lines: --fields=+ne).
"""
import argparse
import json
import os
import subprocess
import sys

SUFFIXES = (".cc", ".cpp", ".c", ".h", ".hpp")


def source_files(roots):
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.join(dirpath, name)


def function_spans(files):
    cmd = ["ctags", "--output-format=json", "--languages=C,C++", "--kinds-C++=f", "--kinds-C=f",
           "--language-force=C++", "--fields=+ne", "--sort=no", "-o", "-"] + files
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("function_lengths.py: needs `ctags` (Universal Ctags) in PATH")
    except subprocess.CalledProcessError as e:
        sys.exit("function_lengths.py: ctags failed (Universal Ctags with JSON output needed): "
                 + e.stderr.strip())
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        name = tag["name"]
        if name.startswith("__anon"):  # a lambda: counted in the function around it
            continue
        if tag.get("scope") and not tag["scope"].startswith(("__anon", "dlio")):
            name = tag["scope"].split("::")[-1] + "::" + name
        yield tag["path"], tag["line"], tag["end"] - tag["line"] + 1, name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--over", type=int, action="append", help="report counts above N lines")
    parser.add_argument("--list", type=int, default=None,
                        help="list functions above N lines (default: the smallest --over)")
    parser.add_argument("roots", nargs="*", default=["libdlio/src", "apps", "preload"])
    args = parser.parse_args()
    overs = sorted(args.over or [60, 100])
    files = sorted(set(source_files(args.roots)))
    if not files:
        sys.exit("function_lengths.py: no C/C++ files under " + " ".join(args.roots))
    spans = sorted(function_spans(files), key=lambda s: (-s[2], s[0], s[1]))
    threshold = overs[0] if args.list is None else args.list
    for path, line, length, name in spans:
        if length > threshold:
            print(f"{length:5d}  {path}:{line}  {name}")
    for n in overs:
        print(f"functions over {n} lines: {sum(1 for s in spans if s[2] > n)}")


if __name__ == "__main__":
    main()
