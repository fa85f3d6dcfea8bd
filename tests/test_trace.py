#!/usr/bin/env python3
"""The structure of trace files that `pipegemm trace` writes.

    tests/test_trace.py SOURCE_DIR OUT_DIR TRACE.json... [unittest options]

Each file that exists is read (the first, the committed fixture, must); a
file named by a later argument that is missing is skipped with a note (the
host unit test that writes it needs cmocka). For every file:
  * it is one JSON object with "traceEvents", "displayTimeUnit" and
    "otherData" (string values, as the format has them);
  * metadata events come first; every other event is a complete ("X")
    span or an instant ("i") with ts, pid, tid, a name and a known
    category, X spans with a duration >= 0; events are in time order;
  * every (pid, tid) an event uses has a thread name, every pid a process
    name "SM <pid - 1>"; a tid lives in one process only;
  * spans are well nested per track: two spans of a track are disjoint or
    one holds the other;
  * one track per role: per block one main track (the block, or its
    consumers), at most one producer track, and copies only on the track of
    their stage;
  * in each copy track the copies follow one another (a slot holds one
    tile at a time).
Then scripts/timeline.py draws every file to a PNG. Where it finds no
matplotlib (exit 3), the run ends in 77 (skipped) once every other check has
passed, or fails where the environment variable CI is set (there `make deps`
fetches matplotlib). Standard library only.
"""

import collections
import gzip
import json
import os
import re
import subprocess
import sys
import unittest

