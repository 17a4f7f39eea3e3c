"""Card-corner patch synthesiser for the v2 classifier: the index corner cut *upright in the
card's own frame*, exactly as the Rust side cuts it from a located card (src/classify
`corner_homography`, `cut_corner_patch`).

    python models/training/corners.py --faces var/faces --split train --n 200000 --out var/training/corners-train.npz
    python models/training/corners.py --face --long-side 45,240 ... # whole-card patches (64 x 40)

`--face` cuts the card's whole frame instead of its index corner (region 1 x 1, nets.FACE_H x
FACE_W), with a hand's next card covering it from any side, for the whole-card classifier
(models/face_classifier.onnx, docs/recognition.md "Whole-card classifier").

Why upright: a located card's rectangle fixes its orientation up to a half turn, and both index
corners of a standard card read upright from their own end (the bottom-right index is the
top-left one turned 180°). The classifier then never has to learn rotated prints — the v1
rotation-invariant patches could not be learned by a small network (docs/recognition.md).

The Rust side maps patch pixel (x, y) (centre x + 0.5, y + 0.5) to card-frame coordinates
u = (x + 0.5) / W · CORNER_U, v = (y + 0.5) / H · CORNER_V (u across the short side, v along
the long side, from the corner), then through the card quad's homography to the image, and
samples bilinearly (OpenCV `warpPerspective`, border replicated). Here the same map is applied to
a rendered camera image whose card quad is known, after perturbing the quad the way a locator
misplaces it (shift, scale, turn, corner noise) — so the network learns to read a slightly
misplaced crop, and to answer `unknown` for a badly misplaced one.

Each sample: one card face of the split's designs, its long side L camera pixels (log-uniform
40–320), any angle, mild perspective, over a random surface with neighbouring / overlapping
cards, fingers and chips, rendered supersampled and area-sampled to the camera's resolution,
then blur, motion blur, lighting, glare, noise and JPEG. Labels: the card; `back` for a
face-down card; `unknown` for a covered index, a crop that landed elsewhere on a card, or the
surface.
"""
import argparse
import io
import math
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

import font_faces
import nets
import patches
from patches import Faces, surface

CORNER_U, CORNER_V = nets.CORNER_U, nets.CORNER_V
PH, PW = nets.CORNER_H, nets.CORNER_W
LABELS = nets.labels()
IDX = {l: i for i, l in enumerate(LABELS)}
BACK, UNKNOWN = IDX["back"], IDX["unknown"]
CODES = LABELS[:52]


def homography(src, dst):
    """3×3 H with H·src_i ∝ dst_i for 4 point pairs."""
    A = []
    for (x, y), (u, v) in zip(src, dst):
        A.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        A.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    h = np.linalg.solve(np.array(A, float), np.array(dst, float).ravel())
    return np.append(h, 1).reshape(3, 3)


def apply(H, pts):
    q = np.c_[pts, np.ones(len(pts))] @ H.T
    return q[:, :2] / q[:, 2:3]


def corner_map(quad):
    """Patch pixel index (x, y) → image position in OpenCV's convention (pixel centres at
    integers): the Rust side's `corner_homography`. quad: card corners TL, TR, BR, BL in
    continuous image coordinates (pixel i spans i..i+1), TL the corner being read."""
    Hq = homography([(0, 0), (1, 0), (1, 1), (0, 1)], quad)
    S = np.array([[CORNER_U / PW, 0, 0.5 * CORNER_U / PW], [0, CORNER_V / PH, 0.5 * CORNER_V / PH], [0, 0, 1]])
    T = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
    return T @ Hq @ S


