"""Index-patch synthesiser: unlimited labelled classifier patches from the deck artwork.

    python models/training/patches.py --faces var/faces --split train --n 200000 --out var/training/synth-train.npz

The scene dataset (`tablecam simulate detections`) gives ~6 index patches per rendered table
(0.1 CPU-s), far too few for 54 classes over many deck designs. Here each patch is drawn
directly: one card face (from `tablecam simulate detections --faces DIR`) placed so that its
printed index lands where the Rust side cuts it, at a random size, angle and mild
perspective, over a random surface with neighbouring cards, then degraded the way a camera
degrades it (rendered at its true low resolution with area sampling, blur, noise, JPEG,
lighting, glare). The geometry is the Rust side's exactly (src/classify `patch_rect`): the
patch is the axis-aligned square of side PATCH_SCALE × the larger side of the index's image
bounding box, centred on it; a stored patch covers STORE_SCALE × that side (room for the
training-time rotation, see train_classifier.augment).

Labels: the card; `back` for the same place on a face-down card; `unknown` for a place on a
face that is not its index (pips, court art, edges) or on the surface, and for an index
hidden by more than half.
"""
import argparse
import io
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

import nets

STORE = 64
STORE_SCALE = 1.6
PATCH_SCALE = 1.3
LABELS = nets.labels()
IDX = {l: i for i, l in enumerate(LABELS)}
BACK, UNKNOWN = IDX["back"], IDX["unknown"]
CODES = LABELS[:52]


class Faces:
    """The face sheets of one split, loaded lazily (RGBA, 400 px high)."""

    def __init__(self, root, split):
        with open(os.path.join(root, "faces.json")) as f:
            self.sheets = [s for s in json.load(f) if s["split"] == split]
        if not self.sheets:
            raise SystemExit(f"no design of split {split} in {root}/faces.json")
        self.root = root
        self.cache = {}

    def face(self, design, label):
        k = (design, label)
        if k not in self.cache:
            self.cache[k] = Image.open(os.path.join(self.root, design, f"{label}.png")).convert("RGBA")
        return self.cache[k]


def surface(rng, size):
    """A table surface: felt of a random colour with grain and a lighting gradient, sometimes
    printed lines (the layout) or a non-casino texture."""
    base = rng.uniform(0, 255, 3) if rng.random() < 0.3 else \
        np.array([[20, 90, 40], [25, 60, 120], [120, 25, 30], [20, 90, 90], [40, 40, 40]][rng.integers(5)]) * \
        rng.uniform(0.6, 1.4)
    img = np.ones((size, size, 3), np.float32) * base[None, None, :]
    img += rng.normal(0, rng.uniform(2, 14), (size, size, 1)) * rng.uniform(0.5, 1.0, 3)[None, None, :]
    yy, xx = np.mgrid[0:size, 0:size] / max(size, 1)
    img *= (1 + rng.uniform(-0.3, 0.3) * (xx - 0.5) + rng.uniform(-0.3, 0.3) * (yy - 0.5))[..., None]
    im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    if rng.random() < 0.3:
        d = ImageDraw.Draw(im)
        col = tuple(int(v) for v in rng.uniform(150, 255, 3))
        for _ in range(rng.integers(1, 4)):
            p = rng.uniform(-0.2, 1.2, 4) * size
            d.line([tuple(p[:2]), tuple(p[2:])], fill=col, width=int(max(1, size * rng.uniform(0.005, 0.03))))
    return im.convert("RGBA")


def card_matrix(rng, face_w, face_h, index_rect, target_px, flip):
    """A 3×3 homography from face pixels to scene pixels (scene: the rendered square whose
    centre the index ends up in), and the index's corners in scene pixels."""
    u1, v1, u2, v2 = index_rect
    ix = np.array([[u1 * face_w, v1 * face_h], [u2 * face_w, v1 * face_h],
                   [u2 * face_w, v2 * face_h], [u1 * face_w, v2 * face_h]])
    if flip:  # the bottom-right index: the card turned 180°
        ix = np.array([face_w, face_h]) - ix
    phi = rng.uniform(0, 2 * math.pi)
    c, s = math.cos(phi), math.sin(phi)
    scale = target_px / max(np.ptp(ix[:, 1]), np.ptp(ix[:, 0]), 1)
    A = np.array([[c * scale, -s * scale, 0], [s * scale, c * scale, 0], [0, 0, 1]])
    # mild perspective: a tilt of up to ~25° seen by an overhead camera
    P = np.eye(3)
    P[2, 0], P[2, 1] = rng.normal(0, 0.25 / max(face_h * scale, 1), 2)
    P[0, 1] = rng.normal(0, 0.05)
    H = P @ A

    def apply(M, pts):
        q = np.c_[pts, np.ones(len(pts))] @ M.T
        return q[:, :2] / q[:, 2:3]

    q = apply(H, ix)
    centre = (q.min(0) + q.max(0)) / 2
    T = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]])
    H = T @ H
    return H, apply(H, ix)


