"""The docs site: it builds with `mkdocs build --strict`, and its rules page has an anchor for every rule id the
code can emit (the ids `check` prints, and `check --format json` links to)."""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import cast

import pytest
from markdown.extensions.toc import slugify

from chatmend.cli._check import RULES_PAGE, rule_anchor

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RULE_ID = r"R\d|[A-Z]{2}\d{1,2}[a-z]?|EMPTY|SHAPE|UNSUPPORTED"
"""What a rule id looks like: the neutral rules (`R4`), a provider's (`AN6`, `BR1x`), the whole-body ones."""


def emitted_rule_ids() -> dict[str, set[str]]:
    """Every rule id in the code, with the modules it is in: each string constant that is one (`"AN6"`, a dict key
    of a checker's texts, a `ClassVar` such as `unanswered_code`), and each `: ID: ` inside a longer string (the
    neutral problems and the store's own lines are written `PATH: CODE: message`)."""
    whole = re.compile(rf"^(?:{RULE_ID})$")
    inside = re.compile(rf": ({RULE_ID}): ")
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "src" / "chatmend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            where = str(path.relative_to(ROOT))
            if whole.match(node.value):
                found.setdefault(node.value, set()).add(where)
            for match in inside.finditer(node.value):
                found.setdefault(match.group(1), set()).add(where)
    return found


def heading_anchors(markdown: str) -> set[str]:
    """The anchors MkDocs gives the headings of a page (its `toc` extension's slugs), outside code blocks."""
    anchors: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^#{1,6} (.+?)\s*$", line)):
            anchors.add(slugify(match.group(1), "-"))
    return anchors


def test_the_walk_finds_the_rule_ids_of_every_family() -> None:
    ids = emitted_rule_ids()
    for known in ("R1", "R3", "R4", "R5", "R6", "OC1", "OR1", "AN1", "AT1", "GE1", "KI1", "DS1", "MI1", "BR1",
                  "GQ1", "XA1", "TG1", "OL1", "EMPTY", "SHAPE", "UNSUPPORTED"):
        assert known in ids, known
    assert len(ids) >= 90


def test_every_rule_id_the_code_can_emit_has_its_anchor_on_the_rules_page() -> None:
    anchors = heading_anchors((DOCS / "rules.md").read_text(encoding="utf-8"))
    missing = {code: sorted(where) for code, where in emitted_rule_ids().items()
               if rule_anchor(code).split("#")[1] not in anchors}
    assert not missing, f"rule ids with no heading in docs/rules.md: {missing}"


def test_a_rule_anchor_is_the_lower_case_id_on_the_rules_page() -> None:
    assert RULES_PAGE == "docs/rules.md"
    assert rule_anchor("AN6") == "docs/rules.md#an6"
    assert rule_anchor("BR1x") == "docs/rules.md#br1x"
    assert (ROOT / RULES_PAGE).is_file()


def test_what_check_finds_in_the_shipped_examples_is_documented() -> None:
    """The walk is of the source; this runs the checkers: every code they print on the shipped examples is one the
    walk found (so the walk misses no way of writing an id)."""
    from chatmend import providers

    ids = emitted_rule_ids()
    seen: set[str] = set()
    for path in sorted((ROOT / "examples" / "requests").glob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        for name in providers.names():
            seen.update(p.code for p in providers.get(name).check(body))
    assert seen, "the shipped request bodies hold problems for some provider"
    assert seen <= set(ids), seen - set(ids)


def test_no_file_points_outside_the_repository_for_the_spec_or_the_rules() -> None:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    needles = ("shared/" + "spec", "provider" + "-rules", "shared/" + "notes")  # split: this file is checked too
    offenders = []
    for name in listed.splitlines():
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".toml", ".yml", ".yaml", ".txt", "") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(needle in text for needle in needles):
            offenders.append(name)
    assert offenders == [], offenders


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs site, built once a session with `mkdocs build --strict` (a warning fails the build)."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    for page in ("index.html", "rules/index.html", "api/index.html", "cli/check/index.html",
                 "cli/completion/index.html", "changelog/index.html", "speed/index.html"):
        assert (site / page).is_file(), page


def test_the_built_rules_page_has_every_rule_anchor(site: Path) -> None:
    html = (site / "rules" / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="([^"]+)"', html))
    missing = sorted(code for code in emitted_rule_ids() if code.lower() not in ids)
    assert missing == []