def bilinear(img, H):
    """OpenCV warpPerspective(WARP_INVERSE_MAP, INTER_LINEAR, BORDER_REPLICATE) of img [h, w, 3]
    float to [PH, PW, 3] with map H (patch index → image index)."""
    yy, xx = np.mgrid[0:PH, 0:PW]
    p = np.stack([xx.ravel(), yy.ravel(), np.ones(PH * PW)]) .T @ H.T
    sx, sy = p[:, 0] / p[:, 2], p[:, 1] / p[:, 2]
    h, w = img.shape[:2]
    x0, y0 = np.floor(sx), np.floor(sy)
    fx, fy = (sx - x0)[:, None], (sy - y0)[:, None]
    x0, y0 = x0.astype(int), y0.astype(int)
    cx = lambda x: np.clip(x, 0, w - 1)
    cy = lambda y: np.clip(y, 0, h - 1)
    a = img[cy(y0), cx(x0)] * (1 - fx) + img[cy(y0), cx(x0 + 1)] * fx
    b = img[cy(y0 + 1), cx(x0)] * (1 - fx) + img[cy(y0 + 1), cx(x0 + 1)] * fx
    return (a * (1 - fy) + b * fy).reshape(PH, PW, 3)


def inside(quad, pts):
    """Which of `pts` lie inside the convex quadrilateral `quad` (either winding)."""
    sgn = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        sgn.append((b[0] - a[0]) * (pts[:, 1] - a[1]) - (b[1] - a[1]) * (pts[:, 0] - a[0]))
    sgn = np.stack(sgn)
    return (sgn >= 0).all(0) | (sgn <= 0).all(0)


def outside_patch(into_patch, pts):
    """Which canvas points (continuous, camera scale) fall outside the patch, given the map from
    image index coordinates to patch index coordinates."""
    g = apply(into_patch, pts - 0.5)
    return (g[:, 0] < -0.5) | (g[:, 0] > PW - 0.5) | (g[:, 1] < -0.5) | (g[:, 1] > PH - 0.5)


def warp_into(canvas, img, H):
    """Composites RGBA `img` through H (img px → canvas px, continuous coordinates) onto canvas."""
    Hi = np.linalg.inv(H)
    Hi /= Hi[2, 2]
    canvas.alpha_composite(img.transform(canvas.size, Image.PERSPECTIVE, tuple(Hi.ravel()[:8]), Image.BILINEAR))


def cheap_surface(rng, w, h):
    """patches.surface at half resolution, enlarged: the felt's texture is not what is learnt."""
    return surface(rng, (max(w, h) + 1) // 2).resize((max(w, h),) * 2, Image.BILINEAR).crop((0, 0, w, h))


def camera(rng, canvas, ss, cw, ch, blur_max=1.2, light_min=0.5, grey=0.0):
    """What a camera makes of the supersampled RGBA `canvas` (`ss` × the camera's cw × ch):
    area sampling to the true resolution, optics (blur, motion blur), lighting, glare, noise, a
    grey camera with probability `grey`, JPEG. Returns a PIL RGB image."""
    img = canvas.convert("RGB")
    if ss > 1:
        img = img.resize((cw, ch), Image.BOX)
    if rng.random() < 0.8:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, blur_max)))
    a = np.asarray(img, np.float32)
    if rng.random() < 0.15:
        n = int(rng.integers(2, 5))
        ang = rng.uniform(0, math.pi)
        acc = a.copy()
        for t in range(1, n):
            acc += np.roll(a, (int(round(t * math.sin(ang))), int(round(t * math.cos(ang)))), axis=(0, 1))
        a = acc / n
    yy, xx = np.mgrid[0:ch, 0:cw] / max(cw, ch)
    light = rng.uniform(light_min, 1.15) * (1 + rng.uniform(-0.3, 0.3) * (xx - 0.5) + rng.uniform(-0.3, 0.3) * (yy - 0.5))
    a = a * light[..., None] * rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < 0.1:
        gx, gy = rng.uniform(0, 1, 2)
        g = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * rng.uniform(0.05, 0.3) ** 2))
        a = a + g[..., None] * rng.uniform(60, 200)
    a = a + rng.normal(0, rng.uniform(0.5, 6), a.shape)
    if grey and rng.random() < grey:
        a = np.repeat(a.mean(2, keepdims=True), 3, 2)
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.8:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=int(rng.integers(30, 95)))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


