#!/usr/bin/env python3
"""The links of README.md and docs/*.md (CTest's docs_links).

    tests/docs_check.py REPO

Every relative link [text](target) must name a file or folder of the
repository, and a #fragment a heading of that page (GitHub's anchors:
lower case, punctuation dropped, spaces as hyphens). Links to the web are
not followed. The pages must not name anything outside the repository
(a path that leaves it). Exit 0, or 1 with one line per dead link."""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```")


def anchors(path):
    """The anchors of a Markdown page's headings."""
    found = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        title = re.sub(r"[^\w\- ]", "", title)
        found.add(title.replace(" ", "-"))
    return found


def links(path):
    """(line number, target) of every link outside code."""
    in_code = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
        for match in LINK.finditer(line):
            yield number, match.group(1) or match.group(2)


def main():
    repo = os.path.realpath(sys.argv[1])
    pages = [os.path.join(repo, "README.md")]
    docs = os.path.join(repo, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    dead, checked = [], 0
    for page in pages:
        for number, target in links(page):
            if re.match(r"^[a-z]+:", target):
                continue  # the web
            checked += 1
            where = f"{os.path.relpath(page, repo)}:{number}: {target}"
            path, _, fragment = target.partition("#")
            resolved = os.path.realpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not (resolved + os.sep).startswith(repo + os.sep) and resolved != repo:
                dead.append(f"{where}: leaves the repository")
            elif not os.path.exists(resolved):
                dead.append(f"{where}: no such file")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                dead.append(f"{where}: no heading #{fragment}")
    for line in dead:
        print(f"docs_links: {line}")
    print(f"docs_links: {checked} links in {len(pages)} pages, {len(dead)} dead")
    return 1 if dead or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
