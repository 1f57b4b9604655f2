#!/usr/bin/env python3
"""The keys two `dlio-run fit` workloads give different values, one per line.

    fit_yaml_diff.py QUIET.yaml LOADED.yaml [IGNORED_KEY...]

Every key is compared by its dotted name (reader.batch_size): an inferred key by its YAML value,
a key fit left commented out or did not write (not inferred: dlio's default applies) as
"(default)". A key named in IGNORED_KEY is left out, with the keys under it
(train.computation_time: its mean and stdev too). A key in NEAR (reader.fresh_page_share, a share
of page faults that glibc's choices move by a few thousandths between two runs of one program)
agrees when both values are numbers within its tolerance of each other. Prints
"key: quiet value -> loaded value" for each key that differs, nothing when the two agree.
"""
import re
import sys

import yaml

# A key fit wrote commented out:  "  # file_prefix: img   # not inferred ...".
COMMENTED = re.compile(r"^( *)# ([A-Za-z_][A-Za-z0-9_]*): ")
SECTION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):\s*(#.*)?$")


# Keys whose values agree within an absolute tolerance.
NEAR = {"reader.fresh_page_share": 0.05}


def same(key, a, b):
    if a == b:
        return True
    if key not in NEAR:
        return False
    try:
        return abs(float(a) - float(b)) <= NEAR[key]
    except (TypeError, ValueError):
        return False


def flatten(node, prefix, out):
    if isinstance(node, dict):
        for key, value in node.items():
            flatten(value, prefix + [str(key)], out)
    else:
        out[".".join(prefix)] = node


def keys_of(path):
    text = open(path).read()
    out = {}
    flatten(yaml.safe_load(text) or {}, [], out)
    section = None
    for line in text.splitlines():
        match = SECTION.match(line)
        if match:
            section = match.group(1)
            continue
        match = COMMENTED.match(line)
        if match and section and match.group(1):
            out.setdefault(section + "." + match.group(2), "(default)")
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    quiet, loaded = keys_of(sys.argv[1]), keys_of(sys.argv[2])
    ignored = sys.argv[3:]
    for key in sorted(set(quiet) | set(loaded)):
        if any(key == i or key.startswith(i + ".") for i in ignored):
            continue
        a, b = quiet.get(key, "(default)"), loaded.get(key, "(default)")
        if not same(key, a, b):
            print("%s: %s -> %s" % (key, a, b))


if __name__ == "__main__":
    main()
