"""Index-glyph patches for the glyph classifier (models/glyph_classifier.onnx): a printed index
cut *along its own glyphs*, not along a card outline.

    python models/training/glyph_patches.py --faces FACES --split train --n 40000 --out var/training/glyphs-train.npz
    python models/training/glyph_patches.py --real ../shared/real-cards --real-files train --out var/training/glyphs-real.npz

Why: in a photo with no calibration (a fan, a pile, a card held in the hand) the recognizer finds
indexes as a rank glyph above a suit glyph (src/locate/glyphs.rs). v6 reads such a proposal as
the top-left corner of a card whose size and layout it *guesses* from the index's height (three
guesses), so on a real deck whose index sits elsewhere on the card the patch shows it off-centre,
cut, or too small — over the held-out photos v6's best reading of the proposals was right for
59 % of the labelled cards. A patch centred and scaled on the two glyphs themselves shows any
deck's index the same way, and is cut exactly as the Rust side cuts it (`glyph_quad` below;
src/locate/glyphs.rs `IndexProposal::glyph_quad`): the proposal's index box, centred, its height
GLYPH_SPAN × the patch's, the patch's width 32/48 of its height, rank up; a proposal found in
the inverted pass (light ink on a dark card) is inverted, so that ink is always dark.

Samples: simulator — one card face of the split's designs at a random size (index 7–120 px high),
any angle, mild perspective, over a random surface with neighbouring and overlapping cards,
fingers and chips, camera-degraded as in corners.py; the Rust side's glyph proposals are then
found in the rendered image, and each is labelled the card when its index box matches the card's
printed index (box IoU ≥ 0.35, either glyph order: an index read upside down is still that card)
and `unknown` otherwise (pips, court art, the back's pattern, print of a neighbour's pips).
Real — the same proposals on the real photos of the given half, labelled from corners.csv.
"""
import argparse
import csv
import collections
import json
import math
import os
import sys

import cv2
import numpy as np
from PIL import Image, ImageDraw

import corners
import nets
import real_glyphs
from patches import Faces

PH, PW = nets.CORNER_H, nets.CORNER_W
GLYPH_SPAN = 0.72  # index box height / patch height: room for a misfit box, some surroundings
LABELS = nets.labels()
IDX = {l: i for i, l in enumerate(LABELS)}
UNKNOWN = IDX["unknown"]
CODES = LABELS[:52]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def glyph_quad(p):
    """The patch's quad (TL, TR, BR, BL, continuous image coordinates) for a proposal
    (u0, u1, v0, v1, right, down, ...): centred on its index box, rank up."""
    u0, u1, v0, v1, rv, dv = p[:6]
    h = (v1 - v0) / GLYPH_SPAN
    w = h * PW / PH
    c = 0.5 * (u0 + u1) * rv + 0.5 * (v0 + v1) * dv
    tl = c - 0.5 * w * rv - 0.5 * h * dv
    return np.array([tl, tl + w * rv, tl + w * rv + h * dv, tl + h * dv])


def patch_map(quad):
    """Patch pixel index → image index (OpenCV pixel centres): the whole quad at PH × PW."""
    Hq = corners.homography([(0, 0), (1, 0), (1, 1), (0, 1)], quad)
    S = np.array([[1 / PW, 0, 0.5 / PW], [0, 1 / PH, 0.5 / PH], [0, 0, 1]])
    T = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
    return T @ Hq @ S


MAX_VIEW_PX = 128.0  # a view is cut from the pyramid level where it is at most this high (Rust: MAX_GLYPH_VIEW_PX)
HALF_LEVEL_MIN_SIZE = 30.0  # pairs found at half size need a glyph this large there (Rust: the same name)


class Pyramid:
    """The image halved k times (area-averaged), as the Rust side cuts large views."""

    def __init__(self, rgb):
        self.levels = [rgb]

    def level(self, k):
        while len(self.levels) <= k:
            self.levels.append(cv2.resize(self.levels[-1], None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA))
        return self.levels[k]