def warp(face, H, size, offset):
    """Renders `face` through homography H (face → scene, scene centred on 0) into a size²
    RGBA image whose pixel (0, 0) is scene point -offset."""
    S = np.array([[1, 0, offset], [0, 1, offset], [0, 0, 1]]) @ H
    Si = np.linalg.inv(S)
    Si /= Si[2, 2]
    return face.transform((size, size), Image.PERSPECTIVE, tuple(Si.ravel()[:8]), Image.BILINEAR)


def one_patch(rng, faces, kind):
    """(stored patch uint8 [64, 64, 3], label)."""
    sheet = faces.sheets[rng.integers(len(faces.sheets))]
    design = sheet["design"]
    face_img = faces.face(design, "AS")
    fw, fh = face_img.size
    # index print size in the image: long side 7–64 px (log-uniform); below ~12 px the print
    # is rarely legible and the label is kept (the network must learn to be unsure there).
    target = math.exp(rng.uniform(math.log(7), math.log(64)))
    flip = rng.random() < 0.5
    H, q = card_matrix(rng, fw, fh, sheet["index"]["rect"], target, flip)
    bw, bh = np.ptp(q[:, 0]), np.ptp(q[:, 1])
    side = PATCH_SCALE * max(bw, bh)
    region = STORE_SCALE * side  # scene pixels the stored patch covers
    if kind == "unknown_face":
        # slide the card so that the patch centre falls elsewhere on it (not on an index)
        for _ in range(10):
            u, v = rng.uniform(0.05, 0.95), rng.uniform(0.05, 0.95)
            if not ((u < 0.3 and v < 0.32) or (u > 0.7 and v > 0.68)):
                break
        Hf = np.linalg.inv(H)
        pt = np.array([u * fw, v * fh, 1.0])
        sp = H @ pt
        sp = sp[:2] / sp[2]
        H = np.array([[1, 0, -sp[0]], [0, 1, -sp[1]], [0, 0, 1]]) @ H
        del Hf
    # render at the camera's resolution: `n` image pixels across the region, supersampled 2×
    n = max(8, int(round(region)))
    m = min(n, 96)
    ss = 2
    R = m * ss
    k = R / region  # scene px → render px
    K = np.array([[k, 0, 0], [0, k, 0], [0, 0, 1]])
    canvas = surface(rng, R)
    label_face = "back" if kind == "back" else CODES[rng.integers(52)]
    # neighbours underneath: the hand's other cards, side by side or overlapping
    for _ in range(rng.integers(0, 3)):
        nb = faces.face(design, CODES[rng.integers(52)] if rng.random() < 0.8 else "back")
        dx = rng.choice([-1, 1]) * fw * rng.uniform(0.6, 1.15)
        dy = rng.uniform(-0.15, 0.15) * fh
        Hn = H @ np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]])
        canvas.alpha_composite(warp(nb, K @ Hn, R, R / 2))
    face = faces.face(design, label_face)
    canvas.alpha_composite(warp(face, K @ H, R, R / 2))
    label = BACK if kind == "back" else UNKNOWN if kind.startswith("unknown") else IDX[label_face]
    if kind == "unknown_surface":
        canvas = surface(rng, R)
        if rng.random() < 0.5:  # a chip or a finger: round blobs
            d = ImageDraw.Draw(canvas)
            r = R * rng.uniform(0.15, 0.5)
            cx, cy = rng.uniform(0, R, 2)
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=tuple(int(v) for v in rng.uniform(0, 255, 3)) + (255,))
    # occluder over part of the patch (a finger, a chip, another card's edge)
    if rng.random() < 0.15:
        d = ImageDraw.Draw(canvas)
        col = tuple(int(v) for v in (rng.uniform([150, 90, 60], [240, 190, 160]) if rng.random() < 0.6
                                     else rng.uniform(0, 255, 3))) + (255,)
        frac = rng.uniform(0.1, 0.7)
        ang = rng.uniform(0, 2 * math.pi)
        # a half-plane covering `frac` of the patch square (centre R/2, half-size side/2 in render px)
        hs = side * k / 2
        off = (0.5 - frac) * 2 * hs
        nx, ny = math.cos(ang), math.sin(ang)
        cx, cy = R / 2 + nx * off, R / 2 + ny * off
        big = 4 * R
        poly = [(cx - ny * big, cy + nx * big), (cx + ny * big, cy - nx * big),
                (cx + ny * big + nx * big, cy - nx * big + ny * big), (cx - ny * big + nx * big, cy + nx * big + ny * big)]
        d.polygon(poly, fill=col)
        if frac > 0.45 and label < BACK:
            label = UNKNOWN
    img = canvas.convert("RGB")
    # camera: area sampling to the true resolution, optics blur, motion blur, lighting, noise, JPEG
    img = img.resize((m, m), Image.BOX)
    if n > m:
        pass  # region larger than 96 px: already sharp enough; the store is 64 px anyway
    if rng.random() < 0.7:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 1.1) * m / max(n, 1)))
    a = np.asarray(img, np.float32)
    if rng.random() < 0.15:  # motion blur along a random direction
        L = int(rng.integers(2, 4))
        dxy = np.round(np.array([math.cos(rng.uniform(0, math.pi)), math.sin(rng.uniform(0, math.pi))]) * 1).astype(int)
        acc = a.copy()
        for t in range(1, L):
            acc += np.roll(a, (t * dxy[1], t * dxy[0]), axis=(0, 1))
        a = acc / L
    yy, xx = np.mgrid[0:m, 0:m] / m
    light = rng.uniform(0.45, 1.3) * (1 + rng.uniform(-0.25, 0.25) * (xx - 0.5) + rng.uniform(-0.25, 0.25) * (yy - 0.5))
    a = a * light[..., None] * rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < 0.1:  # glare: a soft bright spot
        gx, gy = rng.uniform(0, 1, 2)
        g = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * rng.uniform(0.05, 0.3) ** 2))
        a = a + g[..., None] * rng.uniform(60, 200)
    a = a + rng.normal(0, rng.uniform(0.5, 7), a.shape)
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.7:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=int(rng.integers(35, 95)))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    img = img.resize((STORE, STORE), Image.BOX if m > STORE else Image.BILINEAR)
    return np.asarray(img), label