SOURCE, OUT, FILES = None, None, []
NO_MATPLOTLIB = []  # timeline.py's line saying it has none, once it said so
CATEGORIES = {"copy", "wait", "compute", "slot wait", "epilogue", "release"}
THREAD_NAME = re.compile(r"^block (\d+) (block|consumers|producers|copies into stage (\d+))$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def us_to_ns(value):
    return round(value * 1000)


class TraceStructure(unittest.TestCase):
    def check_file(self, path):
        trace = load(path)
        self.assertIsInstance(trace, dict, path)
        self.assertEqual(trace.get("displayTimeUnit"), "ns", path)
        self.assertIsInstance(trace.get("otherData"), dict, path)
        for key, value in trace["otherData"].items():
            self.assertIsInstance(value, str, f"{path}: otherData {key}")
        events = trace["traceEvents"]
        self.assertIsInstance(events, list, path)
        meta = [e for e in events if e.get("ph") == "M"]
        rest = [e for e in events if e.get("ph") != "M"]
        self.assertEqual(events[:len(meta)], meta, f"{path}: metadata first")
        self.assertTrue(rest, f"{path}: no events")
        names = self.check_metadata(path, meta)
        self.check_events(path, rest, names)
        self.check_nesting(path, rest)
        self.check_roles(path, rest, names)

    def check_metadata(self, path, meta):
        processes, threads = {}, {}
        for e in meta:
            if e["name"] == "process_name":
                processes[e["pid"]] = e["args"]["name"]
            elif e["name"] == "thread_name":
                key = (e["pid"], e["tid"])
                self.assertNotIn(key, threads, f"{path}: thread {key} named twice")
                threads[key] = e["args"]["name"]
            else:
                self.assertIn(e["name"], ("process_sort_index", "thread_sort_index"), path)
        for pid, name in processes.items():
            self.assertEqual(name, f"SM {pid - 1}", path)
        tid_pids = collections.Counter(tid for _, tid in threads)
        self.assertFalse([t for t, n in tid_pids.items() if n > 1],
                         f"{path}: a tid in two processes")
        for (pid, tid), name in threads.items():
            self.assertIn(pid, processes, f"{path}: thread {tid} in an unnamed process")
            self.assertRegex(name, THREAD_NAME, path)
        return threads

    def check_events(self, path, events, threads):
        last = None
        for e in events:
            self.assertIn(e["ph"], ("X", "i"), f"{path}: {e}")
            self.assertIn(e["cat"], CATEGORIES, f"{path}: {e}")
            self.assertIsInstance(e["name"], str)
            self.assertGreaterEqual(e["ts"], 0, f"{path}: {e}")
            if e["ph"] == "X":
                self.assertGreaterEqual(e["dur"], 0, f"{path}: {e}")
            for key in ("k_tile", "stage", "tile"):
                self.assertIsInstance(e["args"][key], int, f"{path}: {e}")
            self.assertIn((e["pid"], e["tid"]), threads, f"{path}: unnamed track in {e}")
            if last is not None:
                self.assertLessEqual(last, e["ts"], f"{path}: out of time order at {e}")
            last = e["ts"]

    def check_nesting(self, path, events):
        by_track = collections.defaultdict(list)
        for e in events:
            if e["ph"] == "X":
                begin = us_to_ns(e["ts"])
                by_track[(e["pid"], e["tid"])].append((begin, begin + us_to_ns(e["dur"]), e))
        for track, spans in by_track.items():
            spans.sort(key=lambda s: (s[0], -s[1]))
            stack = []
            for begin, end, event in spans:
                while stack and stack[-1][1] <= begin:
                    stack.pop()
                if stack:
                    self.assertLessEqual(end, stack[-1][1],
                                         f"{path}: {event} overlaps {stack[-1][2]} in {track}")
                    self.assertNotEqual(event["cat"], "copy",
                                        f"{path}: two copies at once into one stage: {event}")
                stack.append((begin, end, event))

    def check_roles(self, path, events, threads):
        roles = collections.defaultdict(list)
        for (pid, tid), name in threads.items():
            match = THREAD_NAME.match(name)
            role = "copies" if match.group(3) is not None else match.group(2)
            roles[int(match.group(1))].append(role)
            self.assertEqual(tid // 16, int(match.group(1)), f"{path}: {name} has tid {tid}")
        for block, kinds in roles.items():
            main = [k for k in kinds if k in ("block", "consumers")]
            self.assertEqual(len(main), 1, f"{path}: block {block} has main tracks {main}")
            self.assertLessEqual(kinds.count("producers"), 1, f"{path}: block {block}")
            if "producers" in kinds:
                self.assertEqual(main, ["consumers"], f"{path}: block {block}")
        for e in events:
            name = threads[(e["pid"], e["tid"])]
            match = THREAD_NAME.match(name)
            if e["cat"] == "copy":
                self.assertEqual(match.group(3), str(e["args"]["stage"]), f"{path}: {e} on {name}")
            else:
                self.assertIsNone(match.group(3), f"{path}: {e} on {name}")

    def test_files(self):
        self.assertTrue(FILES and os.path.exists(FILES[0]), "the committed fixture is missing")
        for path in FILES:
            if not os.path.exists(path):
                print(f"note: {path} is missing (written by test_cli_trace, which needs cmocka)")
                continue
            with self.subTest(path=path):
                self.check_file(path)

    def test_timeline_png(self):
        script = os.path.join(SOURCE, "scripts", "timeline.py")
        for index, path in enumerate(p for p in FILES if os.path.exists(p)):
            png = os.path.join(OUT, f"timeline-{index}.png")
            if os.path.exists(png):
                os.remove(png)
            done = subprocess.run([sys.executable, script, path, png], capture_output=True,
                                  text=True, check=False)
            if done.returncode == 3 and not os.environ.get("CI"):
                NO_MATPLOTLIB.append(done.stderr.strip())
                self.skipTest(done.stderr.strip())
            self.assertEqual(done.returncode, 0, f"{path}: {done.stderr}")
            with open(png, "rb") as handle:
                self.assertEqual(handle.read(8), b"\x89PNG\r\n\x1a\n", png)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    SOURCE, OUT = sys.argv[1], sys.argv[2]
    FILES = [a for a in sys.argv[3:] if not a.startswith("-")]
    os.makedirs(OUT, exist_ok=True)
    sys.dont_write_bytecode = True
    run = unittest.main(argv=[sys.argv[0]] + [a for a in sys.argv[3:] if a.startswith("-")],
                        exit=False)
    if not run.result.wasSuccessful():
        sys.exit(1)
    if NO_MATPLOTLIB:
        print(f"skipped: {NO_MATPLOTLIB[0]}")
        sys.exit(77)
