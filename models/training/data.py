"""Training data: the simulator's detection dataset (`tablecam simulate detections`)
and the real photos in ../shared/real-cards (read in place, never copied).

Geometry conventions are the Rust side's (src/locate, src/classify):
- a card's `quad` is TL, TR, BR, BL of its own upright image, in image pixels;
- an index patch is the axis-aligned square centred on the index box, side
  PATCH_SCALE × the box's larger side (see `patch_square`).
"""
import csv
import json
import math
import os
import threading
import queue

import numpy as np
from PIL import Image, ImageOps

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIM_DIR = os.environ.get("TABLECAM_SIM_DATASET", os.path.join(ROOT, "datasets", "generated", "detect"))
REAL_DIR = os.environ.get("TABLECAM_REAL_CARDS", os.path.join(ROOT, "..", "shared", "real-cards"))
REAL_SPLIT = os.path.join(os.path.dirname(__file__), "real_split.json")
PATCH_SCALE = 1.3
# Where the Rust side looks for an index when none was detected: normalised card
# coordinates of the top-left index centre and its size (fractions of short, long side).
EXPECTED_INDEX = (0.11, 0.16, 0.16, 0.30)


def patch_square(box):
    """(cx, cy, side) of the classifier patch around an index box [x1, y1, x2, y2]."""
    x1, y1, x2, y2 = box
    return (x1 + x2) / 2, (y1 + y2) / 2, PATCH_SCALE * max(x2 - x1, y2 - y1)


# ---------------------------------------------------------------- simulator
def load_sim(split, root=SIM_DIR):
    path = os.path.join(root, "annotations.jsonl")
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: run `tablecam simulate detections` first (or `make train`)")
    out = []
    with open(path) as f:
        for line in f:
            a = json.loads(line)
            if a["split"] == split:
                a["path"] = os.path.join(root, a["image"])
                out.append(a)
    return out


def card_geometry(quad):
    """centre, long-axis angle θ (radians), long side, short side of a card quad (TL, TR, BR, BL)."""
    q = np.asarray(quad, np.float64)
    c = q.mean(axis=0)
    long_v = (q[3] - q[0] + q[2] - q[1]) / 2
    short_v = (q[1] - q[0] + q[2] - q[3]) / 2
    lng, sht = np.linalg.norm(long_v), np.linalg.norm(short_v)
    if sht > lng:  # a landscape card image: its long axis is the other one
        long_v, lng, sht = short_v, sht, lng
    return c, math.atan2(long_v[1], long_v[0]), lng, sht


def expected_index_boxes(quad):
    """The two index boxes the Rust side probes on a card with no detected index."""
    q = np.asarray(quad, np.float64)
    c, th, lng, sht = card_geometry(q)
    u, v, fw, fh = EXPECTED_INDEX
    out = []
    for uu, vv in ((u, v), (1 - u, 1 - v)):
        top = q[0] + (q[1] - q[0]) * uu
        bot = q[3] + (q[2] - q[3]) * uu
        p = top + (bot - top) * vv
        w, h = fw * sht, fh * lng
        # axis-aligned box of the rotated index rectangle
        cs, sn = abs(math.cos(th)), abs(math.sin(th))
        bw, bh = h * cs + w * sn, h * sn + w * cs
        out.append([p[0] - bw / 2, p[1] - bh / 2, p[0] + bw / 2, p[1] + bh / 2])
    return out


# ---------------------------------------------------------------- real photos
def load_real():
    """Real photos with their labelled index corners: [{path, file, corners: [(code, box)], cards: [...]}]."""
    labels = os.path.join(REAL_DIR, "labels.csv")
    if not os.path.exists(labels):
        raise SystemExit(f"{labels} not found: the real photos live in ../shared/real-cards "
                         "(set TABLECAM_REAL_CARDS to another copy)")
    by_file = {}
    with open(os.path.join(REAL_DIR, "corners.csv")) as f:
        for r in csv.DictReader(f):
            d = by_file.setdefault(r["file"], {"file": r["file"], "corners": [], "cards": []})
            d["corners"].append((r["rank"] + r["suit"], [float(r[k]) for k in ("x1", "y1", "x2", "y2")]))
    with open(labels) as f:
        for r in csv.DictReader(f):
            d = by_file.setdefault(r["file"], {"file": r["file"], "corners": [], "cards": []})
            d["cards"].append((r["rank"] + r["suit"], [float(r[k]) for k in ("x1", "y1", "x2", "y2")],
                               int(r["n_corners"])))
    files = sorted(os.listdir(os.path.join(REAL_DIR, "images")))
    out = []
    for fn in files:
        d = by_file.get(fn, {"file": fn, "corners": [], "cards": []})
        d["path"] = os.path.join(REAL_DIR, "images", fn)
        out.append(d)
    return out


def real_split(real):
    """Held-out split of the real photos, fixed in real_split.json: contiguous blocks of 8
    files (consecutive frames are near-duplicates, so neighbours must share a split),
    every 5th and 5th+2 block to `test` (about 40%)."""
    if os.path.exists(REAL_SPLIT):
        with open(REAL_SPLIT) as f:
            return json.load(f)
    files = sorted(r["file"] for r in real)
    split = {"train": [], "test": []}
    for i, fn in enumerate(files):
        split["test" if (i // 8) % 5 in (0, 2) else "train"].append(fn)
    with open(REAL_SPLIT, "w") as f:
        json.dump(split, f, indent=0)
        f.write("\n")
    return split


def open_rgb(path, draft_scale=1.0):
    im = Image.open(path)
    if draft_scale < 0.5 and im.format == "JPEG":
        im.draft("RGB", (int(im.width * draft_scale * 1.8), int(im.height * draft_scale * 1.8)))
    im = ImageOps.exif_transpose(im)
    return im.convert("RGB")


# ---------------------------------------------------------------- photometric augmentation
def photometric(x, rng):
    """x: float32 HxWx3 in 0..255 → augmented, clipped 0..255."""
    if rng.random() < 0.15:
        g = x.mean(axis=2, keepdims=True)
        x = np.repeat(g, 3, axis=2)
    if rng.random() < 0.3:
        x = x[:, :, rng.permutation(3)]
    x = x * rng.uniform(0.8, 1.2, size=3)[None, None, :]
    m = x.mean()
    x = (x - m) * rng.uniform(0.65, 1.35) + m * rng.uniform(0.6, 1.4)
    if rng.random() < 0.05:
        x = 255.0 - x
    if rng.random() < 0.5:
        x = x + rng.normal(0, rng.uniform(1, 9), size=x.shape)
    return np.clip(x, 0, 255)


class Prefetch:
    """Runs `make()` in background threads (PIL decodes without the GIL) and yields its results."""

    def __init__(self, make, n_threads=2, depth=6):
        self.q = queue.Queue(depth)
        for i in range(n_threads):
            threading.Thread(target=self._run, args=(make, i), daemon=True).start()

    def _run(self, make, i):
        rng = np.random.default_rng(1000 + i)
        while True:
            self.q.put(make(rng))

    def __next__(self):
        return self.q.get()
