"""Card faces of random index styles: any installed font, suit shapes drawn from random
parameters, random index size, placement and colours. A training-only stand-in for "decks we have
never seen": the simulator's 15 training designs are too few for the classifier to learn what a
rank or a suit *is* apart from how those designs print it (top-1 on never-seen designs was 69 %).

Duck-types `patches.Faces` (`sheets`, `face(design, label)`), so `corners.py --source fonts`
cuts upright card-corner patches from these faces through the same camera model as from the deck
artwork. Every "design" is one style drawn from a seeded generator, so the patches are
reproducible given the same font packages (`FONT_PACKAGES`, which scripts/train.sh installs;
other installed fonts are ignored). Only fonts whose family is in none of the simulator's validation
or test designs' styles are used for ranks, so those designs stay unseen.

What is drawn, per face (400 px high, like the face sheets): the stock (white, ivory, cream; a
dark stock with gold or white ink now and then, like the real gold-on-black deck), a border, the
two indexes (top-left, and bottom-right turned 180°: `corners.py` reads either), pips of number
cards at the usual places, a framed court picture, an ace's large pip. Only the top-left third of
the card reaches a corner patch, so the body is rough on purpose.
"""
import functools
import math
import os
import subprocess
import zlib

import numpy as np
from PIL import Image, ImageDraw, ImageFont

H = 400  # face height in pixels, as the face sheets
SS = 2  # drawn at twice the size, then area-sampled
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUIT_CHARS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
# families whose faces the simulator's validation designs use for their index (proc-classic:
# DejaVu): left out of the rank fonts so that validation stays a measure of unseen styles
EXCLUDED_RANK_FAMILIES = ("DejaVu",)
NOT_TEXT = ("Math", "Symbol", "D050000L", "Z003")


# the Debian packages whose fonts are drawn (scripts/train.sh installs them): fonts installed by
# anything else are ignored, so that the same styles come out on every machine
FONT_PACKAGES = ("fonts-dejavu-core", "fonts-dejavu-extra", "fonts-freefont-ttf", "fonts-liberation",
                 "fonts-urw-base35", "fonts-texgyre", "fonts-texgyre-math")


@functools.lru_cache(maxsize=None)
def _package_fonts():
    files = set()
    for pkg in FONT_PACKAGES:
        out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"font_faces: Debian package {pkg} is not installed; run scripts/train.sh "
                             f"(it installs {' '.join(FONT_PACKAGES)})")
        files |= {os.path.realpath(f) for f in out.stdout.split()}
    return files


def _fc_list(pattern):
    out = subprocess.run(["fc-list", pattern, "file"], capture_output=True, text=True, check=False).stdout
    ours = _package_fonts()
    return sorted({f for f in (line.split(":")[0].strip() for line in out.splitlines())
                   if f.lower().endswith((".ttf", ".otf")) and os.path.realpath(f) in ours})


def rank_fonts():
    """Installed TrueType/OpenType text fonts (sorted paths), minus the excluded families."""
    return [f for f in _fc_list(":lang=en")
            if not any(x.lower() in f.lower() for x in NOT_TEXT + EXCLUDED_RANK_FAMILIES)]


def suit_fonts():
    """Installed fonts that have all four suit symbols."""
    return [f for f in _fc_list(":charset=2660 2663 2665 2666") if "Math" not in f]


# --- suit shapes from parameters (unit box: x, y in 0..1, y down) ----------------------------------

def _heart_outline(p, n=80):
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - p["lobe"] * 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    x = (x - x.min()) / np.ptp(x)
    y = (y - y.min()) / np.ptp(y)
    return np.c_[x, y]


def _stem(p, top, bottom):
    w = p["stem_w"]
    f = p["flare"]
    return np.array([[0.5 - w / 2, top], [0.5 + w / 2, top], [0.5 + w / 2 + f, bottom], [0.5 - w / 2 - f, bottom]])


