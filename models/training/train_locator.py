"""Trains the card / index-corner locator (nets.locator_*) and exports models/locator.onnx.

    python models/training/train_locator.py [--steps N] [--batch B] [--size S] [--seed S]

Data: the simulator's `train` split (datasets/generated/detect) plus the `train` half of
../shared/real-cards (index corners only: the real labels mark printed index corners,
not whole cards, so the card channels are not trained on real photos).
"""
import argparse
import math
import os
import pickle
import time

import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image

import data
import nets
import optim

OUT_CELLS = None  # set from --size


def gaussian(heat, ch, cx, cy, sigma, value=1.0):
    h, w = heat.shape[1:]
    r = int(math.ceil(3 * sigma))
    ix, iy = int(cx), int(cy)
    x0, x1, y0, y1 = max(0, ix - r), min(w, ix + r + 1), max(0, iy - r), min(h, iy + r + 1)
    if x0 >= x1 or y0 >= y1:
        return
    xs = np.arange(x0, x1) - ix
    ys = np.arange(y0, y1) - iy
    g = np.exp(-(xs[None, :] ** 2 + ys[:, None] ** 2) / (2 * sigma * sigma)) * value
    heat[ch, y0:y1, x0:x1] = np.maximum(heat[ch, y0:y1, x0:x1], g)


def targets(objs, size):
    """objs: dicts in network-input pixels → heat [3,h,w], weight [3,h,w], geom [8,h,w], reg mask [2,h,w]."""
    s = nets.STRIDE
    h = w = size // s
    heat = np.zeros((3, h, w), np.float32)
    weight = np.ones((3, h, w), np.float32)
    geom = np.zeros((8, h, w), np.float32)
    reg = np.zeros((2, h, w), np.float32)  # 0: card geometry valid, 1: index size valid
    for o in objs:
        if o["kind"] == "ignore_cards":
            x1, y1, x2, y2 = (np.array(o["box"]) / s).astype(int)
            weight[:2, max(0, y1):max(0, y2 + 1), max(0, x1):max(0, x2 + 1)] = 0
            continue
        cx, cy = o["center"][0] / s, o["center"][1] / s
        ix, iy = int(math.floor(cx)), int(math.floor(cy))
        inside = 0 <= ix < w and 0 <= iy < h
        if o["kind"] == "card":
            ch = 0 if o["face_up"] else 1
            if o["ignore"]:
                if inside:
                    r = max(1, int(0.15 * o["short"] / s))
                    weight[:2, max(0, iy - r):iy + r + 1, max(0, ix - r):ix + r + 1] = 0
                continue
            sigma = max(0.6, 0.08 * math.sqrt(o["long"] * o["short"]) / s)
            gaussian(heat, ch, cx, cy, sigma)
            if inside:
                heat[ch, iy, ix] = 1.0
                geom[0:2, iy, ix] = (cx - ix, cy - iy)
                geom[2:4, iy, ix] = (math.cos(2 * o["theta"]), math.sin(2 * o["theta"]))
                geom[4:6, iy, ix] = (math.log(max(o["long"], 1) / s), math.log(max(o["short"], 1) / s))
                reg[0, iy, ix] = 1
        else:  # index corner
            bw, bh = o["box"][2] - o["box"][0], o["box"][3] - o["box"][1]
            if o["ignore"]:
                if inside:
                    weight[2, max(0, iy - 1):iy + 2, max(0, ix - 1):ix + 2] = 0
                continue
            sigma = max(0.5, 0.15 * math.sqrt(bw * bh) / s)
            gaussian(heat, 2, cx, cy, sigma)
            if inside:
                heat[2, iy, ix] = 1.0
                geom[0:2, iy, ix] = (cx - ix, cy - iy)
                geom[6:8, iy, ix] = (math.log(max(bw, 1) / s), math.log(max(bh, 1) / s))
                reg[1, iy, ix] = 1
    return heat, weight, geom, reg


def transform_points(pts, sx, sy, ox, oy):
    p = np.asarray(pts, np.float64)
    return np.stack([p[..., 0] * sx - ox, p[..., 1] * sy - oy], axis=-1)


def sim_sample(a, rng, size):
    cards = a["cards"]
    longs = [data.card_geometry(c["quad"])[2] for c in cards if c["visible"] > 0.3]
    L = float(np.median(longs)) if longs else 100.0
    target = math.exp(rng.uniform(math.log(30), math.log(190)))
    s = target / L
    return a["path"], s, cards, None


def real_sample(r, rng, size):
    return r["path"], math.exp(rng.uniform(math.log(0.4), math.log(1.15))), None, r["corners"]


