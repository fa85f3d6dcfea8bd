#!/usr/bin/env python3
"""The links of README.md, docs/*.md and the results pages, and the layout
of bench/results/ (CTest's docs_links).

    tests/docs_check.py REPO

Every relative link [text](target) of README.md, docs/*.md and every
Markdown page under bench/results/ must name a file or folder of the
repository, and a #fragment a heading of that page (GitHub's anchors: lower
case, punctuation dropped, spaces as hyphens). Links to the web are not
followed. The pages must not name anything outside the repository (a path
that leaves it).

bench/results/ is one folder per question, each with a README.md, and
nothing beside the folders; every file in it must be linked from a page (a
PNG shown, as an image, not only linked), so that no run sits there that no
page reads; no results page may be over 30 KB; and no file name there
carries a commit hash (the pages name the commit of a run).

Exit 0, or 1 with one line per dead link or misplaced file."""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```")
RESULTS = os.path.join("bench", "results")
PAGE_LIMIT = 30 * 1024
# A word of a file name that looks like a commit: 7 to 40 hex digits, a
# letter and a digit among them (4096x4096 and h200 are not).
HASH = re.compile(r"^(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}$")


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
    """(line number, target, is an image) of every link outside code."""
    in_code = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
        for match in LINK.finditer(line):
            yield number, match.group(1) or match.group(2), match.group(2) is not None


def results_files(repo):
    """Every file under bench/results/, relative to the repository."""
    found = []
    for top, dirs, files in os.walk(os.path.join(repo, RESULTS)):
        dirs.sort()
        found += [os.path.relpath(os.path.join(top, f), repo) for f in sorted(files)]
    return found


def layout(repo, linked, shown):
    """Lines for each file of bench/results/ out of place."""
    bad = []
    root = os.path.join(repo, RESULTS)
    if not os.path.isdir(root):
        return [f"{RESULTS}: no such folder"]
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if not os.path.isdir(path):
            bad.append(f"{RESULTS}/{entry}: a file beside the question folders")
        elif not os.path.isfile(os.path.join(path, "README.md")):
            bad.append(f"{RESULTS}/{entry}/: a question folder without a README.md")
    for rel in results_files(repo):
        name = os.path.basename(rel)
        if rel.endswith(".png"):
            if rel not in shown:
                bad.append(f"{rel}: a picture no page shows (an image link, ![...](...))")
        elif rel not in linked and not rel.endswith(os.sep + "README.md"):
            bad.append(f"{rel}: no page links it")
        if any(HASH.match(word) for word in re.split(r"[-_.]", name)):
            bad.append(f"{rel}: a commit hash in its name (name the commit on its page)")
        if rel.endswith(".md") and os.path.getsize(os.path.join(repo, rel)) > PAGE_LIMIT:
            size = os.path.getsize(os.path.join(repo, rel))
            bad.append(f"{rel}: {size} bytes, over the {PAGE_LIMIT} a results page may have")
    # A folder's README is reached from the index (docs/results.md) or a page.
    for rel in results_files(repo):
        if rel.endswith(os.sep + "README.md") and rel not in linked:
            folder = os.path.dirname(rel)
            if folder not in linked:
                bad.append(f"{rel}: no page links it (docs/results.md lists every folder)")
    return bad


def main():
    repo = os.path.realpath(sys.argv[1])
    pages = [os.path.join(repo, "README.md")]
    docs = os.path.join(repo, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    pages += [os.path.join(repo, rel) for rel in results_files(repo) if rel.endswith(".md")]
    dead, checked = [], 0
    linked, shown = set(), set()
    for page in pages:
        for number, target, image in links(page):
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
            elif path:
                rel = os.path.relpath(resolved, repo)
                linked.add(rel)
                if image:
                    shown.add(rel)
    misplaced = layout(repo, linked, shown)
    for line in dead + misplaced:
        print(f"docs_links: {line}")
    print(f"docs_links: {checked} links in {len(pages)} pages, {len(dead)} dead; "
          f"{len(results_files(repo))} files in {RESULTS}, {len(misplaced)} out of place")
    return 1 if dead or misplaced or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