def suit_polygons(suit, p):
    """Polygons (unit box) and circles ((cx, cy, r) lists) of a suit symbol with parameters p."""
    if suit == "H":
        return [_heart_outline(p)], []
    if suit == "S":
        body = _heart_outline(p)
        body[:, 1] = (1 - body[:, 1]) * p["body_h"]
        return [body, _stem(p, p["body_h"] * 0.7, 1.0)], []
    if suit == "D":
        c, a = p["bow"], p["diamond_w"]
        t = np.linspace(0, 1, 12)
        pts = []
        corners = [(0.5, 0), (0.5 + a / 2, 0.5), (0.5, 1), (0.5 - a / 2, 0.5), (0.5, 0)]
        for (x0, y0), (x1, y1) in zip(corners, corners[1:]):
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            nx, ny = (y1 - y0), -(x1 - x0)  # outward for this winding
            bx, by = mx + c * nx, my + c * ny  # bowed (c > 0 out, c < 0 in)
            for s in t[:-1]:
                pts.append(((1 - s) ** 2 * x0 + 2 * s * (1 - s) * bx + s * s * x1,
                            (1 - s) ** 2 * y0 + 2 * s * (1 - s) * by + s * s * y1))
        return [np.array(pts)], []
    r, sp = p["club_r"], p["club_spread"]
    cy = p["body_h"] * 0.5
    circles = [(0.5, r, r), (0.5 - sp, cy + r * 0.35, r), (0.5 + sp, cy + r * 0.35, r)]
    mid = np.array([[0.5 - r * 0.6, r], [0.5 + r * 0.6, r], [0.5 + r * 0.6, cy + r], [0.5 - r * 0.6, cy + r]])
    return [mid, _stem(p, cy, 1.0)], circles


def random_suit_params(rng):
    return {"lobe": rng.uniform(0.6, 1.4), "body_h": rng.uniform(0.68, 0.82), "stem_w": rng.uniform(0.05, 0.16),
            "flare": rng.uniform(0.02, 0.2), "bow": rng.uniform(-0.22, 0.08), "diamond_w": rng.uniform(0.6, 0.9),
            "club_r": rng.uniform(0.2, 0.27), "club_spread": rng.uniform(0.2, 0.27), "aspect": rng.uniform(0.8, 1.1)}


@functools.lru_cache(maxsize=256)
def _font(path, size):
    """A loaded font: every face of a style draws with the same two."""
    return ImageFont.truetype(path, size)