def kind_of(rng):
    r = rng.random()
    return "card" if r < 0.78 else "back" if r < 0.86 else "unknown_face" if r < 0.95 else "unknown_surface"


_FACES = {}


def _work(args):
    root, split, n, seed = args
    rng = np.random.default_rng(seed)
    # one face cache per worker process, kept across chunks (decoding the PNGs dominates otherwise)
    faces = _FACES.setdefault((root, split), Faces(root, split))
    X = np.zeros((n, STORE, STORE, 3), np.uint8)
    Y = np.zeros(n, np.int32)
    for i in range(n):
        X[i], Y[i] = one_patch(rng, faces, kind_of(rng))
    return X, Y


def generate(root, split, n, seed, workers=2, chunk=2000, work=None):
    """n patches in chunks of `chunk` over `workers` processes; `work((root, split, n, seed))`
    returns a tuple of arrays (X, Y, ...), concatenated chunk by chunk (default: this module's)."""
    jobs = [(root, split, min(chunk, n - i), seed * 100003 + i) for i in range(0, n, chunk)]
    parts = []
    t0 = time.time()
    with ProcessPoolExecutor(workers) as ex:
        for arrays in ex.map(work or _work, jobs):
            parts.append(arrays)
            done = sum(len(a[1]) for a in parts)
            print(f"  {split}: {done}/{n} patches, {time.time() - t0:.0f}s", flush=True)
    return tuple(np.concatenate(col) for col in zip(*parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faces", default="var/faces")
    ap.add_argument("--split", default="train")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--preview", help="write a PNG grid of the first 120 patches with labels")
    args = ap.parse_args()
    X, Y = generate(args.faces, args.split, args.n, args.seed, args.workers)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez(args.out, X=X, Y=Y)
    print(f"{args.out}: {len(Y)} patches, classes {len(set(Y.tolist()))}/54")
    if args.preview:
        g = Image.new("RGB", (12 * 70, 10 * 78), "white")
        d = ImageDraw.Draw(g)
        for i in range(min(120, len(Y))):
            x, y = (i % 12) * 70, (i // 12) * 78
            g.paste(Image.fromarray(X[i]), (x, y))
            d.text((x + 2, y + 64), LABELS[Y[i]], fill="black")
        g.save(args.preview)


if __name__ == "__main__":
    main()
