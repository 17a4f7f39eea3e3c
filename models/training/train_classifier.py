"""Trains the index-corner classifier (nets.classifier_*) and exports models/classifier.onnx.

    python models/training/train_classifier.py [--steps N] [--batch B] [--seed S]

Patches: the axis-aligned square around each printed index (data.patch_square), from the
simulator's `train` split and the `train` half of ../shared/real-cards; `back` patches where
the index would be on face-down cards; `unknown` patches anywhere else (felt, pips, court
art, chips, hands). The network must be rotation-invariant (the Rust side never rotates a
patch), so every patch is rotated by a random angle inside the jitted step.

The confidence threshold below which the Rust side answers `unknown` is calibrated on the
simulator's `val` split (deck families never seen in training) and written into the model.
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

STORE = 64          # stored patch size, pixels
STORE_SCALE = 1.6   # a stored patch covers 1.6 × the patch side (room for rotation)
LABELS = nets.labels()
IDX = {l: i for i, l in enumerate(LABELS)}
BACK, UNKNOWN = IDX["back"], IDX["unknown"]


def cut(im, cx, cy, side, out=STORE, scale=STORE_SCALE):
    """The stored patch: a square of side `side*scale` centred on (cx, cy), border replicated."""
    half = side * scale / 2
    box = (cx - half, cy - half, cx + half, cy + half)
    W, H = im.size
    if box[0] >= 0 and box[1] >= 0 and box[2] <= W and box[3] <= H:
        return np.asarray(im.resize((out, out), Image.BOX if side * scale > out else Image.BILINEAR, box=box))
    # replicate the border like OpenCV's BORDER_REPLICATE
    a = np.asarray(im)
    xs = np.clip(np.round(np.linspace(box[0], box[2], out, endpoint=False) + half / out).astype(int), 0, W - 1)
    ys = np.clip(np.round(np.linspace(box[1], box[3], out, endpoint=False) + half / out).astype(int), 0, H - 1)
    return a[ys][:, xs]


def far_from(c, centres, d):
    return all((c[0] - x) ** 2 + (c[1] - y) ** 2 > d * d for x, y in centres)


# Index boxes smaller than this (longer side, pixels) are not cut for training: at that size the
# simulator's optics and JPEG leave the print unreadable, and such patches only teach guessing.
# At inference they give low confidence, hence `unknown`.
MIN_INDEX_PX = 16


def extract_sim(anns, rng, unknown_per_image=4, min_vis=0.75):
    X, Y = [], []
    t0 = time.time()
    for n, a in enumerate(anns):
        im = Image.open(a["path"]).convert("RGB")
        W, H = im.size
        centres, sides = [], []
        for c in a["cards"]:
            for k in c.get("corners", []):
                b = k["box"]
                cx, cy, side = data.patch_square(b)
                centres.append((cx, cy))
                sides.append(side)
                if k["visible"] >= min_vis and c["visible"] >= 0.2 and max(b[2] - b[0], b[3] - b[1]) >= MIN_INDEX_PX:
                    X.append(cut(im, cx, cy, side))
                    Y.append(IDX[c["card"]])
            if not c["face_up"] and c["visible"] >= 0.6:
                for b in data.expected_index_boxes(c["quad"]):
                    cx, cy, side = data.patch_square(b)
                    X.append(cut(im, cx, cy, side))
                    Y.append(BACK)
        med = float(np.median(sides)) if sides else 30.0
        for _ in range(unknown_per_image * 4):
            if sum(1 for y in Y[-50:] if y == UNKNOWN) >= unknown_per_image and rng.random() < 0.9:
                break
            side = med * math.exp(rng.uniform(-0.5, 0.5))
            # half the unknowns on or near cards (pips, court art, edges), half anywhere
            if a["cards"] and rng.random() < 0.5:
                q = np.asarray(a["cards"][rng.integers(len(a["cards"]))]["quad"])
                w = rng.dirichlet([1, 1, 1, 1])
                cx, cy = (w[:, None] * q).sum(axis=0)
            else:
                cx, cy = rng.uniform(0, W), rng.uniform(0, H)
            if far_from((cx, cy), centres, 0.9 * side):
                X.append(cut(im, cx, cy, side))
                Y.append(UNKNOWN)
        if n % 200 == 0:
            print(f"  patches: {n}/{len(anns)} images, {len(X)} patches, {time.time() - t0:.0f}s", flush=True)
    return np.stack(X), np.array(Y, np.int32)


def extract_real(reals, rng, unknown_per_image=6):
    X, Y = [], []
    for r in reals:
        im = data.open_rgb(r["path"])
        W, H = im.size
        centres = []
        for code, b in r["corners"]:
            cx, cy, side = data.patch_square(b)
            centres.append((cx, cy))
            X.append(cut(im, cx, cy, side))
            Y.append(IDX[code])
        sides = [data.patch_square(b)[2] for _, b in r["corners"]] or [60.0]
        for _ in range(unknown_per_image):
            side = float(np.median(sides)) * math.exp(rng.uniform(-0.5, 0.5))
            cx, cy = rng.uniform(0, W), rng.uniform(0, H)
            if far_from((cx, cy), centres, 1.2 * side):
                X.append(cut(im, cx, cy, side))
                Y.append(UNKNOWN)
    return np.stack(X), np.array(Y, np.int32)


def augment(key, x):
    """x: [B, 64, 64, 3] uint8 stored patches → [B, 3, 40, 40] float in 0..1, randomly rotated,
    scaled, shifted and recoloured."""
    B = x.shape[0]
    k = jax.random.split(key, 10)
    phi = jax.random.uniform(k[0], (B,), minval=0, maxval=2 * jnp.pi)
    zoom = jnp.exp(jax.random.uniform(k[1], (B,), minval=-0.15, maxval=0.18))
    shift = jax.random.uniform(k[2], (B, 2), minval=-0.1, maxval=0.1)
    u = (jnp.arange(nets.PATCH) + 0.5) / nets.PATCH - 0.5
    gx, gy = jnp.meshgrid(u, u)  # output grid, in patch sides
    c, s = jnp.cos(phi)[:, None, None], jnp.sin(phi)[:, None, None]
    z = zoom[:, None, None]
    px = (c * gx - s * gy) * z + shift[:, 0, None, None]
    py = (s * gx + c * gy) * z + shift[:, 1, None, None]
    # to stored-patch pixel coordinates
    sx = (px / STORE_SCALE + 0.5) * STORE - 0.5
    sy = (py / STORE_SCALE + 0.5) * STORE - 0.5
    xf = x.astype(jnp.float32) / 255.0

    def sample(img, yy, xx):
        return jnp.stack([jax.scipy.ndimage.map_coordinates(img[:, :, ch], [yy, xx], order=1, mode="nearest")
                          for ch in range(3)])

    out = jax.vmap(sample)(xf, sy, sx)  # [B, 3, 40, 40]
    # photometric: grey, channel gains, contrast/brightness, inversion, noise
    grey = jax.random.uniform(k[3], (B, 1, 1, 1)) < 0.15
    out = jnp.where(grey, out.mean(axis=1, keepdims=True), out)
    out = out * jax.random.uniform(k[4], (B, 3, 1, 1), minval=0.8, maxval=1.2)
    m = out.mean(axis=(1, 2, 3), keepdims=True)
    out = (out - m) * jax.random.uniform(k[5], (B, 1, 1, 1), minval=0.6, maxval=1.4) + \
        m * jax.random.uniform(k[6], (B, 1, 1, 1), minval=0.6, maxval=1.4)
    inv = jax.random.uniform(k[7], (B, 1, 1, 1)) < 0.08
    out = jnp.where(inv, 1.0 - out, out)
    out = out + jax.random.normal(k[8], out.shape) * jax.random.uniform(k[9], (B, 1, 1, 1), maxval=0.04)
    return jnp.clip(out, 0.0, 1.0)


def centre_view(x):
    """Stored patches → the un-augmented network input (what the Rust side cuts)."""
    lo = (STORE - STORE / STORE_SCALE) / 2
    t = jnp.asarray(x, jnp.float32) / 255.0
    img = jax.image.resize(t[:, int(lo):int(STORE - lo), int(lo):int(STORE - lo), :],
                           (t.shape[0], nets.PATCH, nets.PATCH, 3), "linear")
    return jnp.transpose(img, (0, 3, 1, 2))


def loss_fn(params, x, y):
    logits = nets.classifier_apply(params, x)
    lp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=1))


@jax.jit
def train_step(params, state, lr, key, xb, yb):
    x = augment(key, xb)
    loss, grads = jax.value_and_grad(loss_fn)(params, x, yb)
    params, state = optim.adam_update(params, grads, state, lr)
    return params, state, loss


@jax.jit
def predict(params, x):
    return jax.nn.softmax(nets.classifier_apply_folded(params, x))


def evaluate(params, X, Y, key, rotate=True, bs=512):
    probs = []
    for i in range(0, len(X), bs):
        xb = jnp.asarray(X[i:i + bs])
        x = augment(jax.random.fold_in(key, i), xb) if rotate else centre_view(xb)
        probs.append(np.asarray(predict(params, x)))
    return np.concatenate(probs)


def calibrate(probs, Y, max_wrong=0.0003):
    """The lowest confidence threshold at which card answers are wrong at most `max_wrong` of the
    time, with 95 % confidence: (wrong + 3) / answered ≤ max_wrong (the "rule of three" bound, so
    a handful of lucky answers proves nothing; certifying 0.03 % needs ≥ 10,000 answers)."""
    pred, conf = probs.argmax(1), probs.max(1)
    card = pred < BACK
    best = 0.999
    for t in np.linspace(0.5, 0.999, 500):
        ans = card & (conf >= t)
        if ans.sum() and (((pred != Y) & ans).sum() + 3) / ans.sum() <= max_wrong:
            best = float(t)
            break
    return best


def report(name, probs, Y, t):
    pred, conf = probs.argmax(1), probs.max(1)
    is_card = Y < BACK
    ans = (conf >= t) & (pred < UNKNOWN)
    right = ans & (pred == Y)
    wrong = ans & (pred != Y)
    print(f"{name}: {is_card.sum()} card patches: right {right[is_card].mean():.4%}, wrong {wrong[is_card].mean():.4%}, "
          f"unknown {(~ans[is_card]).mean():.4%}; back {(pred[Y == BACK] == BACK).mean() if (Y == BACK).any() else float('nan'):.4%}; "
          f"non-card patches answered as a card {((pred < BACK) & (conf >= t))[Y == UNKNOWN].mean():.4%}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2500)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--init", help="checkpoint to continue from (a .pkl written by a previous run)")
    ap.add_argument("--real-weight", type=float, default=0.2, help="fraction of each batch from real photos")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--synth", help="synthesised training patches (patches.py --split train)")
    ap.add_argument("--synth-val", help="synthesised validation patches (patches.py --split val): calibration")
    ap.add_argument("--synth-test", help="synthesised test patches (patches.py --split test): reported only")
    ap.add_argument("--synth-weight", type=float, default=0.7, help="fraction of each batch from --synth")
    ap.add_argument("--out", default=os.path.join(data.ROOT, "models", "classifier.onnx"))
    ap.add_argument("--cache", default=os.path.join(data.ROOT, "var", "training", f"patches-min{MIN_INDEX_PX}.npz"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    if os.path.exists(args.cache):
        z = np.load(args.cache)
        Xs, Ys, Xv, Yv, Xr, Yr = (z[k] for k in ("Xs", "Ys", "Xv", "Yv", "Xr", "Yr"))
        print(f"patches from {args.cache}")
    else:
        print("cutting patches (simulator train)...", flush=True)
        Xs, Ys = extract_sim(data.load_sim("train"), rng)
        print("cutting patches (simulator val)...", flush=True)
        Xv, Yv = extract_sim(data.load_sim("val"), rng)
        allr = data.load_real()
        tr = set(data.real_split(allr)["train"])
        Xr, Yr = extract_real([r for r in allr if r["file"] in tr], rng)
        os.makedirs(os.path.dirname(args.cache), exist_ok=True)
        np.savez(args.cache, Xs=Xs, Ys=Ys, Xv=Xv, Yv=Yv, Xr=Xr, Yr=Yr)
    if args.no_real:
        Xr, Yr = Xr[:0], Yr[:0]
    print(f"classifier: {len(Xs)} simulator patches, {len(Xr)} real patches, {len(Xv)} validation; "
          f"classes present {len(set(Ys.tolist()) | set(Yr.tolist()))}/54", flush=True)
    params = nets.classifier_init(jax.random.PRNGKey(args.seed))
    if args.init:  # continue from a checkpoint (var/training/*.pkl) instead of from scratch
        with open(args.init, "rb") as f:
            params = jax.tree_util.tree_map(jnp.asarray, pickle.load(f))
        print(f"continuing from {args.init}", flush=True)
    state = optim.adam_init(params)
    key = jax.random.PRNGKey(args.seed + 7)
    n_real = int(round(args.batch * args.real_weight)) if len(Xr) else 0
    Xg = Yg = None
    if args.synth:
        z = np.load(args.synth)
        Xg, Yg = z["X"], z["Y"]
        print(f"synthesised patches: {len(Yg)} from {args.synth}", flush=True)
    n_synth = int(round(args.batch * args.synth_weight)) if Xg is not None else 0
    if args.synth_val:  # calibrate on scene patches and synthesised ones of the validation families
        z = np.load(args.synth_val)
        Xv, Yv = np.concatenate([Xv, z["X"]]), np.concatenate([Yv, z["Y"]])
    t0, avg = time.time(), None
    for step in range(args.steps):
        i = rng.integers(0, len(Xs), args.batch - n_real - n_synth)
        xb, yb = Xs[i], Ys[i]
        if n_real:
            j = rng.integers(0, len(Xr), n_real)
            xb, yb = np.concatenate([xb, Xr[j]]), np.concatenate([yb, Yr[j]])
        if n_synth:
            j = rng.integers(0, len(Yg), n_synth)
            xb, yb = np.concatenate([xb, Xg[j]]), np.concatenate([yb, Yg[j]])
        lr = optim.cosine_lr(step, args.steps, args.lr)
        params, state, loss = train_step(params, state, lr, jax.random.fold_in(key, step), xb, yb)
        avg = float(loss) if avg is None else 0.98 * avg + 0.02 * float(loss)
        if step % 100 == 0 or step == args.steps - 1:
            el = time.time() - t0
            print(f"step {step:5d}/{args.steps}  loss {avg:.4f}  lr {lr:.2e}  {el:.0f}s, "
                  f"eta {el / (step + 1) * (args.steps - step - 1):.0f}s", flush=True)
    with open(os.path.join(os.path.dirname(args.cache), "classifier.pkl"), "wb") as f:
        pickle.dump(jax.tree_util.tree_map(np.asarray, params), f)
    # Batch-norm statistics of the deployed network: un-augmented training patches, as cut.
    sel = np.random.default_rng(5).choice(len(Xs), min(4096, len(Xs)), replace=False)
    stats = jax.jit(nets.classifier_stats)(params, centre_view(Xs[sel]))
    params = nets.fold_bn(params, stats)
    pv = evaluate(params, Xv, Yv, jax.random.PRNGKey(99), rotate=False)
    t = calibrate(pv, Yv)
    print(f"calibrated min_confidence {t:.3f} on {len(Yv)} validation patches (unseen deck families)")
    report("val (as cut)", pv, Yv, t)
    report("val (rotated)", evaluate(params, Xv, Yv, jax.random.PRNGKey(98)), Yv, t)
    if args.synth_test:
        z = np.load(args.synth_test)
        report("test families, synthesised (as cut)", evaluate(params, z["X"], z["Y"], None, rotate=False), z["Y"], t)
    allr = data.load_real()
    te = set(data.real_split(allr)["test"])
    Xt, Yt = extract_real([r for r in allr if r["file"] in te], np.random.default_rng(3))
    report("real held-out photos (as cut)", evaluate(params, Xt, Yt, None, rotate=False), Yt, t)
    meta = {"tablecam.min_confidence": f"{t:.4f}",
            "tablecam.training": f"steps={args.steps} batch={args.batch} seed={args.seed} sim_patches={len(Xs)} "
                                 f"real_patches={len(Xr)}"}
    nets.export_classifier(params, args.out, meta)
    diff = nets.check_export(args.out, lambda x: jax.nn.softmax(nets.classifier_apply_folded(params, x)),
                             np.asarray(centre_view(Xv[:16])))
    print(f"exported {args.out} ({os.path.getsize(args.out)} bytes); ONNX Runtime vs JAX max |diff| {diff:.2e}")
    assert diff < 1e-4, "exported classifier does not match the trained function"


if __name__ == "__main__":
    main()