class Style:
    """One random index style (a "design")."""

    def __init__(self, rng, rank_fonts_, suit_fonts_):
        self.rank_font = rank_fonts_[rng.integers(len(rank_fonts_))]
        self.condense = 1.0 if rng.random() < 0.6 else rng.uniform(0.7, 1.0)
        self.ten_squeeze = rng.uniform(0.7, 1.0) if rng.random() < 0.5 else 1.0
        self.suit_font = suit_fonts_[rng.integers(len(suit_fonts_))] if rng.random() < 0.35 else None
        self.suit = random_suit_params(rng)
        self.aspect = 0.714 if rng.random() < 0.7 else 0.636  # poker / bridge
        self.w = int(round(H * self.aspect))
        self.rank_h = rng.uniform(0.06, 0.15) * H
        self.suit_h = self.rank_h * rng.uniform(0.55, 1.0)
        self.cx = rng.uniform(0.075, 0.13) * self.w + self.rank_h * 0.2
        self.top = rng.uniform(0.025, 0.07) * H
        self.gap = self.rank_h * rng.uniform(0.04, 0.3)
        r = rng.random()
        if r < 0.1:  # dark stock, one ink for every suit (the real gold-on-black deck)
            self.stock = tuple(int(v) for v in rng.uniform(0, 45, 3))
            ink = tuple(int(v) for v in (rng.uniform([170, 130, 30], [240, 200, 110]) if rng.random() < 0.7
                                         else rng.uniform(200, 255, 3)))
            self.ink = {s: ink for s in "SHDC"}
        else:
            self.stock = tuple(int(v) for v in ([255, 255, 255] if r < 0.6 else rng.uniform([238, 230, 205], [255, 252, 240])))
            red = tuple(int(v) for v in rng.uniform([160, 0, 0], [235, 50, 60]))
            black = tuple(int(v) for v in rng.uniform(0, 45, 3))
            self.ink = {"H": red, "D": red, "S": black, "C": black}
            if rng.random() < 0.15:  # four-colour deck
                self.ink["D"] = tuple(int(v) for v in rng.uniform([0, 40, 140], [40, 100, 220]))
                self.ink["C"] = tuple(int(v) for v in rng.uniform([0, 100, 20], [40, 160, 80]))
        self.border = rng.random() < 0.4
        self.radius = rng.uniform(0.03, 0.07) * self.w
        self.pip_cols = rng.uniform(0.26, 0.34)
        self.court = tuple(int(v) for v in rng.uniform(0, 255, 3))
        self.back = (tuple(int(v) for v in rng.uniform(0, 200, 3)), int(rng.integers(3)))
        ten_w = self.rank_h * 1.2 * self.condense * self.ten_squeeze
        # the index box (fractions of the face): the widest rank over its suit
        self.rect = [max(0.0, (self.cx - ten_w / 2) / self.w), self.top / H,
                     (self.cx + ten_w / 2) / self.w, (self.top + self.rank_h + self.gap + self.suit_h) / H]

    # -- drawing ---------------------------------------------------------------------------------

    def _rank_mask(self, rank):
        size = int(self.rank_h * SS * 1.6)
        font = _font(self.rank_font, size)
        img = Image.new("L", (size * 3, size * 2), 0)
        ImageDraw.Draw(img).text((size // 4, size // 4), rank, font=font, fill=255)
        box = img.getbbox()
        if box is None:
            return None
        img = img.crop(box)
        h = max(1, int(round(self.rank_h * SS)))
        sq = self.condense * (self.ten_squeeze if rank == "10" else 1.0)
        w = max(1, int(round(img.width * h / img.height * sq)))
        return img.resize((w, h), Image.LANCZOS)

    def _suit_mask(self, suit, h):
        h = max(2, int(round(h)))
        if self.suit_font:
            font = _font(self.suit_font, int(h * 1.6))
            img = Image.new("L", (h * 3, h * 3), 0)
            ImageDraw.Draw(img).text((h // 2, h // 2), SUIT_CHARS[suit], font=font, fill=255)
            box = img.getbbox()
            if box is not None:
                img = img.crop(box)
                return img.resize((max(1, int(round(img.width * h / img.height))), h), Image.LANCZOS)
        w = max(2, int(round(h * self.suit["aspect"] * (0.85 if suit == "D" else 1.0))))
        img = Image.new("L", (w * 4, h * 4), 0)
        d = ImageDraw.Draw(img)
        polys, circles = suit_polygons(suit, self.suit)
        sc = np.array([w * 4, h * 4])
        for poly in polys:
            d.polygon([tuple(q) for q in poly * sc], fill=255)
        for cx, cy, r in circles:
            d.ellipse([(cx - r) * sc[0], (cy - r) * sc[1], (cx + r) * sc[0], (cy + r) * sc[1]], fill=255)
        return img.resize((w, h), Image.LANCZOS)

    def _stamp(self, img, mask, x, y, colour, turned=False):
        if turned:
            mask = mask.rotate(180)
        layer = Image.new("RGBA", mask.size, colour + (255,))
        img.paste(layer, (int(round(x)), int(round(y))), mask)

    def _pip(self, img, suit, u, v, size):
        m = self._suit_mask(suit, size * SS)
        W, Hh = img.size
        self._stamp(img, m, u * W - m.width / 2, v * Hh - m.height / 2, self.ink[suit], turned=v > 0.5)

    def face(self, label):
        W, Hh = self.w * SS, H * SS
        img = Image.new("RGBA", (W, Hh), self.stock + (255,))
        d = ImageDraw.Draw(img)
        if label == "back":
            col, pattern = self.back
            m = int(0.06 * W)
            d.rectangle([m, m, W - m, Hh - m], fill=col + (255,))
            step = int(0.05 * W)
            light = tuple(min(255, c + 70) for c in col) + (255,)
            for k in range(-Hh, W + Hh, step):
                if pattern in (0, 2):
                    d.line([(k, m), (k + Hh, Hh + m)], fill=light, width=SS * 2)
                if pattern in (1, 2):
                    d.line([(k, Hh + m), (k + Hh, m)], fill=light, width=SS * 2)
            d.rectangle([0, 0, m, Hh], fill=self.stock + (255,))
            d.rectangle([W - m, 0, W, Hh], fill=self.stock + (255,))
            d.rectangle([0, 0, W, m], fill=self.stock + (255,))
            d.rectangle([0, Hh - m, W, Hh], fill=self.stock + (255,))
        else:
            rank, suit = label[:-1], label[-1]
            ink = self.ink[suit]
            if self.border:
                b = int(0.035 * W)
                d.rectangle([b, b, W - b, Hh - b], outline=ink + (255,), width=SS)
            n = {"A": 1, "J": 0, "Q": 0, "K": 0}.get(rank)
            n = int(rank) if n is None else n
            pip = 0.16 * self.w
            # pips keep clear of the index, as printed decks do
            c0 = max(self.pip_cols, self.rect[2] + 0.1)
            c1 = 1 - c0
            if rank in ("J", "Q", "K"):
                fx0, fy0, fx1, fy1 = int(0.22 * W), int(0.12 * Hh), int(0.78 * W), int(0.88 * Hh)
                d.rectangle([fx0, fy0, fx1, fy1], outline=ink + (255,), width=SS * 2)
                # crc32, not hash(): str hashes differ from process to process
                rng = np.random.default_rng(zlib.crc32(f"{self.rank_font}:{label}".encode()))
                for _ in range(14):
                    x, y = rng.uniform(fx0, fx1), rng.uniform(fy0, (fy0 + fy1) / 2)
                    r = rng.uniform(0.03, 0.12) * W
                    c = [self.court, ink, (30, 30, 30), (220, 180, 40)][rng.integers(4)]
                    for yy in (y, fy0 + fy1 - y):  # courts are drawn twice, turned
                        d.ellipse([x - r, yy - r, x + r, yy + r], fill=c + (255,))
                self._pip(img, suit, c0 + 0.04, 0.2, self.suit_h / 400 * H * 1.1)
            elif n == 1:
                self._pip(img, suit, 0.5, 0.5, 0.33 * self.w)
            else:
                for u, v in PIPS[n]:
                    self._pip(img, suit, c0 if u == 0 else c1 if u == 2 else 0.5, v, pip)
            r = self._rank_mask(rank)
            s = self._suit_mask(suit, self.suit_h * SS)
            if r is not None:
                for turned in (False, True):
                    x, y = self.cx * SS - r.width / 2, self.top * SS
                    sx, sy = self.cx * SS - s.width / 2, (self.top + self.rank_h + self.gap) * SS
                    if turned:  # the bottom-right index: the same, turned about the card's centre
                        x, y = W - x - r.width, Hh - y - r.height
                        sx, sy = W - sx - s.width, Hh - sy - s.height
                    self._stamp(img, r, x, y, ink, turned)
                    self._stamp(img, s, sx, sy, self.ink[suit], turned)
        img = img.resize((self.w, H), Image.BOX)
        # rounded corners
        mask = Image.new("L", (self.w * SS, H * SS), 0)
        ImageDraw.Draw(mask).rounded_rectangle([0, 0, self.w * SS - 1, H * SS - 1], radius=self.radius * SS, fill=255)
        img.putalpha(mask.resize((self.w, H), Image.BOX))
        return img


# pip places of number cards: (column 0/1/2, v)
_SIDE = lambda vs: [(0, v) for v in vs] + [(2, v) for v in vs]
PIPS = {
    2: [(1, 0.2), (1, 0.8)],
    3: [(1, 0.2), (1, 0.5), (1, 0.8)],
    4: _SIDE([0.2, 0.8]),
    5: _SIDE([0.2, 0.8]) + [(1, 0.5)],
    6: _SIDE([0.2, 0.5, 0.8]),
    7: _SIDE([0.2, 0.5, 0.8]) + [(1, 0.35)],
    8: _SIDE([0.2, 0.5, 0.8]) + [(1, 0.35), (1, 0.65)],
    9: _SIDE([0.2, 0.4, 0.6, 0.8]) + [(1, 0.5)],
    10: _SIDE([0.2, 0.4, 0.6, 0.8]) + [(1, 0.3), (1, 0.7)],
}


class FontFaces:
    """`patches.Faces` for `n` random styles drawn with `seed`. Faces are drawn on demand; the
    cache holds the faces of the last few styles only (a style is drawn once per patch)."""

    def __init__(self, n=4000, seed=1):
        rf, sf = rank_fonts(), suit_fonts()
        if not rf or not sf:
            raise SystemExit("font_faces: fc-list found none of the fonts of " + " ".join(FONT_PACKAGES))
        rng = np.random.default_rng(seed)
        self.styles = {f"font-{i}": Style(rng, rf, sf) for i in range(n)}
        self.sheets = [{"design": k, "index": {"rect": s.rect}} for k, s in self.styles.items()]
        self.cache = {}

    def face(self, design, label):
        k = (design, label)
        if k not in self.cache:
            if len(self.cache) > 800:
                self.cache.clear()
            self.cache[k] = self.styles[design].face(label)
        return self.cache[k]


if __name__ == "__main__":  # a contact sheet: python font_faces.py OUT.png
    import sys
    ff = FontFaces(24, seed=3)
    sheet = Image.new("RGB", (8 * 150, 6 * 210), "darkgreen")
    labels = ["10S", "QH", "7C", "AD", "back", "9S"]
    for i, d in enumerate(list(ff.styles)[:8]):
        for j, lab in enumerate(labels):
            f = ff.face(d, lab).resize((143, 200))
            sheet.paste(f, (i * 150, j * 210), f)
    sheet.save(sys.argv[1])
    print(len(rank_fonts()), "rank fonts,", len(suit_fonts()), "suit fonts")
