#!/usr/bin/env bash
# The README's first command, after its install and build steps (CI has done both), run from the repository
# root as a new user would: it writes its run file, log and plot under runs/, and leaves no file git would
# show (runs/ is ignored). Usage: readme_first_command.sh SRC
set -euo pipefail
src=${1:?usage: readme_first_command.sh SRC}
cd "$src"
line=$(grep -m1 -E '^    \./jobscripts/install-deps-debian\.sh && .*--target tokdyn' README.md)
[ -n "$line" ] || { echo "FAIL: no first command in README.md"; exit 1; }
rest=${line#*--target tokdyn && }
[ "$rest" != "$line" ] || { echo "FAIL: the first command does not build --target tokdyn: $line"; exit 1; }
before=$(git status --porcelain --untracked-files=all)
bash -c "$rest" > /dev/null
for f in runs/default.h5 runs/default.log runs/default.png; do
  [ -s "$f" ] || { echo "FAIL: the first command wrote no $f"; exit 1; }
done
after=$(git status --porcelain --untracked-files=all)
[ "$before" = "$after" ] || { echo "FAIL: the first command left files git shows: $(diff <(echo "$before") <(echo "$after"))"; exit 1; }
echo "ok: the README's first command writes runs/default.{h5,log,png} and nothing git shows"
