"""Upright index patches from the real photos' *train half*, cut where the Rust side's index
finder (src/locate/glyphs.rs) proposes them: a rank glyph above a suit glyph, read as the
top-left corner of a card whose size follows from the index's height. For the v5 classifier.

    python models/training/real_glyphs.py --out var/training/corners-real-glyphs.npz

Why: cards of a fan or a pile show only their index strip, so the photo finder outlines none of
them; the glyph proposals find them, and the classifier must learn to read real prints cut that
way (webcam blur, small glyphs, gold on black). The held-out half (real_test.txt) is never read.

Labels: a proposal whose index box covers a labelled corner box (corners.csv; IoU of their
boxes ≥ 0.35) is that card, in either order of its glyph pair: an index read upside down (suit
above rank) is still that card, and its layout tells a 6 from a 9. Proposals on no labelled box
are `unknown` (pips, court art, text) unless the committed classifier sees a card there (an
unlabelled card cut by the image border, README of the photos), which is skipped.
"""
import argparse
import csv
import collections
import json
import math
import os

import cv2
import numpy as np
import onnxruntime as ort

import corners
import nets

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABELS = nets.labels()
UNKNOWN = LABELS.index("unknown")

# --- the proposal geometry: src/locate/glyphs.rs mirrors these ---------------------------------
BLOCK, C_OFFSET = 31, 12          # adaptive threshold (mean of a 31-px block minus 12)
MIN_AREA, MIN_SIDE, MAX_SIDE = 10, 4, 90
MIN_FILL = 0.15                   # ink share of a glyph's box
PAIR_MIN, PAIR_MAX = 0.45, 1.5    # centre distance / larger glyph size (Rust: CORNER_PAIR_REACH)
GLYPH_REACH = 2.4                 # the same upper bound for the glyph classifier (GLYPH_PAIR_REACH)
SIZE_RATIO = 2.5                  # glyph sizes within this factor
BESIDE_WIDTH = 0.7                # a glyph beside the rank joins it if at most this share as wide
INDEX_H = (0.17, 0.21, 0.26)      # index height / card long side: the card sizes tried
ASPECT = 0.70                     # card short / long side
MARGIN = (0.035, 0.035)           # index's top-left from the card's corner (card fractions)


def glyphs(grey, inverted):
    """Ink components of the grey photo (dark ink, or light ink on a dark card if `inverted`)."""
    g = 255 - grey if inverted else grey
    ink = cv2.adaptiveThreshold(g, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, BLOCK, C_OFFSET)
    n, lab, st, cen = cv2.connectedComponentsWithStats(ink, connectivity=8)
    order = np.argsort(lab.ravel(), kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(lab.ravel(), minlength=n))]
    ys, xs = np.divmod(order, lab.shape[1])
    out = []
    for i in range(1, n):
        x, y, w, h, a = st[i]
        if a < MIN_AREA or not MIN_SIDE <= max(w, h) <= MAX_SIDE or a < MIN_FILL * w * h:
            continue
        pts = np.c_[xs[starts[i]:starts[i + 1]], ys[starts[i]:starts[i + 1]]].astype(float) + 0.5
        out.append((cen[i] + 0.5, math.sqrt(w * h), pts))
    return out


def proposals(gl, reach=PAIR_MAX):
    """(index box u0, u1, v0, v1 along (right, down), right, down) per ordered glyph pair."""
    if not gl:
        return []
    C = np.array([g[0] for g in gl])
    S = np.array([g[1] for g in gl])
    out = []
    for i in range(len(gl)):
        d = np.hypot(*(C - C[i]).T)
        m = np.maximum(S, S[i])
        ok = (d > PAIR_MIN * m) & (d < reach * m) & (S * SIZE_RATIO > S[i]) & (S < SIZE_RATIO * S[i])
        for j in np.nonzero(ok)[0]:
            dv = (C[j] - C[i]) / d[j]
            rv = np.array([dv[1], -dv[0]])
            pts = [gl[i][2], gl[j][2]]
            ur, vr = gl[i][2] @ rv, gl[i][2] @ dv
            hr = vr.max() - vr.min() + 1
            # the rank's other glyphs beside it (the 1 of a 10)
            for k in np.nonzero(d < 1.6 * S[i])[0]:
                if k in (i, j):
                    continue
                uk, vk = gl[k][2] @ rv, gl[k][2] @ dv
                # a "1" is narrower than the "0" beside it; a neighbour's rank or a court's pip is not
                if vk.min() > vr.min() - 0.3 * hr and vk.max() < vr.max() + 0.3 * hr and \
                        max(uk.min() - ur.max(), ur.min() - uk.max()) < 0.5 * hr and \
                        uk.max() - uk.min() <= BESIDE_WIDTH * (ur.max() - ur.min()):
                    pts.append(gl[k][2])
            P = np.concatenate(pts)
            u, v = P @ rv, P @ dv
            out.append((u.min() - 0.5, u.max() + 0.5, v.min() - 0.5, v.max() + 0.5, rv, dv, (i, j)))
    return out


