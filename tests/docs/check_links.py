#!/usr/bin/env python3
"""Every relative link of README.md and doc/**/*.md resolves to a file of the repository (anchors and web
addresses aside), and every page of doc/ is reachable from the README. Exit 1 naming each broken link."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
pages = [root / "README.md", *sorted((root / "doc").rglob("*.md"))]
# Links to files (a name with an extension, or a folder): "[x](t)" in a formula is not one.
link = re.compile(r"\[[^\]]*\]\(((?:[\w.-]*/)*[\w-]+\.[a-z0-9]+(?:#[^)\s]*)?|(?:[\w.-]+/)+)\)")
broken, reached, todo = [], set(), [root / "README.md"]
for page in pages:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in link.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists():
            broken.append(f"{page.relative_to(root)}: link to '{target}' does not resolve")
while todo:  # the pages the README leads to, link by link
    page = todo.pop()
    if page in reached or page.suffix != ".md" or not page.exists():
        continue
    reached.add(page)
    for target in link.findall(page.read_text(encoding="utf-8")):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            todo.append((page.parent / target.split("#")[0]).resolve())
for page in pages:
    if page not in reached:
        broken.append(f"{page.relative_to(root)}: no link leads to it from README.md")
for line in broken:
    print(line)
print(f"{len(pages)} pages, {len(broken)} problems")
sys.exit(1 if broken else 0)
