#!/usr/bin/env bash
# The "Keys and options" section of every doc/commands/<command>.md is `tokdyn <command> --help`, and the
# listing in doc/run-files.md is `tokdyn --outputs`, each pasted between two marker lines. update-help.sh TOKDYN
# writes them; update-help.sh TOKDYN --check changes nothing and exits 1 naming each page that differs from
# the binary (the test docs_command_pages).
set -euo pipefail
tokdyn=${1:?usage: doc/commands/update-help.sh TOKDYN [--check]}
check=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
stale=0
# refresh PAGE MARKER TITLE COMMAND...: the page with COMMAND's output between its MARKER lines (added at the
# end under TITLE when the page has none).
refresh() {
  local page=$1 marker=$2 title=$3
  shift 3
  local new
  new=$(mktemp)
  "$tokdyn" "$@" > "$new.out" 2>&1 || { echo "update-help: tokdyn $* failed" >&2; exit 2; }
  awk -v m="<!-- $marker: begin -->" '$0 == m {exit} {print}' "$page" > "$new"
  grep -qxF "<!-- $marker: begin -->" "$page" || printf '\n## %s\n\n' "$title" >> "$new"
  { echo "<!-- $marker: begin -->"; echo '```text'; cat "$new.out"; echo '```'; echo "<!-- $marker: end -->"; } >> "$new"
  awk -v m="<!-- $marker: end -->" 'f {print} $0 == m {f = 1}' "$page" >> "$new"
  if ! cmp -s "$new" "$page"; then
    stale=1
    if [ "$check" = --check ]; then
      echo "doc/${page##*/doc/} is not tokdyn $*: run doc/commands/update-help.sh $tokdyn"
    else
      cp "$new" "$page"
    fi
  fi
  rm -f "$new" "$new.out"
}
for page in "$here"/*.md; do
  refresh "$page" "tokdyn --help" "Keys and options" "$(basename "$page" .md)" --help
done
refresh "$(dirname "$here")/run-files.md" "tokdyn --outputs" "Every dataset and attribute" --outputs
[ "$check" = --check ] && exit $stale
exit 0
