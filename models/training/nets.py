"""The two networks, written once in JAX (NCHW, the ONNX layout) and exported
to ONNX node by node, so that the file ONNX Runtime runs is exactly the
function that was trained (export checks this numerically).

Contracts (mirrored by src/locate, src/classify and docs/recognition.md):

locator  input  `image` f32 [1, 3, H, W] (H, W multiples of 32), RGB / 255
         output `heat`  f32 [1, 3, H/4, W/4] sigmoid: card face up, card face down, index corner
         output `geom`  f32 [1, 8, H/4, W/4]: dx, dy, cos2θ, sin2θ, ln(long/4), ln(short/4),
                        ln(index w/4), ln(index h/4)
classifier input `patch` f32 [N, 3, 40, 40] RGB / 255; output `probs` f32 [N, 54] softmax
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

STRIDE = 4
PATCH = 40
# v2 classifier (card-corner patches, src/classify `cut_corner_patch`): the region
# u ∈ [0, CORNER_U] × v ∈ [0, CORNER_V] of the card's frame (u across the short side, v along the
# long side, from the corner read), sampled to CORNER_H × CORNER_W pixels.
CORNER_U, CORNER_V = 0.32, 0.46
CORNER_H, CORNER_W = 48, 32
# whole-card patches (corners.py --face): the card's frame u, v ∈ [0, 1] at FACE_H × FACE_W
FACE_H, FACE_W = 64, 40


def use_face_patches():
    """Makes the card-corner geometry the whole card's (region 1 × 1 at FACE_H × FACE_W): what
    export_classifier writes into the model, and the cut the Rust side then makes."""
    global CORNER_U, CORNER_V, CORNER_H, CORNER_W
    CORNER_U, CORNER_V, CORNER_H, CORNER_W = 1.0, 1.0, FACE_H, FACE_W


PATCH_KIND = "card_corner"


def use_glyph_patches():
    """Index-glyph patches (glyph_patches.py): the proposal's own quad (region 1 × 1) at
    CORNER_H × CORNER_W, written into the model as patch kind `index_glyphs`."""
    global CORNER_U, CORNER_V, PATCH_KIND
    CORNER_U, CORNER_V, PATCH_KIND = 1.0, 1.0, "index_glyphs"


HEAT_CHANNELS = ["card_up", "card_down", "index"]


def labels():
    """52 cards in the Rust `Card::all()` order (2D 2C 2H 2S 3D ... AS), then back, unknown."""
    ranks = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    suits = ["D", "C", "H", "S"]
    return [r + s for r in ranks for s in suits] + ["back", "unknown"]


# ---------------------------------------------------------------- layers
def conv(x, p, stride=1):
    w, b = p["w"], p["b"]
    k = w.shape[-1]
    y = lax.conv_general_dilated(x, w, (stride, stride), [(k // 2, k // 2)] * 2,
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y + b[None, :, None, None]


def relu(x):
    return jnp.maximum(x, 0.0)


def up2(x):
    return jnp.repeat(jnp.repeat(x, 2, axis=2), 2, axis=3)


def _init_conv(key, cin, cout, k, bias=0.0):
    fan_in = cin * k * k
    w = jax.random.normal(key, (cout, cin, k, k)) * np.sqrt(2.0 / fan_in)
    return {"w": w.astype(jnp.float32), "b": jnp.full((cout,), bias, jnp.float32)}


# ---------------------------------------------------------------- locator
# (name, cin, cout, k, stride); the order is the forward order of the encoder.
LOC_ENCODER = [("c1", 3, 16, 3, 2), ("c2", 16, 24, 3, 2),
               ("c4", 24, 40, 3, 2), ("c5", 40, 40, 3, 1), ("c6", 40, 64, 3, 2),
               ("c7", 64, 64, 3, 1), ("c8", 64, 96, 3, 2), ("c9", 96, 96, 3, 1)]
LOC_DECODER = [("l32", 96, 48, 1), ("l16", 64, 48, 1), ("s16", 48, 48, 3),
               ("l8", 40, 32, 1), ("u8", 48, 32, 1), ("s8", 32, 32, 3),
               ("l4", 24, 32, 1), ("s4", 32, 24, 3), ("head", 24, 11, 1)]


def locator_init(key):
    keys = jax.random.split(key, len(LOC_ENCODER) + len(LOC_DECODER))
    p = {}
    for k, (name, cin, cout, ks, _) in zip(keys, LOC_ENCODER):
        p[name] = _init_conv(k, cin, cout, ks)
    for k, (name, cin, cout, ks) in zip(keys[len(LOC_ENCODER):], LOC_DECODER):
        p[name] = _init_conv(k, cin, cout, ks)
    # CenterNet's prior: heat starts near 0.1 so that the focal loss is stable.
    p["head"]["w"] = p["head"]["w"] * 0.1
    p["head"]["b"] = p["head"]["b"].at[:3].set(-2.19)
    return p


def locator_apply(p, x):
    """x: [N, 3, H, W] in 0..1 → (heat logits [N,3,h,w], geom [N,8,h,w])."""
    x = (x - 0.5) * 4.0
    f = {}
    for name, _, _, _, s in LOC_ENCODER:
        x = relu(conv(x, p[name], s))
        f[name] = x
    p16 = relu(up2(conv(f["c9"], p["l32"])) + conv(f["c7"], p["l16"]))
    p16 = relu(conv(p16, p["s16"]))
    p8 = relu(up2(conv(p16, p["u8"])) + conv(f["c5"], p["l8"]))
    p8 = relu(conv(p8, p["s8"]))
    p4 = relu(up2(p8) + conv(f["c2"], p["l4"]))
    p4 = relu(conv(p4, p["s4"]))
    out = conv(p4, p["head"])
    return out[:, :3], out[:, 3:]


# ---------------------------------------------------------------- classifier
CLS_LAYERS = [("k1", 3, 24, 3, 1), ("k2", 24, 24, 3, 2), ("k3", 24, 48, 3, 1), ("k4", 48, 48, 3, 2),
              ("k5", 48, 96, 3, 1), ("k6", 96, 96, 3, 2), ("k7", 96, 128, 3, 1)]


def classifier_init(key, n_classes=54, flat_cells=None, widths=None, factored=False):
    """`flat_cells`: None for v1 (global average pooling before the linear layer); for v2 the
    cell count of the last feature map (6 × 4 for a 48 × 32 corner patch), which is flattened
    instead — an upright corner's layout (rank above suit, at the corner) is evidence too.
    `widths`: the seven convolutions' output channels (default CLS_LAYERS'). `factored`: the 52
    card logits are a rank term + a suit term + a small per-card term (`_head`), so that what is
    learnt about a rank's glyph from one suit serves the other three (v4)."""
    keys = jax.random.split(key, len(CLS_LAYERS) + 1)  # as v2 drew them: same init when not factored
    widths = widths or [cout for _, _, cout, _, _ in CLS_LAYERS]
    cins = [3] + list(widths[:-1])
    p = {name: _init_conv(k, cin, cout, ks)
         for k, (name, _, _, ks, _), cin, cout in zip(keys, CLS_LAYERS, cins, widths)}
    for (name, _, _, _, _), cout in zip(CLS_LAYERS, widths):  # batch norm after every conv (folded at export)
        p[name]["g"] = jnp.ones((cout,), jnp.float32)
    fan_in = widths[-1] * (flat_cells or 1)

    def lin(k, n, scale=1.0):
        return (jax.random.normal(k, (fan_in, n)) * scale * np.sqrt(1.0 / fan_in)).astype(jnp.float32)
    p["fc"] = {"w": lin(keys[-1], n_classes), "b": jnp.zeros((n_classes,), jnp.float32)}
    if factored:
        k_rank, k_suit = jax.random.split(keys[-1], 3)[1:]
        p["fc"]["w"] = p["fc"]["w"] * 0.1
        p["fc_rank"] = {"w": lin(k_rank, 13)}
        p["fc_suit"] = {"w": lin(k_suit, 4)}
    return p


