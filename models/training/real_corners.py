"""Card-corner patches from the real photos' *train half* (models/training/real_split.json), for
the v3 classifier: the same upright corner cut as the simulator's (corners.py `corner_map`), on
the card outlines the uncalibrated photo finder finds (src/locate/photo.rs), labelled from
../shared/real-cards.

    python models/training/real_corners.py --out var/training/corners-real.npz

Why: the simulator's deck art (34 designs) does not cover the prints of real decks — gold on
black, thin fonts, worn stock — and a classifier trained on art alone is confidently wrong on
some of them. The held-out half (real_test.txt) is never read here.

Per labelled card whose corners the annotation marks at both ends: the finder's outline that
covers the label box, read at the orientation whose top-left corner lies on a labelled index
box. Each outline is jittered the way a finder misplaces it (shift, scale, turn, corner noise) and
cut at both index corners (label: the card) and at the two blank corners (label: `unknown`).
Photometric jitter is added at training time (train_corner.py). The photos carry CC BY 4.0
(see ../shared/real-cards/README.md); the patches are derived data and stay under var/.
"""
import argparse
import csv
import json
import os

import cv2
import numpy as np

import corners
import nets

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABELS = nets.labels()
IDX = {l: i for i, l in enumerate(LABELS)}
PH, PW = nets.CORNER_H, nets.CORNER_W


def photo_candidates(img):
    """Card outlines in a photo of unknown scale — a mirror of src/locate/photo.rs
    `candidate_quads` (same masks, filters and constants): regions bounded by edges or separated
    by Otsu's threshold (either polarity) whose shape is a filled, convex, card-like rectangle."""
    h, w = img.shape[:2]
    s = min(1.0, 640.0 / max(h, w))
    small = cv2.resize(img, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1 else img
    g = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, t = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    masks = [t, 255 - t]
    for lo, hi in ((30, 90), (10, 30), (5, 15)):
        masks.append(255 - cv2.dilate(cv2.Canny(g, lo, hi), np.ones((3, 3), np.uint8)))
    H, W = g.shape
    out = []
    for m in masks:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        cs, _ = cv2.findContours(m, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for c in cs:
            a = cv2.contourArea(c)
            if a < 0.004 * H * W or a > 0.9 * H * W:
                continue
            hull = cv2.convexHull(c)
            if a / max(cv2.contourArea(hull), 1e-9) < 0.85:
                continue
            r = cv2.minAreaRect(hull)
            rw, rh = r[1]
            if min(rw, rh) < 1 or a / (rw * rh) < 0.8 or max(rw, rh) / min(rw, rh) > 2.6:
                continue
            ap = cv2.approxPolyDP(hull, 0.03 * cv2.arcLength(hull, True), True)
            q = ap.reshape(-1, 2).astype(float) if len(ap) == 4 else cv2.boxPoints(r).astype(float)
            out.append((q + 0.5) / s)  # contour pixel centres → continuous coordinates, as in Rust
    return out


def order(q):
    """Clockwise on screen from the top-left (src/locate/geometry.rs `order_quad`)."""
    c = q.mean(0)
    q = q[np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))]
    return np.roll(q, -int(np.argmin(q[:, 0] + q[:, 1])), 0)


def jitter(rng, q):
    """A finder's misplacement of the outline: shift, scale, turn and corner noise."""
    c = q.mean(0)
    L = max(np.linalg.norm(q[i] - q[(i + 1) % 4]) for i in range(4))
    a = np.radians(rng.normal(0, 2.5))
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    q = (q - c) @ R.T * rng.uniform(0.95, 1.05) + c + rng.normal(0, 0.02 * L, 2)
    return q + rng.normal(0, 0.008 * L, q.shape)