def kind_of(rng):
    r = rng.random()
    return "card" if r < 0.72 else "back" if r < 0.82 else "misplaced" if r < 0.92 else "surface"


def one_patch(rng, faces, kind):
    sheet = faces.sheets[rng.integers(len(faces.sheets))]
    design = sheet["design"]
    label_face = "back" if kind == "back" else CODES[rng.integers(52)]
    face = faces.face(design, label_face)
    turned = rng.random() < 0.5  # read the bottom-right index: the card seen from its other end
    if turned:
        face = face.rotate(180)
    fw, fh = face.size
    L = math.exp(rng.uniform(math.log(LONG_SIDE[0]), math.log(LONG_SIDE[1])))
    s = L / fh
    th = rng.uniform(0, 2 * math.pi)
    c, si = math.cos(th), math.sin(th)
    A = np.array([[c * s, -si * s, 0], [si * s, c * s, 0], [0, 0, 1]])
    P = np.eye(3)
    P[2, 0], P[2, 1] = rng.normal(0, 0.15 / max(L, 1), 2)  # mild perspective (a tilted camera)
    Hc = P @ A  # face px → camera px (up to a shift, fixed below)
    card = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float)
    # the region the canvas must show: the corner and its surroundings
    lo_u, lo_v, hi_u, hi_v = (-0.3, -0.2, 1.3, 1.2) if FACE else (-0.25, -0.2, 0.75, 0.7)
    roi = apply(Hc, np.array([[lo_u * fw, lo_v * fh], [hi_u * fw, lo_v * fh], [hi_u * fw, hi_v * fh], [lo_u * fw, hi_v * fh]]))
    lo = np.floor(roi.min(0))
    Hc = np.array([[1, 0, -lo[0]], [0, 1, -lo[1]], [0, 0, 1]]) @ Hc
    Hc /= Hc[2, 2]
    size = np.ceil(roi.max(0) - lo).astype(int) + 1
    cw, ch = int(size[0]), int(size[1])
    ss = 2 if L < 120 else 1
    K = np.diag([ss, ss, 1.0])
    canvas = cheap_surface(rng, cw * ss, ch * ss)
    fu = lambda u, v: np.array([[1, 0, u * fw], [0, 1, v * fh], [0, 0, 1]])  # shift by card fractions
    others = []  # the other cards drawn, bottom to top: (face px → canvas, label)
    # cards underneath: a hand's neighbours (left or right, overlapped or side by side)
    for _ in range(rng.integers(0, 3) if kind != "misplaced" else 0):
        code = CODES[rng.integers(52)] if rng.random() < 0.8 else "back"
        nb = faces.face(design, code)
        if rng.random() < 0.5:
            nb = nb.rotate(180)
        dx = rng.choice([-1, 1]) * rng.uniform(0.25, 1.15)
        others.append((K @ Hc @ fu(dx, rng.uniform(-0.1, 0.1)), code))
        warp_into(canvas, nb, others[-1][0])
    n_under = len(others)
    warp_into(canvas, face, K @ Hc)
    label = BACK if kind == "back" else IDX[label_face]
    ir = sheet["index"]["rect"]
    # what hides the index: sample its rank (upper half) and suit (lower half) on a grid
    gu, gv = np.meshgrid(np.linspace(ir[0], ir[2], 5), np.linspace(ir[1], ir[3], 8))
    grid = apply(K @ Hc, np.c_[gu.ravel() * fw, gv.ravel() * fh])
    hidden = np.zeros(len(grid), bool)
    # the other index (bottom right, turned) and the whole face, for whole-card patches
    gu2, gv2 = 1 - gu, 1 - gv
    grid2 = apply(K @ Hc, np.c_[gu2.ravel() * fw, gv2.ravel() * fh])
    hidden2 = np.zeros(len(grid2), bool)
    fu_, fv_ = np.meshgrid(np.linspace(0.05, 0.95, 7), np.linspace(0.05, 0.95, 10))
    grid_face = apply(K @ Hc, np.c_[fu_.ravel() * fw, fv_.ravel() * fh])
    hidden_face = np.zeros(len(grid_face), bool)
    # a card dealt on top of this one, from the right or below: covers part of the corner (of a
    # whole-card patch: from any side, as the next card of a hand covers the one before)
    if rng.random() < (0.5 if FACE else 0.2):
        code = CODES[rng.integers(52)] if rng.random() < 0.8 else "back"
        nb = faces.face(design, code)
        if rng.random() < 0.5:
            nb = nb.rotate(180)
        if FACE and rng.random() < 0.7:
            ox, oy = rng.choice([-1, 1]) * rng.uniform(0.15, 0.8), rng.uniform(-0.12, 0.12)
        elif FACE:
            ox, oy = rng.uniform(-0.12, 0.12), rng.choice([-1, 1]) * rng.uniform(0.1, 0.8)
        elif rng.random() < 0.5:
            ox, oy = rng.uniform(0.05, 0.5), rng.uniform(-0.1, 0.1)
        else:
            ox, oy = rng.uniform(-0.1, 0.1), rng.uniform(0.08, 0.5)
        Hn = K @ Hc @ fu(ox, oy)
        others.append((Hn, code))
        warp_into(canvas, nb, Hn)
        hidden |= inside(apply(Hn, card), grid)
        hidden2 |= inside(apply(Hn, card), grid2)
        hidden_face |= inside(apply(Hn, card), grid_face)
    d = ImageDraw.Draw(canvas)
    finger = None
    # a finger or a chip over the corner
    if rng.random() < 0.12:
        cu, cv = (rng.uniform(0, 1), rng.uniform(0, 1)) if FACE else (rng.uniform(ir[0], ir[2]), rng.uniform(ir[1], ir[3]))
        r = rng.uniform(0.05, 0.25) * fw
        ctr = apply(K @ Hc, np.array([[cu * fw, cv * fh]]))[0]
        rr = r * s * ss
        col = tuple(int(v) for v in (rng.uniform([150, 90, 60], [240, 190, 160]) if rng.random() < 0.6
                                     else rng.uniform(0, 255, 3))) + (255,)
        d.ellipse([ctr[0] - rr, ctr[1] - rr, ctr[0] + rr, ctr[1] + rr], fill=col)
        finger = lambda pts: np.hypot(pts[:, 0] - ctr[0], pts[:, 1] - ctr[1]) < rr  # noqa: E731
        hidden |= finger(grid)
        hidden2 |= finger(grid2)
        hidden_face |= finger(grid_face)
    img = camera(rng, canvas, ss, cw, ch)
    cam = np.asarray(img, np.float32)
    # where a locator would put the card: the true quad, moved, scaled, turned and noisy
    wide = rng.random() < 0.2
    j = 2.0 if wide else 1.0
    du, dv = rng.normal(0, 0.03 * j), rng.normal(0, 0.025 * j)
    sc = math.exp(rng.normal(0, 0.04 * j))
    rot = math.radians(rng.normal(0, 2.5 * j))
    if kind == "misplaced" and FACE:  # a whole-card crop half off its card
        while True:
            du, dv = rng.uniform(-0.8, 0.8), rng.uniform(-0.7, 0.7)
            if abs(du) > 0.35 or abs(dv) > 0.3:
                break
        label = UNKNOWN
    elif kind == "misplaced":  # the crop lands elsewhere on a card (pips, court art, an edge)
        while True:
            du, dv = rng.uniform(-0.3, 0.75), rng.uniform(-0.25, 0.65)
            if abs(du) > 0.22 or abs(dv) > 0.2:
                break
        label = UNKNOWN
    cr, sr = math.cos(rot), math.sin(rot)
    centre = np.array([fw / 2, fh / 2])
    est = (card - centre) * sc
    est = est @ np.array([[cr, sr], [-sr, cr]]) + centre + np.array([du * fw, dv * fh])
    quad = apply(Hc, est) + rng.normal(0, 0.01 * j * L, (4, 2))
    # unreadable when a quarter of the rank or of the suit is hidden, or outside the crop (a
    # misplaced crop can show only pips or the card's edge: labelled as the card, such patches
    # taught the network to guess from pips and colour — a back stays a back)
    into_patch = np.linalg.inv(corner_map(quad))
    out = outside_patch(into_patch, grid / ss).reshape(8, 5)
    h = hidden.reshape(8, 5)
    if not VISIBLE_LABELS:  # v6's labels: an index cut by the crop is still the card
        out[:] = False
    if FACE:
        # A whole card is readable by either index, or by its face when most of it shows (pips
        # count the rank); a face covered past that with both indexes hidden is `unknown`.
        h2 = (hidden2 | outside_patch(into_patch, grid2 / ss)).reshape(8, 5)
        idx_ok = lambda m: m[:4].mean() <= 0.25 and m[4:].mean() <= 0.25  # noqa: E731
        shown = 1 - (hidden_face | outside_patch(into_patch, grid_face / ss)).mean()
        if label != BACK and label != UNKNOWN and not (idx_ok(h | out) or idx_ok(h2) or shown >= 0.6):
            label = UNKNOWN
        out[:] = False
        h[:] = False
    # the measured index box has a margin around the glyphs: a crop may cut more of it
    if label != BACK and (h[:4].mean() > 0.25 or h[4:].mean() > 0.25
                          or (h | out)[:4].mean() > 0.4 or (h | out)[4:].mean() > 0.4):
        label = UNKNOWN
    # the card the crop was cut from: a reading that names it is not a misread, whatever the label
    source = UNKNOWN if kind == "surface" else IDX[label_face]  # label_face is "back" for a back
    # Another card's whole index in the crop where this card's is unreadable (a card dealt
    # almost on top, a neighbour under a misplaced crop): the patch shows that card's index, as
    # clean as any; labelled `unknown` (or `back`) it taught the network that a clean index may
    # be no card at all, which capped its confidence everywhere. It is that card.
    if VISIBLE_LABELS and not FACE and kind != "surface" and label in (UNKNOWN, BACK):
        main_quad = apply(K @ Hc, card)
        face_grid = np.c_[gu.ravel() * fw, gv.ravel() * fh]
        shown = []
        for i, (Ho, code) in enumerate(others):
            if code == "back":
                continue
            pts = apply(Ho, face_grid)
            hid = np.zeros(len(pts), bool)
            above = [q for q, _ in others[i + 1:]] + ([] if i >= n_under else [None])
            for Hq in above:
                hid |= inside(main_quad if Hq is None else apply(Hq, card), pts)
            if finger is not None:
                hid |= finger(pts)
            m = (hid | outside_patch(into_patch, pts / ss)).reshape(8, 5)
            if m[:4].mean() <= 0.25 and m[4:].mean() <= 0.25:
                shown.append(IDX[code])
        if len(shown) == 1:
            label = source = shown[0]
    if kind == "surface":  # a false card: the crop shows felt, layout lines or chips
        cam = np.asarray(cheap_surface(rng, cw, ch).convert("RGB"), np.float32)
        label = UNKNOWN
    patch = bilinear(cam, corner_map(quad))
    return np.clip(patch + 0.5, 0, 255).astype(np.uint8), label, L, source