def render_sample(path, s, cards, corners, rng, size):
    im = data.open_rgb(path, draft_scale=s)
    W, H = Image.open(path).size
    sx = im.width / W  # draft mode may have shrunk the decode (by the same factor both ways)
    s_eff = s / sx
    iw, ih = max(1, int(round(im.width * s_eff))), max(1, int(round(im.height * s_eff)))
    # pick a crop centred near an object, so most crops contain something
    centres = []
    if cards:
        centres = [np.mean(c["quad"], axis=0) for c in cards if c["visible"] > 0.3]
    if corners:
        centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for _, b in corners]
    if centres and rng.random() < 0.8:
        c = centres[rng.integers(len(centres))]
        cx, cy = c[0] * s + rng.uniform(-size * 0.35, size * 0.35), c[1] * s + rng.uniform(-size * 0.35, size * 0.35)
    else:
        cx, cy = rng.uniform(0, iw), rng.uniform(0, ih)
    ox = int(np.clip(cx - size / 2, min(0, iw - size), max(0, iw - size)))
    oy = int(np.clip(cy - size / 2, min(0, ih - size), max(0, ih - size)))
    # resize only the needed region: box in decoded-image coordinates
    box = (ox / s_eff, oy / s_eff, (ox + size) / s_eff, (oy + size) / s_eff)
    canvas = Image.new("RGB", (size, size), tuple(int(v) for v in rng.integers(0, 255, 3)))
    bx0, by0 = max(0, box[0]), max(0, box[1])
    bx1, by1 = min(im.width, box[2]), min(im.height, box[3])
    if bx1 > bx0 + 1 and by1 > by0 + 1:
        dw, dh = int(round((bx1 - bx0) * s_eff)), int(round((by1 - by0) * s_eff))
        if dw > 0 and dh > 0:
            part = im.resize((dw, dh), Image.BILINEAR, box=(bx0, by0, bx1, by1),
                             reducing_gap=2.0 if s_eff < 0.5 else None)
            canvas.paste(part, (int(round((bx0 - box[0]) * s_eff)), int(round((by0 - box[1]) * s_eff))))
    objs = []
    if cards is not None:
        for c in cards:
            q = transform_points(c["quad"], s, s, ox, oy)
            cen, th, lng, sht = data.card_geometry(q)
            vis = c["visible"]
            if vis < 0.1:
                continue
            objs.append({"kind": "card", "face_up": c["face_up"], "center": cen, "theta": th, "long": lng,
                         "short": sht, "ignore": vis < 0.25})
            for k in c.get("corners", []):
                b = transform_points(np.array(k["box"]).reshape(2, 2), s, s, ox, oy).reshape(4)
                v = k["visible"]
                if v < 0.2:
                    continue
                objs.append({"kind": "index", "center": ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), "box": b,
                             "ignore": v < 0.6})
    else:
        objs.append({"kind": "ignore_cards", "box": [0, 0, size, size]})
        for _, bx in corners:
            b = transform_points(np.array(bx).reshape(2, 2), s, s, ox, oy).reshape(4)
            objs.append({"kind": "index", "center": ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), "box": b,
                         "ignore": False})
    x = np.asarray(canvas, np.float32)
    # rotate by a multiple of 90°: cards, angles and axis-aligned boxes all rotate exactly
    k = int(rng.integers(4)) if rng.random() < 0.5 else 0
    if k:
        x = np.rot90(x, k=k, axes=(0, 1)).copy()
        for o in objs:
            if o["kind"] == "ignore_cards":
                continue
            o["center"] = rot_pt(o["center"], k, size)
            if o["kind"] == "ignore_cards":
                continue
            if "box" in o:
                p1, p2 = rot_pt(o["box"][:2], k, size), rot_pt(o["box"][2:], k, size)
                o["box"] = [min(p1[0], p2[0]), min(p1[1], p2[1]), max(p1[0], p2[0]), max(p1[1], p2[1])]
            if "theta" in o:
                o["theta"] = o["theta"] - k * math.pi / 2
    x = data.photometric(x, rng)
    return x, targets(objs, size)


def rot_pt(p, k, size):
    """np.rot90 (counter-clockwise, axes (0,1)) applied k times to a point (x, y) of a size×size image."""
    x, y = p[0], p[1]
    for _ in range(k):
        x, y = y, size - x
    return (x, y)


def batches(sim, real, batch, size, real_frac):
    def make(rng):
        xs, hs, ws, gs, rs = [], [], [], [], []
        for _ in range(batch):
            if real and rng.random() < real_frac:
                r = real[rng.integers(len(real))]
                args = real_sample(r, rng, size)
            else:
                a = sim[rng.integers(len(sim))]
                args = sim_sample(a, rng, size)
            x, (h, w, g, r) = render_sample(*args, rng, size)
            xs.append(x.transpose(2, 0, 1) / 255.0)
            hs.append(h), ws.append(w), gs.append(g), rs.append(r)
        return tuple(np.stack(v).astype(np.float32) for v in (xs, hs, ws, gs, rs))
    return data.Prefetch(make)


