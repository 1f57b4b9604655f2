#!/bin/sh
# Rewrites the key reference of docs/configuration.md (between its BEGIN/END keys markers) from
# `dlio-run list keys --markdown`, the tables tests/config/config_docs_test.cc checks the document
# against. Run it after adding, removing or changing a config key:
#   tools/update_config_docs.sh [path/to/dlio-run]   (default: build/apps/dlio-run/dlio-run)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/apps/dlio-run/dlio-run}
doc=$root/docs/configuration.md
begin='<!-- BEGIN keys:'
end='<!-- END keys -->'
[ -x "$bin" ] || { echo "update_config_docs: no dlio-run at $bin (build it, or name it)" >&2; exit 2; }
grep -q "^$begin" "$doc" && grep -q "^$end\$" "$doc" ||
  { echo "update_config_docs: $doc lacks the '$begin' / '$end' lines" >&2; exit 2; }
tables=$(mktemp "$doc.tables.XXXXXX")
out=$(mktemp "$doc.new.XXXXXX")
trap 'rm -f "$tables" "$out"' EXIT
"$bin" list keys --markdown > "$tables"
# Everything up to and including the BEGIN line, the tables, then the END line and the rest.
awk -v begin="$begin" -v end="$end" -v tables="$tables" '
  index($0, begin) == 1 { print; while ((getline line < tables) > 0) print line; print ""; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }' "$doc" > "$out"
chmod --reference="$doc" "$out"
mv "$out" "$doc"
echo "update_config_docs: $(grep -c '^| `' "$tables") key rows written to $doc"