_FACES = {}


FONT_STYLES_PER_CHUNK = 40
# --visible-labels: label a patch by the index it shows (see one_patch); off: as v6 was trained
VISIBLE_LABELS = False
# --long-side: the range of the card's long side in camera pixels (log-uniform)
LONG_SIDE = (40.0, 320.0)
# --face: whole-card patches (region 1 × 1 of the card's frame) instead of index corners
FACE = False


def _work(args):
    root, split, n, seed = args
    rng = np.random.default_rng(seed)
    if split == "fonts":  # random index styles (font_faces.py), fresh ones for every chunk
        faces = font_faces.FontFaces(FONT_STYLES_PER_CHUNK, seed)
    else:
        faces = _FACES.setdefault((root, split), Faces(root, split))
    X = np.zeros((n, PH, PW, 3), np.uint8)
    Y = np.zeros(n, np.int32)
    Ls = np.zeros(n, np.float32)
    C = np.zeros(n, np.int32)
    for i in range(n):
        X[i], Y[i], Ls[i], C[i] = one_patch(rng, faces, kind_of(rng))
    return X, Y, Ls, C


def generate(root, split, n, seed, workers=2):
    return patches.generate(root, split, n, seed, workers, work=_work)


def write_preview(path, X, Y):
    """A PNG grid of the first 160 patches [N, h, w, 3] with their labels, twice their size."""
    ph, pw = X.shape[1:3]
    cols, cw, chh = 16, 2 * pw + 6, 2 * ph + 14
    g = Image.new("RGB", (cols * cw, 10 * chh), "white")
    d = ImageDraw.Draw(g)
    for i in range(min(160, len(Y))):
        x, y = (i % cols) * cw, (i // cols) * chh
        g.paste(Image.fromarray(X[i]).resize((2 * pw, 2 * ph), Image.NEAREST), (x, y))
        d.text((x + 2, y + 2 * ph + 1), LABELS[Y[i]], fill="black")
    g.save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faces", default="var/faces")
    ap.add_argument("--split", default="train",
                    help="the face sheets' split (train, val, test), or `fonts`: random index styles "
                         "drawn from the installed fonts (font_faces.py; --faces is not read)")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--preview", help="write a PNG grid of the first 160 patches with labels")
    ap.add_argument("--visible-labels", action="store_true",
                    help="label each patch by the index it shows: `unknown` where the crop cuts the "
                         "card's index, another card where that card's whole index is in the crop "
                         "(default: v6's labels, the card unless its index is hidden)")
    ap.add_argument("--long-side", default="40,320",
                    help="range of the card's long side in camera pixels, log-uniform (default 40,320; "
                         "a 1080p camera over a whole table sees cards 55-75 px long)")
    ap.add_argument("--face", action="store_true",
                    help=f"whole-card patches: the card's whole frame upright, {nets.FACE_H}x{nets.FACE_W} "
                         "pixels, covered from any side by a hand's next card; labelled the card while "
                         "an index or 60 %% of the face shows")
    args = ap.parse_args()
    global VISIBLE_LABELS, LONG_SIDE, FACE, CORNER_U, CORNER_V, PH, PW
    if args.face:  # set before the worker processes fork
        FACE = True
        CORNER_U, CORNER_V, PH, PW = 1.0, 1.0, nets.FACE_H, nets.FACE_W
    VISIBLE_LABELS = args.visible_labels  # set before the worker processes fork
    LONG_SIDE = tuple(float(v) for v in args.long_side.split(","))
    X, Y, L, C = generate(args.faces, args.split, args.n, args.seed, args.workers)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    # L: the card's long side in camera pixels; C: the card the crop was cut from (`back`, or
    # `unknown` for a crop of the cloth), which calibration counts misreads against
    np.savez(args.out, X=X, Y=Y, L=L, C=C)
    print(f"{args.out}: {len(Y)} patches, classes {len(set(Y.tolist()))}/54")
    if args.preview:
        write_preview(args.preview, X, Y)


if __name__ == "__main__":
    main()