def views(p, index_h=INDEX_H):
    """The card quads (TL, TR, BR, BL) a proposal is read through, one per card size."""
    u0, u1, v0, v1, rv, dv, _ = p
    res = []
    for ih in index_h:
        H = (v1 - v0) / ih
        W = ASPECT * H
        TL = (u0 - MARGIN[0] * W) * rv + (v0 - MARGIN[1] * H) * dv
        res.append(np.array([TL, TL + W * rv, TL + W * rv + H * dv, TL + H * dv]))
    return res


def jitter(rng, q):
    """A view misplaced the way the finder misplaces it: scale, shift, turn."""
    c = q.mean(0)
    s = rng.uniform(0.9, 1.1)
    a = rng.normal(0, 0.05)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    W = np.linalg.norm(q[1] - q[0])
    return (q - c) @ R.T * s + c + rng.normal(0, 0.025 * W, 2)


def box_iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    i = w * h
    return i / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", default=os.path.join(ROOT, "..", "shared", "real-cards"))
    ap.add_argument("--split", default=os.path.join(ROOT, "models", "training", "real_split.json"))
    ap.add_argument("--teacher", default=os.path.join(ROOT, "models", "classifier.onnx"))
    ap.add_argument("--jitter", type=int, default=4, help="jittered copies per labelled view")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    files = json.load(open(args.split))["train"]
    boxes = collections.defaultdict(list)
    with open(os.path.join(args.real, "corners.csv")) as f:
        for r in csv.DictReader(f):
            boxes[r["file"]].append((r["rank"] + r["suit"], [float(r[k]) for k in ("x1", "y1", "x2", "y2")]))
    teacher = ort.InferenceSession(args.teacher)
    X, Y = [], []

    def cut(img, q):
        return np.clip(corners.bilinear(img, corners.corner_map(q)), 0, 255).astype(np.uint8)

    for n, name in enumerate(files):
        bgr = cv2.imread(os.path.join(args.real, "images", name))
        rgb = bgr[:, :, ::-1].astype(np.float32)
        grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        props = proposals(glyphs(grey, False)) + proposals(glyphs(grey, True))
        if not props:
            continue
        vs = [views(p) for p in props]
        patches = np.stack([cut(rgb, q) for v in vs for q in v])
        probs = teacher.run(None, {"patch": np.transpose(patches.astype(np.float32) / 255, (0, 3, 1, 2))})[0]
        probs = probs.reshape(len(props), len(INDEX_H), -1)
        hits, near = [], []
        for p in props:
            u0, u1, v0, v1, rv, dv, _ = p
            c = np.array([[u, v] for u in (u0, u1) for v in (v0, v1)]) @ np.array([rv, dv])
            ib = [c[:, 0].min(), c[:, 1].min(), c[:, 0].max(), c[:, 1].max()]
            hits.append({card for card, b in boxes[name] if box_iou(ib, b) >= 0.35})
            near.append(any(box_iou(ib, b) > 0.0 for _, b in boxes[name]))
        for k, p in enumerate(props):
            if len(hits[k]) > 1 or (near[k] and not hits[k]):
                continue  # between two labelled corners, or partly on one: not sure
            if hits[k]:
                label = LABELS.index(next(iter(hits[k])))
            else:
                if probs[k][:, :52].max() > 0.5:
                    continue  # a card no label names (cut by the border): skip
                if rng.random() > 0.25:
                    continue  # pips and art: plenty, keep a quarter
                label = UNKNOWN
            for q in vs[k]:
                X.append(cut(rgb, q))
                Y.append(label)
                for _ in range(args.jitter if label != UNKNOWN else 1):
                    X.append(cut(rgb, jitter(rng, q)))
                    Y.append(label)
        print(f"\r{n + 1}/{len(files)} photos, {len(Y)} patches", end="", flush=True, file=__import__("sys").stderr)
    X, Y = np.stack(X), np.array(Y, np.int32)
    np.savez_compressed(args.out, X=X, Y=Y)
    print(f"\n{args.out}: {len(Y)} patches, {(Y != UNKNOWN).sum()} of cards ({len(set(Y[Y != UNKNOWN].tolist()))} cards)")


if __name__ == "__main__":
    main()