def cut(pyr, p, inverted):
    q = glyph_quad(p)
    k = max(0, math.ceil(math.log2(max(np.linalg.norm(q[3] - q[0]), 1e-6) / MAX_VIEW_PX)))
    H = patch_map(q * 0.5 ** k)
    m = np.linalg.inv(H)
    out = cv2.warpPerspective(pyr.level(k), m / m[2, 2], (PW, PH), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    return 255 - out if inverted else out


def all_proposals(grey):
    """(proposal, inverted) for both ink polarities, as the Rust side finds them (src/locate/glyphs.rs
    `index_proposals`): at full size, and at half size the pairs whose larger glyph measures at
    least HALF_LEVEL_MIN_SIZE there (glyphs too large for the threshold's block)."""
    out = []
    half = cv2.resize(grey, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    for level, g in ((0, grey), (1, half)):
        for inv in (False, True):
            gl = real_glyphs.glyphs(g, inv)
            sizes = [x[1] for x in gl]
            for p in real_glyphs.proposals(gl, real_glyphs.GLYPH_REACH):
                i, j = p[6]
                if level == 1:
                    if max(sizes[i], sizes[j]) < HALF_LEVEL_MIN_SIZE:
                        continue
                    p = (2 * p[0], 2 * p[1], 2 * p[2], 2 * p[3]) + tuple(p[4:])
                out.append((p, inv))
    return out


def index_box(p):
    u0, u1, v0, v1, rv, dv = p[:6]
    c = np.array([[u, v] for u in (u0, u1) for v in (v0, v1)]) @ np.array([rv, dv])
    return [c[:, 0].min(), c[:, 1].min(), c[:, 0].max(), c[:, 1].max()]


def jittered(rng, p):
    """The proposal's box slightly misfit: what another blob split or merge does to it. The turn
    rotates the box's frame (right, down) about the *image origin*, not the box's centre, so it
    also shifts the box by the turn × its distance from the image's corner, on a 640 px photo
    often an index height or more. Glyph classifier v1 was trained so; a retrain turning about
    the centre (with other changes) was worse (models/MODEL_CARD.md, "Glyph classifier retrains
    tried on 2026-11-27")."""
    u0, u1, v0, v1, rv, dv = p[:6]
    a = rng.normal(0, 0.04)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    rv, dv = R @ rv, R @ dv
    h, w = v1 - v0, u1 - u0
    s = math.exp(rng.normal(0, 0.06))
    cu, cv = 0.5 * (u0 + u1) + rng.normal(0, 0.05 * h), 0.5 * (v0 + v1) + rng.normal(0, 0.05 * h)
    return (cu - 0.5 * w * s, cu + 0.5 * w * s, cv - 0.5 * h * s, cv + 0.5 * h * s, rv, dv)


def render(rng, faces, hidden_index="unknown"):
    """One camera view of a card corner and its surroundings: (rgb uint8, label code, index
    boxes [x0, y0, x1, y1] of its printed indexes that show)."""
    sheet = faces.sheets[rng.integers(len(faces.sheets))]
    design = sheet["design"]
    code = "back" if rng.random() < 0.08 else CODES[rng.integers(52)]

    def a_card(code):
        """The design's face of `code` (or its back), either end up."""
        img = faces.face(design, code)
        return img.rotate(180) if rng.random() < 0.5 else img

    def a_neighbour():
        return a_card(CODES[rng.integers(52)] if rng.random() < 0.8 else "back")

    face = a_card(code)
    fw, fh = face.size
    ir = sheet["index"]["rect"]
    idx_h = math.exp(rng.uniform(math.log(7), math.log(120)))
    L = idx_h / (ir[3] - ir[1])
    s = L / fh
    th = rng.uniform(0, 2 * math.pi)
    c, si = math.cos(th), math.sin(th)
    Hc = np.array([[c * s, -si * s, 0], [si * s, c * s, 0], [0, 0, 1]])
    P = np.eye(3)
    P[2, 0], P[2, 1] = rng.normal(0, 0.15 / max(L, 1), 2)
    Hc = P @ Hc
    lo_u, lo_v, hi_u, hi_v = -0.2, -0.15, 0.6, 0.55
    roi = corners.apply(Hc, np.array([[lo_u * fw, lo_v * fh], [hi_u * fw, lo_v * fh], [hi_u * fw, hi_v * fh], [lo_u * fw, hi_v * fh]]))
    lo = np.floor(roi.min(0))
    Hc = np.array([[1, 0, -lo[0]], [0, 1, -lo[1]], [0, 0, 1]]) @ Hc
    Hc /= Hc[2, 2]
    size = np.ceil(roi.max(0) - lo).astype(int) + 1
    cw, ch = max(int(size[0]), 24), max(int(size[1]), 24)
    ss = 2 if L < 150 else 1
    K = np.diag([ss, ss, 1.0])
    canvas = corners.cheap_surface(rng, cw * ss, ch * ss)
    fu = lambda u, v: np.array([[1, 0, u * fw], [0, 1, v * fh], [0, 0, 1]])  # noqa: E731
    gu, gv = np.meshgrid(np.linspace(ir[0], ir[2], 5), np.linspace(ir[1], ir[3], 8))
    # other cards' indexes (both corners): a proposal on one is another card, neither this one
    # nor `unknown`, and is not used
    others = []

    def index_boxes_of(Hn):
        for uu, vv in ((gu, gv), (1 - gu, 1 - gv)):
            q = corners.apply(Hn, np.c_[uu.ravel() * fw, vv.ravel() * fh]) / ss
            others.append([q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()])

    for _ in range(rng.integers(0, 3)):  # a hand's neighbours underneath
        nb = a_neighbour()
        Hn = K @ Hc @ fu(rng.choice([-1, 1]) * rng.uniform(0.2, 1.1), rng.uniform(-0.15, 0.15))
        corners.warp_into(canvas, nb, Hn)
        index_boxes_of(Hn)
    corners.warp_into(canvas, face, K @ Hc)
    grid = corners.apply(K @ Hc, np.c_[gu.ravel() * fw, gv.ravel() * fh])
    hidden = np.zeros(len(grid), bool)
    card = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float)
    if rng.random() < 0.3:  # the next card of a hand dealt over this one
        nb = a_neighbour()
        ox, oy = (rng.uniform(0.05, 0.5), rng.uniform(-0.1, 0.1)) if rng.random() < 0.5 else \
            (rng.uniform(-0.1, 0.1), rng.uniform(0.08, 0.5))
        Hn = K @ Hc @ fu(ox, oy)
        corners.warp_into(canvas, nb, Hn)
        index_boxes_of(Hn)
        hidden |= corners.inside(corners.apply(Hn, card), grid)
    if rng.random() < 0.12:  # a finger or a chip
        d = ImageDraw.Draw(canvas)
        ctr = corners.apply(K @ Hc, np.array([[rng.uniform(ir[0], ir[2]) * fw, rng.uniform(ir[1], ir[3]) * fh]]))[0]
        rr = rng.uniform(0.05, 0.25) * fw * s * ss
        col = tuple(int(v) for v in (rng.uniform([150, 90, 60], [240, 190, 160]) if rng.random() < 0.6
                                     else rng.uniform(0, 255, 3))) + (255,)
        d.ellipse([ctr[0] - rr, ctr[1] - rr, ctr[0] + rr, ctr[1] + rr], fill=col)
        hidden |= np.hypot(grid[:, 0] - ctr[0], grid[:, 1] - ctr[1]) < rr
    img = corners.camera(rng, canvas, ss, cw, ch, blur_max=1.3, light_min=0.45, grey=0.1)
    boxes = []
    h = hidden.reshape(8, 5)
    # A partly hidden index gets no box, so proposals on it are labelled `unknown`: on one
    # validation set, 7 of v1's 10 "misreads" at 0.999 were readable indexes labelled so.
    # `hidden_index="skip"` (--hidden-index skip) puts its box with `others` instead: a
    # proposal on it is then neither the card nor `unknown`. The calibration patches are made
    # so since 2026-11-27; training on such patches was tried then and not adopted (its run
    # started from random weights, see train_corner.py --init-convs; models/MODEL_CARD.md).
    if code != "back":
        q = grid / ss
        box = [q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()]
        if h[:4].mean() <= 0.25 and h[4:].mean() <= 0.25:
            boxes.append(box)
        elif hidden_index == "skip":
            others.append(box)
    return np.asarray(img), code, boxes, others


MAX_UNKNOWN = 3  # per view: a patterned back or cloth proposes dozens of look-alike pairs


def label_proposals(props, boxes, others, code, rng):
    """(proposal index, label) to keep: the card on its index, `unknown` on no index."""
    out, unknown = [], []
    for k, (p, _) in enumerate(props):
        ib = index_box(p)
        ious = [real_glyphs.box_iou(ib, b) for b in boxes]
        if any(i >= 0.5 for i in ious):
            out.append((k, IDX[code]))
        elif any(i > 0.05 for i in ious) or any(real_glyphs.box_iou(ib, b) > 0.05 for b in others):
            continue  # part of the index (its rank alone with a pip), or another card's: neither
        else:
            unknown.append(k)
    rng.shuffle(unknown)
    return out + [(k, UNKNOWN) for k in unknown[:MAX_UNKNOWN]]


def _work(args):
    root, split, n, seed, hidden_index = args
    rng = np.random.default_rng(seed)
    faces = Faces(root, split)
    X, Y = [], []
    while len(Y) < n:
        rgb, code, boxes, others = render(rng, faces, hidden_index)
        pyr = Pyramid(rgb)
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        props = all_proposals(grey)
        for k, lab in label_proposals(props, boxes if code != "back" else [], others, code, rng):
            p, inv = props[k]
            if lab != UNKNOWN and rng.random() < 0.5:
                p = jittered(rng, p)
            X.append(cut(pyr, p, inv))
            Y.append(lab)
    return np.stack(X[:n]), np.array(Y[:n], np.int32)


def simulated(root, split, n, seed, workers, hidden_index="unknown"):
    from concurrent.futures import ProcessPoolExecutor
    chunk = 2000
    jobs = [(root, split, min(chunk, n - i), seed * 100003 + i, hidden_index) for i in range(0, n, chunk)]
    X, Y = [], []
    with ProcessPoolExecutor(workers) as ex:
        for j, (x, y) in enumerate(ex.map(_work, jobs)):
            X.append(x)
            Y.append(y)
            print(f"\r{split}: {sum(len(v) for v in Y)}/{n} patches", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return np.concatenate(X), np.concatenate(Y)


def real(root, files, seed, jitter):
    """Glyph patches of the listed real photos, labelled from corners.csv."""
    rng = np.random.default_rng(seed)
    boxes = collections.defaultdict(list)
    with open(os.path.join(root, "corners.csv")) as f:
        for r in csv.DictReader(f):
            boxes[r["file"]].append((r["rank"] + r["suit"], [float(r[k]) for k in ("x1", "y1", "x2", "y2")]))
    X, Y, F = [], [], []
    for n, name in enumerate(files):
        bgr = cv2.imread(os.path.join(root, "images", name))
        pyr = Pyramid(np.ascontiguousarray(bgr[:, :, ::-1]))
        props = all_proposals(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
        for k, (p, inv) in enumerate(props):
            ib = index_box(p)
            hits = {c for c, b in boxes[name] if real_glyphs.box_iou(ib, b) >= 0.5}
            near = any(real_glyphs.box_iou(ib, b) > 0.05 for _, b in boxes[name])
            if len(hits) > 1 or (near and not hits):
                continue
            if hits:
                lab = IDX[next(iter(hits))]
            elif rng.random() < 0.25:
                lab = UNKNOWN
            else:
                continue
            for j in range(1 + (jitter if lab != UNKNOWN else 0)):
                X.append(cut(pyr, p if j == 0 else jittered(rng, p), inv))
                Y.append(lab)
                F.append(n)
        print(f"\r{n + 1}/{len(files)} photos, {len(Y)} patches", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return np.stack(X), np.array(Y, np.int32), np.array(F, np.int32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faces", help="face sheets (tablecam simulate detections --faces DIR)")
    ap.add_argument("--split", default="train")
    ap.add_argument("--n", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--real", help="the real photos' directory (instead of --faces)")
    ap.add_argument("--real-files", default="train",
                    help="`train` or `test`: that half of models/training/real_split.json")
    ap.add_argument("--hidden-index", choices=("unknown", "skip"), default="unknown",
                    help="proposals on a card's partly hidden index: labelled `unknown`, or left out "
                         "(skip: the calibration set since 2026-11-27, see render)")
    ap.add_argument("--jitter", type=int, default=4, help="jittered copies per labelled real proposal")
    ap.add_argument("--out", required=True)
    ap.add_argument("--preview", help="PNG grid of the first 160 patches with labels")
    args = ap.parse_args()
    if args.real:
        split = json.load(open(os.path.join(ROOT, "models", "training", "real_split.json")))
        X, Y, F = real(args.real, split[args.real_files], args.seed, args.jitter if args.real_files == "train" else 0)
    else:
        X, Y = simulated(args.faces, args.split, args.n, args.seed, args.workers, args.hidden_index)
    L = np.full(len(Y), 100.0, np.float32)
    # C: the card the patch was cut from, which calibration counts misreads against
    np.savez(args.out, X=X, Y=Y, L=L, C=Y)
    print(f"{args.out}: {len(Y)} patches, {(Y != UNKNOWN).sum()} of cards, classes {len(set(Y.tolist()))}/54")
    if args.preview:
        corners.write_preview(args.preview, X, Y)


if __name__ == "__main__":
    main()
