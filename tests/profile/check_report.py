#!/usr/bin/env python3
"""Checks a page `smelt report` wrote, without a browser, and what the
browser probe found in it.

    check_report.py page REPORT.html [MAX_BYTES]
        self-contained (no script, style or image from elsewhere), every
        section present, and each graph page draws at most
        REPORT_PAGE_NODES op nodes, all the graph's op nodes over its
        pages; the page stays under MAX_BYTES.
    check_report.py probe DOM.html
        the <pre id="probe"> JSON of browser_probe.js: no console or
        load errors, every SVG with a size, sorting and links working.
"""
import html
import json
import re
import sys

PAGE_NODES = 60  # REPORT_PAGE_NODES in tools/smelt/report.h


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_page(path, max_bytes):
    text = open(path, encoding="utf-8").read()
    if max_bytes and len(text.encode()) > max_bytes:
        fail("%s is %d bytes, more than %d" % (path, len(text.encode()),
                                                max_bytes))
    for bad in (r"<script[^>]*\bsrc=", r"<link\b", r"@import", r"url\(",
                r"<img\b", r"<iframe\b"):
        if re.search(bad, text, re.I):
            fail("%s loads something from elsewhere (%s)" % (path, bad))
    for sec in ("summary", "graphs", "passes", "profile", "roof", "memory",
                "check"):
        if 'id=%s>' % sec not in text:
            fail("%s lacks the %s section" % (path, sec))
    for set_id in ("g-before", "g-after"):
        pages = re.findall(r'<div class=page id="%s-p(\d+)"[^>]*>(.*?)</div>'
                           % set_id, text, re.S)
        if not pages:
            fail("%s: graph %s has no page" % (path, set_id))
        total = 0
        for num, body in pages:
            ops = 0
            for g in re.findall(r'<g id="node\d+" class="node">(.*?)</g>',
                                body, re.S):
                title = re.search(r"<title>(.*?)</title>", g).group(1)
                if re.fullmatch(r"n\d+", title) and "(page " not in g:
                    ops += 1
            if ops > PAGE_NODES:
                fail("%s: %s page %s draws %d op nodes" % (path, set_id, num,
                                                           ops))
            total += ops
        m = re.search(r"<h3>%s \((\d+) nodes\)</h3>" % (
            "As loaded" if set_id == "g-before" else "After optimization"),
            text)
        if m and total != int(m.group(1)):
            fail("%s: %s draws %d op nodes over %d pages of %s"
                 % (path, set_id, total, len(pages), m.group(1)))
        print("%s: %d op nodes on %d page(s)" % (set_id, total, len(pages)))
    rows = len(re.findall(r"<tr id=\"step-", text))
    if rows < 2:
        fail("%s: profile table has %d rows" % (path, rows))
    print("%s: %d bytes, %d profile rows" % (path, len(text.encode()), rows))


def check_probe(path):
    dom = open(path, encoding="utf-8").read()
    # the last one: the probe's own source quotes the element
    found = re.findall(r'<pre id="probe">(\{.*?)</pre>', dom, re.S)
    if not found:
        fail("the probe did not run (no <pre id=probe> in the DOM)")
    p = json.loads(html.unescape(found[-1]))
    if p["errors"]:
        fail("console errors: %s" % p["errors"])
    if len(p["svgs"]) < 4:
        fail("only %d SVGs" % len(p["svgs"]))
    for s in p["svgs"]:
        if not (s["w"] > 0 and s["h"] > 0):
            fail("SVG %s renders %gx%g" % (s["id"], s["w"], s["h"]))
    for s in p["sort"]:
        if not (s["asc"] and s["desc"] and s["rows"] > 1):
            fail("sorting by %s: %s" % (s["column"], s))
    if not p["link"] or p["link"]["row"] != p["link"]["node"]:
        fail("clicking a graph node did not mark its row: %s" % p["link"])
    if p["pager"] is not None and not p["pager"]["shown"].endswith("-p2"):
        fail("the pager's next shows %s" % p["pager"])
    print("browser: %d SVGs drawn, sorted by %s, node %s links to its row, "
          "no console errors (loaded in %.0f ms)"
          % (len(p["svgs"]), ", ".join(s["column"] for s in p["sort"]),
             p["link"]["node"], p["load_ms"]))


if sys.argv[1] == "page":
    check_page(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
else:
    check_probe(sys.argv[2])
