#!/usr/bin/env python3
"""Differential of FeedParser against Python feedparser over feedparser's own test corpus.

The corpus is vendored under Tests/Fixtures/feedparser/ (feedparser's tests/ folders wellformed, illformed,
entities and encoding, with its BSD-2 licence). A feed is *readable* when feedparser reads at least one entry
or a feed title with visible text (tags ignored) from it; a readable feed is *lost* when our FeedParser throws on it or reads neither.

Two steps:
  reading   python3 Scripts/feeds/feedparser_differential.py reading
            runs feedparser (pip install feedparser) over the corpus and writes what it read to
            Tests/Fixtures/feedparser/feedparser-reading.json (committed: the Swift test
            FeedparserDifferentialTests checks the loss rate against it without Python).
  compare   python3 Scripts/feeds/feedparser_differential.py compare
            runs `swift test --filter FeedparserDifferentialTests` with FEEDPARSER_DIFFERENTIAL_OUTPUT set,
            so the test also writes what our parser read, and prints: readable feeds, lost feeds (each
            named), feed and entry title agreement with tags ignored, and titles of ours that still carry
            script text.
Run from the repository root; `all` does both."""
import html
import json
import os
import re
import subprocess
import sys
import tempfile

CORPUS = "Tests/Fixtures/feedparser"
READING = os.path.join(CORPUS, "feedparser-reading.json")
FOLDERS = ["wellformed", "illformed", "entities", "encoding"]
HEADER = re.compile(rb"^Header:\s+([^:]+):(.+)$", re.MULTILINE)


def corpus_files():
    for folder in FOLDERS:
        for root, _, names in os.walk(os.path.join(CORPUS, folder)):
            for name in sorted(names):
                if name.endswith(".xml"):
                    yield os.path.relpath(os.path.join(root, name), CORPUS)


def content_type(blob):
    """The Content-Type feedparser's own test server sends for a file (its `Header:` comment lines)."""
    for key, value in HEADER.findall(blob):
        if key.strip().lower() == b"content-type":
            return value.strip().decode("utf-8", "replace")
    return None


def reading():
    import feedparser

    results = {}
    for path in corpus_files():
        with open(os.path.join(CORPUS, path), "rb") as handle:
            blob = handle.read()
        headers = {}
        kind = content_type(blob)
        if kind:
            headers["content-type"] = kind
        parsed = feedparser.parse(blob, response_headers=headers)
        title = parsed.feed.get("title", "") or ""
        entries = [entry.get("title", "") or "" for entry in parsed.entries]
        results[path] = {
            "contentType": kind,
            "readable": bool(entries) or bool(visible(title)),
            "title": title,
            "entryTitles": entries,
        }
    with open(READING, "w", encoding="utf-8") as handle:
        json.dump({"feedparser": feedparser.__version__, "feeds": results}, handle, indent=1, sort_keys=True,
                  ensure_ascii=False)
        handle.write("\n")
    readable = sum(1 for value in results.values() if value["readable"])
    print(f"feedparser {feedparser.__version__}: {readable} of {len(results)} files readable -> {READING}")


TAG = re.compile(r"<[^>]*>")


def visible(text):
    """A title compared with tags ignored: markup removed, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(TAG.sub("", text)).split())


def compare():
    with open(READING, encoding="utf-8") as handle:
        theirs = json.load(handle)["feeds"]
    with tempfile.TemporaryDirectory() as directory:
        output = os.path.join(directory, "ours.json")
        environment = dict(os.environ, FEEDPARSER_DIFFERENTIAL_OUTPUT=output)
        run = subprocess.run(["swift", "test", "--filter", "FeedparserDifferentialTests"], env=environment,
                             capture_output=True, text=True)
        if not os.path.exists(output):
            sys.stdout.write(run.stdout[-4000:] + run.stderr[-4000:])
            sys.exit("the Swift test wrote nothing")
        with open(output, encoding="utf-8") as handle:
            ours = json.load(handle)
    readable = [path for path, value in theirs.items() if value["readable"]]
    lost = []
    title_pairs = title_agree = 0
    scripted = []
    for path in sorted(readable):
        mine = ours.get(path, {"error": "not run"})
        if "error" in mine or not (mine["entryTitles"] or mine["title"]):
            lost.append((path, mine.get("error", "nothing read")))
            continue
        pairs = [(theirs[path]["title"], mine["title"])]
        pairs += list(zip(theirs[path]["entryTitles"], mine["entryTitles"]))
        for their_title, my_title in pairs:
            if not their_title and not my_title:
                continue
            title_pairs += 1
            if visible(their_title) == visible(my_title):
                title_agree += 1
        for my_title in [mine["title"]] + mine["entryTitles"]:
            if re.search(r"<script|alert\(|javascript:", my_title, re.IGNORECASE):
                scripted.append((path, my_title))
    print(f"readable feeds (feedparser reads >= 1 entry or a title): {len(readable)} of {len(theirs)} files")
    print(f"lost by FeedParser: {len(lost)} ({100 * len(lost) / max(1, len(readable)):.2f} %)")
    for path, reason in lost:
        print(f"  {path}: {reason}")
    print(f"titles agreeing with tags ignored: {title_agree} of {title_pairs} "
          f"({100 * title_agree / max(1, title_pairs):.1f} %)")
    print(f"titles with script text: {len(scripted)}")
    for path, title in scripted:
        print(f"  {path}: {title!r}")


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else "all"
    if step in ("reading", "all"):
        reading()
    if step in ("compare", "all"):
        compare()
