#!/usr/bin/env python3
"""Checks that headless Chromium renders a page of postprocess/report.py: every figure decoded, the sections
there, and a screenshot that is not blank (tests/cli/postprocess_report.sh runs it).

Usage:
    check_report_page.py REPORT.html --sections N [--unused NAME ...] [--screenshot SHOT.png]

1. The page's figures: <img class="figure"> elements whose src is a base64 PNG that decodes (its width and
   height read from the PNG header).
2. chromium --headless --dump-dom of a copy of the page with a script added that writes each image's
   naturalWidth x naturalHeight into the DOM once the page has loaded: every figure is in the rendered DOM,
   decoded at its PNG's size; N sections and the "files not used" one listing each NAME.
3. The figures as the page shows them (the probe writes each image's displayed width too): the smallest text
   of each figure (report.py's data-text-px, in the PNG's pixels) scaled to its displayed width is at least
   MIN_TEXT_PX CSS pixels (a figure too wide for the page shrinks its text below reading size); and nothing
   is cut off at a figure's edge: the PNG's outermost rows and columns are background (a title or label
   reaching an edge was clipped).
4. chromium --headless --screenshot at 1200 x 3000: a PNG of that size, not blank (the pixels vary, and more
   than 5 % of them are not the white background).
Prints what it checked; on a failure one line "check_report_page.py: FAIL: ..." and exit status 1.
"""

import argparse
import base64
import os
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser

PREFIX = "data:image/png;base64,"
PROBE = """<script>
// Added by check_report_page.py: what the browser decoded, written where --dump-dom shows it.
window.addEventListener("load", () => {
  for (const img of document.images) {
    img.setAttribute("data-natural", img.naturalWidth + "x" + img.naturalHeight);
    img.setAttribute("data-shown", String(img.getBoundingClientRect().width));
  }
  document.body.setAttribute("data-probed", String(document.images.length));
});
</script>
"""
WIDTH, HEIGHT = 1200, 3000
MIN_TEXT_PX = 8.0  # the smallest text a figure may show on the page, in CSS pixels (browsers' minimum font size: 6)


class Failure(Exception):
    pass


class Elements(HTMLParser):
    """The figures (their attributes), the h2 titles and the table cells of a page."""

    def __init__(self, text):
        super().__init__()
        self.images, self.titles, self.cells, self.body = [], [], [], {}
        self._text = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and "figure" in attrs.get("class", "").split():
            self.images.append(attrs)
        elif tag == "body":
            self.body = attrs
        elif tag in ("h2", "td"):
            self._text = ""

    def handle_endtag(self, tag):
        if tag in ("h2", "td") and self._text is not None:
            (self.titles if tag == "h2" else self.cells).append(self._text.strip())
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text += data


def png_size(src):
    """(width, height) of a base64 PNG data URI, from its IHDR chunk."""
    if not src.startswith(PREFIX) or len(src) <= len(PREFIX):
        raise Failure(f"an image's src is not a base64 PNG: {src[:60]!r}")
    data = base64.b64decode(src[len(PREFIX):], validate=True)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise Failure("an image's data is not a PNG")
    return struct.unpack(">II", data[16:24])


def cut_at_edge(src):
    """The edge ('top', 'bottom', 'left', 'right') of a base64 PNG whose outermost row or column holds anything
    but the background colour (its corner pixel), or ''."""
    import io

    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(io.BytesIO(base64.b64decode(src[len(PREFIX):])), format="png")[..., :3]
    background = img[0, 0]
    for edge, line in (("top", img[0]), ("bottom", img[-1]), ("left", img[:, 0]), ("right", img[:, -1])):
        if np.abs(line - background).max() > 0.1:
            return edge
    return ""


