#!/usr/bin/env bash
# The "Keys and options" section of every doc/commands/<command>.md is `tokdyn <command> --help`, pasted
# between two marker lines. update-help.sh TOKDYN writes them; update-help.sh TOKDYN --check changes nothing
# and exits 1 naming each page that differs from the binary's help (the test cli_doc_pages).
set -euo pipefail
tokdyn=${1:?usage: doc/commands/update-help.sh TOKDYN [--check]}
check=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
stale=0
for page in "$here"/*.md; do
  command=$(basename "$page" .md)
  new=$(mktemp)
  "$tokdyn" "$command" --help > "$new.help" 2>&1 || { echo "update-help: tokdyn $command --help failed" >&2; exit 2; }
  # The page up to its marker (or all of it, then the section's title), the help, the end marker.
  awk '/^<!-- tokdyn --help: begin -->$/ {exit} {print}' "$page" > "$new"
  grep -q '^<!-- tokdyn --help: begin -->$' "$page" || printf '\n## Keys and options\n\n' >> "$new"
  { echo '<!-- tokdyn --help: begin -->'; echo '```text'; cat "$new.help"; echo '```'; echo '<!-- tokdyn --help: end -->'; } >> "$new"
  awk 'f {print} /^<!-- tokdyn --help: end -->$/ {f = 1}' "$page" >> "$new"
  if ! cmp -s "$new" "$page"; then
    stale=1
    if [ "$check" = --check ]; then
      echo "doc/commands/$command.md is not tokdyn $command --help: run doc/commands/update-help.sh $tokdyn"
    else
      cp "$new" "$page"
    fi
  fi
  rm -f "$new" "$new.help"
done
[ "$check" = --check ] && exit $stale
exit 0