def test_the_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "repair_history" in html
    assert "Make a saved, resumed or interrupted history valid to send" in html or "RepairResult" in html


# --- the site in a browser ----------------------------------------------------------------------------------------

_PROBE = """<!doctype html><html><body><pre id="out">not loaded</pre>
<iframe id="page" src="PAGE" style="width:1200px;height:800px"></iframe>
<script>
document.getElementById("page").addEventListener("load", function () {
  var frame = this;
  setTimeout(function () {
    var d = frame.contentDocument, w = frame.contentWindow;
    var target = w.location.hash ? d.getElementById(w.location.hash.slice(1)) : null;
    document.getElementById("out").textContent = JSON.stringify({
      title: d.title, h1: (d.querySelector("h1") || {}).textContent || null,
      h2: Array.prototype.map.call(d.querySelectorAll("h2"), function (h) { return h.textContent; }),
      nav: !!d.querySelector("nav.md-nav"), target: !!target, scrollY: w.scrollY,
      targetTop: target ? target.getBoundingClientRect().top : null});
  }, 1000);
});
</script></body></html>"""
"""A page served beside the site that loads one of its pages in a frame, as a visitor's browser would (its scripts,
its styles), and writes what the visitor sees: the title, the headings, whether the URL's anchor exists and the
page scrolled to it."""


def _chromium() -> str:
    """Debian's chromium, installed here when missing (`apt-get update` once, then `apt-get install -y chromium`,
    as root); the test skips, saying why, when it cannot be."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("chromium is not installed, and apt-get cannot install it here (not Debian, or not root)")
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if done.returncode != 0:
            pytest.skip(f"chromium could not be installed: {' '.join(command)} failed: {done.stderr[-300:]}")
    found = shutil.which("chromium")
    if not found:
        pytest.skip("chromium could not be installed: apt-get gave no chromium command")
    return found


@pytest.fixture(scope="session")
def served(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A copy of the built site served on 127.0.0.1 (the probe pages are written beside it); yields its base URL
    and its folder."""
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(site, root / "site")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root / "site")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", root / "site"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _look(chromium: str, base: str, site_root: Path, page: str, tmp_path: Path) -> dict[str, object]:
    """What headless Chromium shows of `page` (a path with an optional #anchor) of the served site."""
    probe = site_root / f"probe-{abs(hash(page))}.html"
    probe.write_text(_PROBE.replace("PAGE", page), encoding="utf-8")
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000", "--dump-dom",
                           base + probe.name], capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="out">(.*?)</pre>', done.stdout, re.DOTALL)
    assert match, f"chromium showed no probe page (exit {done.returncode}): {done.stderr[-2000:]}"
    seen: dict[str, object] = json.loads(html.unescape(match.group(1)))
    return seen


def test_the_site_in_a_browser_renders_and_a_rule_anchor_resolves(served: tuple[str, Path], tmp_path: Path) -> None:
    chromium = _chromium()
    base, site_root = served
    home = _look(chromium, base, site_root, "./", tmp_path)
    assert home["h1"] == "chatmend¶"
    assert "Three ways in¶" in cast(list[str], home["h2"])
    assert home["nav"] is True
    rules = _look(chromium, base, site_root, "rules/#an6", tmp_path)
    assert rules["h1"] == "The rules¶"
    assert "The repair spec¶" in cast(list[str], rules["h2"])
    assert rules["target"] is True
    assert cast(float, rules["scrollY"]) > 1000  # the browser went down the page to the anchor
    assert 0 <= cast(float, rules["targetTop"]) < 400  # and the rule's heading is at the top of the window


def test_the_speed_page_is_the_bench_readme() -> None:
    """docs/speed.md is bench/README.md under the site's title: the method and the current figures, each with its
    command (the history of the runs is in the changelog)."""
    bench = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    speed = (DOCS / "speed.md").read_text(encoding="utf-8")
    assert speed.split("\n", 3)[3] == bench.split("\n", 1)[1]
    assert "## The current figures" in bench and "## How it is measured" in bench
    assert len(bench.splitlines()) < 150
    assert "## Speed work, up to 5 December 2026" in (DOCS / "changelog.md").read_text(encoding="utf-8")