def chromium(*args, timeout=120):
    """Run headless Chromium (as root it needs --no-sandbox); return its stdout."""
    binary = shutil.which("chromium")
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise Failure(f"chromium {' '.join(args[:-1])} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def check(args):
    page = os.path.abspath(args.page)
    source = Elements(open(page, encoding="utf-8").read())
    sizes = [png_size(img.get("src", "")) for img in source.images]
    if not sizes:
        raise Failure("the page has no figure")
    print(f"page: {len(sizes)} figures, each a base64 PNG that decodes")

    probe = os.path.join(os.path.dirname(page), "probe-" + os.path.basename(page))
    with open(probe, "w", encoding="utf-8") as f:
        f.write(open(page, encoding="utf-8").read().replace("</body>", PROBE + "</body>"))
    # The virtual time budget lets the page load (and the probe run) before the DOM is dumped.
    dom = Elements(chromium("--virtual-time-budget=10000", f"--window-size={WIDTH},{HEIGHT}", "--dump-dom",
                            "file://" + probe))
    if dom.body.get("data-probed") is None:
        raise Failure("the page's load event did not run before the DOM was dumped")
    rendered = [img.get("data-natural", "") for img in dom.images]
    expected = [f"{w}x{h}" for w, h in sizes]
    if rendered != expected:
        raise Failure(f"figures decoded by the browser (naturalWidth x naturalHeight) {rendered}, "
                      f"expected their PNGs' sizes {expected}")
    print(f"chromium --dump-dom: {len(rendered)} figures decoded at their PNGs' sizes")
    smallest = []
    for img, (w, h) in zip(dom.images, sizes):
        name = img.get("alt", "?")
        shown = float(img.get("data-shown", "0"))
        text = float(img.get("data-text-px", "nan")) * shown / w
        if not text >= MIN_TEXT_PX:
            raise Failure(f"figure '{name}': its smallest text is {text:.1f} px on the page (shown {shown:.0f} of "
                          f"{w} px wide), less than {MIN_TEXT_PX:g}: too small to read")
        smallest.append(text)
        edge = cut_at_edge(img.get("src", ""))
        if edge:
            raise Failure(f"figure '{name}': drawn up to its {edge} edge: something is cut off there")
    print(f"figures on the page: smallest text {min(smallest):.1f} px (at least {MIN_TEXT_PX:g}); "
          f"no figure drawn up to an edge")
    titles = dom.titles
    sections = [t for t in titles if t != "files not used"]
    if len(sections) != args.sections:
        raise Failure(f"{len(sections)} sections rendered ({titles}), expected {args.sections}")
    for name in args.unused:
        if "files not used" not in titles or name not in dom.cells:
            raise Failure(f"{name} is not listed among the files not used")
    print(f"sections: {', '.join(titles)}")

    shot = os.path.abspath(args.screenshot)
    if os.path.exists(shot):
        os.remove(shot)
    chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", "file://" + page)
    if not os.path.isfile(shot):
        raise Failure(f"chromium wrote no screenshot {shot}")
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)[..., :3]
    if img.shape[:2] != (HEIGHT, WIDTH):
        raise Failure(f"screenshot of {img.shape[1]} x {img.shape[0]} pixels, expected {WIDTH} x {HEIGHT}")
    spread, inked = float(img.std()), float(np.mean(img.min(axis=2) < 0.95))
    if spread < 0.05 or inked < 0.05:
        raise Failure(f"the screenshot is blank (pixel standard deviation {spread:.3f}, {100 * inked:.1f} % not white)")
    print(f"screenshot {shot}: {WIDTH} x {HEIGHT}, pixel standard deviation {spread:.3f}, "
          f"{100 * inked:.1f} % not white")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("--sections", type=int, required=True, help="sections the page must have")
    parser.add_argument("--unused", nargs="*", default=[], help="files the page must list as not used")
    parser.add_argument("--screenshot", default="screenshot.png")
    args = parser.parse_args()
    try:
        check(args)
    except (Failure, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        print(f"check_report_page.py: FAIL: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