def cut(img, view):
    """One upright corner patch [PH, PW, 3] RGB uint8, exactly as the Rust side cuts it."""
    p = cv2.warpPerspective(img, corners.corner_map(view), (PW, PH),
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return p[:, :, ::-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", default=os.path.join(ROOT, "..", "shared", "real-cards"))
    ap.add_argument("--split", default=os.path.join(ROOT, "models", "training", "real_split.json"))
    ap.add_argument("--jitter", type=int, default=40, help="jittered outlines per card")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", required=True)
    ap.add_argument("--preview", help="PNG grid of the first patches")
    args = ap.parse_args()
    train = set(json.load(open(args.split))["train"])
    labels, boxes = {}, {}
    for r in csv.DictReader(open(os.path.join(args.real, "labels.csv"))):
        if r["file"] in train and r["n_corners"] == "2":
            labels.setdefault(r["file"], []).append((r["rank"] + r["suit"], [float(r[k]) for k in ("x1", "y1", "x2", "y2")]))
    for r in csv.DictReader(open(os.path.join(args.real, "corners.csv"))):
        boxes.setdefault((r["file"], r["rank"] + r["suit"]), []).append([float(r[k]) for k in ("x1", "y1", "x2", "y2")])
    rng = np.random.default_rng(args.seed)
    X, Y, Ls, cards = [], [], [], 0
    for f in sorted(labels):
        img = cv2.imread(os.path.join(args.real, "images", f), cv2.IMREAD_COLOR)
        cands = [order(q) for q in photo_candidates(img)]
        for card, _box in labels[f]:
            centres = [np.array([(b[0] + b[2]) / 2, (b[1] + b[3]) / 2]) for b in boxes.get((f, card), [])]
            if len(centres) != 2:
                continue
            # the card's outline: both its index boxes lie near opposite corners of the quad
            best, s, best_cost = None, 0, np.inf
            for q in cands:
                L = max(np.linalg.norm(q[i] - q[(i + 1) % 4]) for i in range(4))
                for start in (0, 1):
                    a, b = q[start], q[(start + 2) % 4]
                    cost = min(np.linalg.norm(a - centres[0]) + np.linalg.norm(b - centres[1]),
                               np.linalg.norm(a - centres[1]) + np.linalg.norm(b - centres[0])) / L
                    if cost < best_cost:
                        best, s, best_cost = q, start, cost
            # an index box's centre lies ~0.1 of the long side from its corner: 2 × 0.2 at most
            if best is None or best_cost > 0.4:
                continue
            L = max(np.linalg.norm(best[i] - best[(i + 1) % 4]) for i in range(4))
            # large cards are read from a reduced image, as the Rust side does (no aliasing)
            k = min(1.0, 200.0 / L)
            small = cv2.resize(img, None, fx=k, fy=k, interpolation=cv2.INTER_AREA) if k < 1 else img
            cards += 1
            for j in range(args.jitter):
                q = jitter(rng, best) * k
                for start, label in ((s, IDX[card]), (s + 2, IDX[card]), (s + 1, IDX["unknown"]), (s + 3, IDX["unknown"])):
                    if label == IDX["unknown"] and j % 3:
                        continue
                    X.append(cut(small, np.roll(q, -start, 0)))
                    Y.append(label)
                    Ls.append(L * k)
    X, Y, Ls = np.stack(X), np.array(Y, np.int32), np.array(Ls, np.float32)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez(args.out, X=X, Y=Y, L=Ls)
    print(f"{args.out}: {len(Y)} patches from {cards} cards of {len(labels)} train-half photos, "
          f"classes {len(set(Y.tolist()))}/54")
    if args.preview:
        tiles = [cv2.resize(x, (2 * PW, 2 * PH), interpolation=cv2.INTER_NEAREST) for x in X[:: max(1, len(X) // 256)][:256]]
        tiles += [np.zeros_like(tiles[0])] * (-len(tiles) % 16)
        grid = np.vstack([np.hstack(tiles[i:i + 16]) for i in range(0, len(tiles), 16)])
        cv2.imwrite(args.preview, grid[:, :, ::-1])


if __name__ == "__main__":
    main()