def _factored_w(p):
    """The fc weights with the rank and suit terms added to the 52 card columns (labels() order:
    rank-major, suits D C H S), i.e. the single linear layer that is exported."""
    w = p["fc"]["w"]
    if "fc_rank" not in p:
        return w
    r, s = p["fc_rank"]["w"], p["fc_suit"]["w"]
    cards = (r[:, :, None] + s[:, None, :]).reshape(w.shape[0], 52)
    return w + jnp.concatenate([cards, jnp.zeros((w.shape[0], w.shape[1] - 52), w.dtype)], axis=1)


def _head(p, x):
    """Global average pooling (v1) or flattening (v2, see classifier_init), then the linear layer."""
    w = _factored_w(p)
    x = jnp.mean(x, axis=(2, 3)) if w.shape[0] == x.shape[1] else x.reshape(x.shape[0], -1)
    return x @ w + p["fc"]["b"]


def classifier_apply(p, x, stats=None):
    """x: [N, 3, 40, 40] in 0..1 → logits [N, 54]. Batch norm uses the batch's statistics
    (training) unless `stats` ({layer: (mean, var)}) is given (inference, export)."""
    x = (x - 0.5) * 4.0
    for name, _, _, _, s in CLS_LAYERS:
        y = lax.conv_general_dilated(x, p[name]["w"], (s, s), [(1, 1)] * 2,
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        if stats is None:
            m, v = jnp.mean(y, axis=(0, 2, 3)), jnp.var(y, axis=(0, 2, 3))
        else:
            m, v = stats[name]
        y = (y - m[None, :, None, None]) * (p[name]["g"] / jnp.sqrt(v + BN_EPS))[None, :, None, None]
        x = relu(y + p[name]["b"][None, :, None, None])
    return _head(p, x)


BN_EPS = 1e-5


def classifier_apply_folded(p, x):
    """The deployed (exported) function: batch norm folded into the convolutions (`fold_bn`)."""
    x = (x - 0.5) * 4.0
    for name, _, _, _, s in CLS_LAYERS:
        x = relu(conv(x, p[name], s))
    return _head(p, x)


def classifier_stats(p, x):
    """Per-layer (mean, var) of the pre-normalisation activations over the batch `x`."""
    x = (x - 0.5) * 4.0
    out = {}
    for name, _, _, _, s in CLS_LAYERS:
        y = lax.conv_general_dilated(x, p[name]["w"], (s, s), [(1, 1)] * 2,
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        m, v = jnp.mean(y, axis=(0, 2, 3)), jnp.var(y, axis=(0, 2, 3))
        out[name] = (m, v)
        y = (y - m[None, :, None, None]) * (p[name]["g"] / jnp.sqrt(v + BN_EPS))[None, :, None, None]
        x = relu(y + p[name]["b"][None, :, None, None])
    return out


def convs_from_onnx(path, x):
    """The convolution parameters (w, g, b per CLS_LAYERS layer) of an exported classifier
    (`export_classifier`: batch norm folded away), unfolded so that `classifier_apply` in training
    mode computes exactly the exported convolutions on the batch `x` ([N, 3, H, W] in 0..1): each
    layer's folded weights, with the batch-norm scale and shift set to the standard deviation and
    mean of its folded output over `x`. Lets a network start from a committed model's
    convolutions when its training checkpoint is gone (train_corner.py --init-convs FILE.onnx)."""
    import onnx
    from onnx import numpy_helper
    init = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    # An 8-bit model (quantize.py, QDQ) stores NAME_quantized with a scale and zero point per
    # output channel (NAME_scale or NAME_quantized_scale): dequantized, they are NAME again.
    for q in [n for n in init if n.endswith("_quantized")]:
        base = q[:-len("_quantized")]
        pre = base if base + "_scale" in init else q
        scale, zero = init[pre + "_scale"], init[pre + "_zero_point"]
        shape = (-1,) + (1,) * (init[q].ndim - 1) if scale.ndim else ()
        init[base] = ((init[q].astype(np.float32) - np.reshape(zero, shape)) * np.reshape(scale, shape)).astype(np.float32)
    # the exporter numbers its constants in the order it writes them: conv weights, then bias
    convs = sorted((n for n in init if n.startswith("w_") and n[2:].isdigit()), key=lambda n: int(n.split("_")[1]))
    if len(convs) != len(CLS_LAYERS):
        raise ValueError(f"{path}: {len(convs)} convolutions, expected {len(CLS_LAYERS)} (not a v2 classifier?)")
    x = (jnp.asarray(x, jnp.float32) - 0.5) * 4.0
    out = {}
    for (name, _, _, _, s), wn in zip(CLS_LAYERS, convs):
        w = jnp.asarray(init[wn])
        b = jnp.asarray(init["b_" + str(int(wn.split("_")[1]) + 1)])
        y = conv(x, {"w": w, "b": b}, s)
        m, sd = jnp.mean(y, axis=(0, 2, 3)), jnp.sqrt(jnp.var(y, axis=(0, 2, 3)) + BN_EPS)
        out[name] = {"w": w, "g": sd, "b": m}
        x = relu(y)
    return out


def fold_bn(p, stats):
    """The plain conv parameters equal to conv → batch norm (with `stats`) → + b."""
    q = {k: v for k, v in p.items() if k not in ("fc_rank", "fc_suit")}
    q["fc"] = {"w": np.asarray(_factored_w(p), np.float32), "b": np.asarray(p["fc"]["b"], np.float32)}
    for name, _, _, _, _ in CLS_LAYERS:
        m, v = (np.asarray(t, np.float64) for t in stats[name])
        k = np.asarray(p[name]["g"], np.float64) / np.sqrt(v + BN_EPS)
        w = np.asarray(p[name]["w"], np.float64) * k[:, None, None, None]
        b = np.asarray(p[name]["b"], np.float64) - m * k
        q[name] = {"w": w.astype(np.float32), "b": b.astype(np.float32)}
    return q


# ---------------------------------------------------------------- ONNX export
def _onnx():
    import onnx
    from onnx import helper, TensorProto, numpy_helper
    return onnx, helper, TensorProto, numpy_helper


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0
        _, self.h, self.T, self.nh = _onnx()

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, arr, base="c"):
        nm = self.name(base)
        self.inits.append(self.nh.from_array(np.asarray(arr, dtype=np.asarray(arr).dtype), nm))
        return nm

    def op(self, op, inputs, out=None, **attrs):
        out = out or self.name(op.lower())
        self.nodes.append(self.h.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x, prm, stride=1):
        w = np.asarray(prm["w"], np.float32)
        k = w.shape[-1]
        return self.op("Conv", [x, self.const(w, "w"), self.const(np.asarray(prm["b"], np.float32), "b")],
                       kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)

    def relu(self, x):
        return self.op("Relu", [x])

    def up2(self, x):
        scales = self.const(np.array([1, 1, 2, 2], np.float32), "scales")
        return self.op("Resize", [x, "", scales], mode="nearest",
                       coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    def normalise(self, x):
        x = self.op("Sub", [x, self.const(np.array(0.5, np.float32), "half")])
        return self.op("Mul", [x, self.const(np.array(4.0, np.float32), "four")])


def _model(g, inputs, outputs, meta, doc):
    onnx, helper, _, _ = _onnx()
    graph = helper.make_graph(g.nodes, "tablecam", inputs, outputs, g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tablecam-training",
                          doc_string=doc)
    m.ir_version = 8
    for k, v in meta.items():
        e = m.metadata_props.add()
        e.key, e.value = k, str(v)
    onnx.checker.check_model(m)
    return m


def export_locator(p, path, meta):
    onnx, helper, T, _ = _onnx()
    g = _Graph()
    x = g.normalise("image")
    f = {}
    for name, _, _, _, s in LOC_ENCODER:
        x = g.relu(g.conv(x, p[name], s))
        f[name] = x
    p16 = g.relu(g.op("Add", [g.up2(g.conv(f["c9"], p["l32"])), g.conv(f["c7"], p["l16"])]))
    p16 = g.relu(g.conv(p16, p["s16"]))
    p8 = g.relu(g.op("Add", [g.up2(g.conv(p16, p["u8"])), g.conv(f["c5"], p["l8"])]))
    p8 = g.relu(g.conv(p8, p["s8"]))
    p4 = g.relu(g.op("Add", [g.up2(p8), g.conv(f["c2"], p["l4"])]))
    p4 = g.relu(g.conv(p4, p["s4"]))
    out = g.conv(p4, p["head"])
    split = g.const(np.array([3, 8], np.int64), "split")
    g.nodes.append(helper.make_node("Split", [out, split], ["heat_logits", "geom"], axis=1))
    g.op("Sigmoid", ["heat_logits"], out="heat")
    meta = {"tablecam.kind": "locator", "tablecam.version": 1, "tablecam.stride": STRIDE,
            "tablecam.heat_channels": ",".join(HEAT_CHANNELS), **meta}
    m = _model(g, [helper.make_tensor_value_info("image", T.FLOAT, [1, 3, "H", "W"])],
               [helper.make_tensor_value_info("heat", T.FLOAT, [1, 3, "h", "w"]),
                helper.make_tensor_value_info("geom", T.FLOAT, [1, 8, "h", "w"])],
               meta, "tablecam card and index-corner locator (CenterNet-style, stride 4)")
    onnx.save(m, path)


def export_classifier(p, path, meta):
    onnx, helper, T, _ = _onnx()
    g = _Graph()
    x = g.normalise("patch")
    for name, _, _, _, s in CLS_LAYERS:
        x = g.relu(g.conv(x, p[name], s))
    corner = np.asarray(p["fc"]["w"]).shape[0] != np.asarray(p[CLS_LAYERS[-1][0]]["w"]).shape[0]
    if not corner:
        x = g.op("GlobalAveragePool", [x])
    x = g.op("Flatten", [x], axis=1)
    x = g.op("Gemm", [x, g.const(np.asarray(p["fc"]["w"], np.float32), "fcw"),
                      g.const(np.asarray(p["fc"]["b"], np.float32), "fcb")])
    g.op("Softmax", [x], out="probs", axis=1)
    if corner:  # v2: upright card-corner patches (src/classify cut_corner_patch)
        meta = {"tablecam.kind": "classifier", "tablecam.version": 2, "tablecam.patch": f"{CORNER_H}x{CORNER_W}",
                "tablecam.patch_kind": PATCH_KIND, "tablecam.corner": f"{CORNER_U},{CORNER_V}",
                "tablecam.labels": ",".join(labels()), **meta}
        shape, doc = ["N", 3, CORNER_H, CORNER_W], "tablecam card-corner classifier (52 cards, back, unknown)"
    else:
        meta = {"tablecam.kind": "classifier", "tablecam.version": 1, "tablecam.patch": PATCH,
                "tablecam.labels": ",".join(labels()), **meta}
        shape, doc = ["N", 3, PATCH, PATCH], "tablecam index-corner classifier (52 cards, back, unknown)"
    m = _model(g, [helper.make_tensor_value_info("patch", T.FLOAT, shape)],
               [helper.make_tensor_value_info("probs", T.FLOAT, ["N", len(labels())])], meta, doc)
    onnx.save(m, path)


def check_export(path, fn, x):
    """Runs the exported model in ONNX Runtime and the JAX function on `x`; returns max |diff|."""
    import onnxruntime as ort
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = s.run(None, {s.get_inputs()[0].name: np.asarray(x, np.float32)})
    want = fn(jnp.asarray(x))
    want = want if isinstance(want, (tuple, list)) else [want]
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(got, want))