def loss_fn(params, x, heat, weight, geom, reg):
    logits, pred = nets.locator_apply(params, x)
    p = jax.nn.sigmoid(logits)
    logp, log1mp = jax.nn.log_sigmoid(logits), jax.nn.log_sigmoid(-logits)
    pos = (heat >= 0.999).astype(jnp.float32)
    npos = jnp.maximum(1.0, pos.sum())
    lpos = -(pos * (1 - p) ** 2 * logp * weight).sum()
    lneg = -((1 - pos) * (1 - heat) ** 4 * p ** 2 * log1mp * weight).sum()
    focal = (lpos + lneg) / npos
    card, idx = reg[:, 0:1], reg[:, 1:2]
    anyr = jnp.maximum(card, idx)
    l1 = jnp.abs(pred - geom)
    n_card, n_any = jnp.maximum(1.0, card.sum()), jnp.maximum(1.0, anyr.sum())
    l_off = (l1[:, 0:2] * anyr).sum() / n_any
    l_ang = (l1[:, 2:4] * card).sum() / n_card
    l_size = (l1[:, 4:6] * card).sum() / n_card
    l_isize = (l1[:, 6:8] * idx).sum() / jnp.maximum(1.0, idx.sum())
    total = focal + l_off + l_ang + 0.5 * l_size + 0.5 * l_isize
    return total, (focal, l_off, l_ang, l_size, l_isize)


@jax.jit
def train_step(params, state, lr, x, heat, weight, geom, reg):
    (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x, heat, weight, geom, reg)
    params, state = optim.adam_update(params, grads, state, lr)
    return params, state, loss, parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--init", help="checkpoint to continue from (a .pkl written by a previous run)")
    ap.add_argument("--real-frac", type=float, default=0.25)
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--out", default=os.path.join(data.ROOT, "models", "locator.onnx"))
    ap.add_argument("--checkpoint", default=os.path.join(data.ROOT, "var", "training", "locator.pkl"))
    args = ap.parse_args()
    np.random.seed(args.seed)
    sim = data.load_sim("train")
    real = []
    if not args.no_real:
        allr = data.load_real()
        tr = set(data.real_split(allr)["train"])
        real = [r for r in allr if r["file"] in tr and r["corners"]]
    print(f"locator: {len(sim)} simulator images, {len(real)} real photos (train split)", flush=True)
    params = nets.locator_init(jax.random.PRNGKey(args.seed))
    if args.init:  # continue from a checkpoint (var/training/*.pkl) instead of from scratch
        with open(args.init, "rb") as f:
            params = jax.tree_util.tree_map(jnp.asarray, pickle.load(f))
        print(f"continuing from {args.init}", flush=True)
    state = optim.adam_init(params)
    it = batches(sim, real, args.batch, args.size, args.real_frac)
    t0 = time.time()
    avg = None
    for step in range(args.steps):
        b = next(it)
        lr = optim.cosine_lr(step, args.steps, args.lr)
        params, state, loss, parts = train_step(params, state, lr, *b)
        v = np.array([float(loss)] + [float(p) for p in parts])
        avg = v if avg is None else 0.98 * avg + 0.02 * v
        if step % 50 == 0 or step == args.steps - 1:
            el = time.time() - t0
            print(f"step {step:5d}/{args.steps}  loss {avg[0]:.3f} (focal {avg[1]:.3f} off {avg[2]:.3f} "
                  f"ang {avg[3]:.3f} size {avg[4]:.3f} isize {avg[5]:.3f})  lr {lr:.2e}  "
                  f"{el:.0f}s, eta {el / (step + 1) * (args.steps - step - 1):.0f}s", flush=True)
    os.makedirs(os.path.dirname(args.checkpoint), exist_ok=True)
    with open(args.checkpoint, "wb") as f:
        pickle.dump(jax.tree_util.tree_map(np.asarray, params), f)
    meta = {"tablecam.card_threshold": 0.35, "tablecam.index_threshold": 0.35,
            "tablecam.training": f"steps={args.steps} batch={args.batch} size={args.size} seed={args.seed} "
                                 f"sim_images={len(sim)} real_photos={len(real)}"}
    nets.export_locator(params, args.out, meta)
    f = lambda x: (jax.nn.sigmoid(nets.locator_apply(params, x)[0]), nets.locator_apply(params, x)[1])
    diff = nets.check_export(args.out, f, np.random.default_rng(0).random((1, 3, 128, 192), np.float32))
    print(f"exported {args.out} ({os.path.getsize(args.out)} bytes); ONNX Runtime vs JAX max |diff| {diff:.2e}")
    assert diff < 1e-3, "exported locator does not match the trained function"


if __name__ == "__main__":
    main()
