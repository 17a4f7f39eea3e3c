"""Quantizes an exported classifier's convolutions to 8 bits (ONNX QDQ, per output channel) and
recalibrates its `min_confidence` on validation patches, as train_corner.py does.

Why: the classifiers are compute-bound (7 or 14 convolutions per patch, 17–35 M multiply-adds),
and a 1080p frame spends most of its time in them (docs/recognition.md, "Speed"). ONNX Runtime
runs 8-bit convolutions several times faster than 32-bit float on one core.

What is kept in float: the input's normalisation, the last fully connected layer and the softmax,
so that the probabilities near the 0.999 threshold are not rounded to 8-bit logits. Weights are
quantized to 7 bits (`reduce_range`), which keeps the 8-bit products from saturating on CPUs
without VNNI instructions (ONNX Runtime's documented caveat for u8 × s8 on AVX2 / AVX-512).

Activation ranges come from patches of the *training* designs (`--ranges`), mixed, where the
network was trained on them too, with real photos' train-half patches (`--ranges-extra`, the share
of each training batch, `--extra-share`); the threshold is then calibrated on the validation
designs (`--val`), which neither the network nor the ranges saw. The float model's and the
quantized model's answers are reported side by side (and on `--real-test` patches, if given).

    python models/training/quantize.py --model var/training/float/classifier.onnx \
        --ranges var/training/ranges-corners.npz [--ranges-extra var/training/corners-real-glyphs.npz \
        --extra-share 0.35] --val var/training/corners-val.npz [--real-test REAL.npz] \
        --out models/classifier.onnx        (scripts/quantize.sh runs it so for each classifier)
"""
import argparse
import hashlib
import os
import tempfile
import time

import numpy as np

import ensemble
import train_corner as tc


# Least share of the float model's named answers on the validation patches (a card at its
# threshold) that the 8-bit model names alike, for an 8-bit file to be written. The committed
# files keep 96.8 % (corner), 98.0 % (whole card) and 99.2 % (glyph); ranges taken from a single
# patch keep 81.7 % while their top-1 agreement (97.6 %) looks as good as the committed files'.
MIN_NAMED_KEPT = 0.95
# Temperatures tried by `--temperature fit` (the one giving the validation patches the least
# negative log-likelihood is kept).
TEMPERATURES = np.round(np.arange(1.0, 3.0001, 0.05), 2)


def range_patches(main, extra, share, n):
    """`n` patches: a share `share` drawn from `extra` (if given), the rest from `main`."""
    rng = np.random.default_rng(11)
    k = int(round(n * share)) if extra is not None else 0
    pick = lambda x, m: x[np.sort(rng.choice(len(x), min(m, len(x)), replace=False))]
    return np.concatenate([pick(main, n - k)] + ([pick(extra, k)] if k else []))


def quantize(src, ranges_x, out, method):
    """Writes `src` with its Conv nodes quantized (QDQ), activation ranges measured on the
    patches `ranges_x` by `method` (`minmax`, or `percentile`: 99.999 % of the values)."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    batches = [np.asarray(tc.as_input(ranges_x[i:i + 64])) for i in range(0, len(ranges_x), 64)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {"patch": x}

    with tempfile.TemporaryDirectory() as tmp:
        pre = os.path.join(tmp, "pre.onnx")
        quant_pre_process(src, pre)
        quantize_static(pre, out, Reader(), quant_format=QuantFormat.QDQ, op_types_to_quantize=["Conv"],
                        per_channel=True, reduce_range=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8,
                        calibrate_method={"minmax": CalibrationMethod.MinMax,
                                          "percentile": CalibrationMethod.Percentile}[method])


def temper(p, t):
    """Probabilities `p` [N, 54] as a softmax of the logits divided by `t`: renormalised p ** (1 / t)."""
    lp = np.log(np.clip(p, 1e-30, 1.0)) / t
    q = np.exp(lp - lp.max(1, keepdims=True))
    return q / q.sum(1, keepdims=True)


def fit_temperature(p, y):
    """The temperature of [`TEMPERATURES`] whose tempered probabilities give the labels `y` the
    least negative log-likelihood, and that likelihood at 1 and at it."""
    nll = [float(-np.log(np.clip(temper(p, t)[np.arange(len(y)), y], 1e-30, 1.0)).mean()) for t in TEMPERATURES]
    i = int(np.argmin(nll))
    return float(TEMPERATURES[i]), nll[0], nll[i]


def with_temperature(path, t):
    """Rewrites the ONNX file `path` so that its last Softmax reads its logits divided by `t` (a
    Mul node by 1 / t in float, before the softmax)."""
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(path)
    g = m.graph
    softmax = [n for n in g.node if n.op_type == "Softmax"][-1]
    g.initializer.append(numpy_helper.from_array(np.array(1.0 / t, np.float32), "inverse_temperature"))
    node = helper.make_node("Mul", [softmax.input[0], "inverse_temperature"], ["tempered_logits"], name="temperature")
    g.node.insert(list(g.node).index(softmax), node)
    softmax.input[0] = "tempered_logits"
    onnx.checker.check_model(m)
    onnx.save(m, path)


def ms_per_patch(path, shape, batch=64, reps=20):
    """One ONNX Runtime thread, as the Rust side runs it by default."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random((batch, *shape), dtype=np.float32)
    s.run(None, {"patch": x})
    t = time.perf_counter()
    for _ in range(reps):
        s.run(None, {"patch": x})
    return (time.perf_counter() - t) / reps / batch * 1000


def main():
    import onnx
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="the exported float classifier")
    ap.add_argument("--ranges", required=True, help="patches of the training designs for activation ranges")
    ap.add_argument("--ranges-extra", help="real photos' train-half patches the network was trained on too")
    ap.add_argument("--extra-share", type=float, default=0.35)
    ap.add_argument("--n-ranges", type=int, default=2048)
    # percentile: on the validation patches its answers agree with the float model's more often than
    # min-max ranges' (corner classifier 98.2 against 97.8 %), and min-max over synthetic patches
    # alone lost 2.4 points on the held-out real photos (models/MODEL_CARD.md)
    ap.add_argument("--method", choices=("minmax", "percentile"), default="percentile")
    ap.add_argument("--real-test", help="held-out real patches, only reported")
    ap.add_argument("--val", required=True, help="validation patches the threshold is calibrated on")
    ap.add_argument("--max-wrong", type=float, default=0.0005)
    # The whole-card classifiers are overconfident on designs they never saw (v1: validation
    # negative log-likelihood 0.833 at 1, 0.746 at 1.5), and the recognizer multiplies their
    # probabilities with the index corners'. Used for the whole-card retrain of 2026-11-28, not
    # adopted (models/MODEL_CARD.md, "Whole-card classifier v2: tried, not adopted alone"); no
    # committed file is tempered (whole-card v3 averages v1 and v2 untempered).
    ap.add_argument("--temperature", choices=("none", "fit"), default="none",
                    help="fit: divide the logits by the temperature that fits the validation patches best")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    src = onnx.load(args.model)
    meta = ensemble.metadata(src)
    if "tablecam.quantized" in meta:
        raise SystemExit(f"{args.model} is quantized already ({meta['tablecam.quantized']}); quantize the float export")
    extra = np.load(args.ranges_extra)["X"] if args.ranges_extra else None
    with tempfile.TemporaryDirectory() as tmp:
        # a draft, so that a model failing the checks below never replaces the file at --out
        draft = os.path.join(tmp, "draft.onnx")
        quantize(args.model, range_patches(np.load(args.ranges)["X"], extra, args.extra_share, args.n_ranges), draft,
                 args.method)
        finish(args, src, meta, draft)


def finish(args, src, meta, draft):
    """Checks the draft 8-bit model against the float one, recalibrates its threshold and writes it
    with its metadata to `args.out`."""
    import onnx
    zv = np.load(args.val)
    rv, sv, yv = tc.readable(zv), tc.source_cards(zv), zv["Y"]
    pf = ensemble.probabilities(args.model, zv["X"])
    pq = ensemble.probabilities(draft, zv["X"])
    if args.temperature == "fit":
        temperature, nll1, nll = fit_temperature(pq, yv)
        print(f"temperature {temperature:.2f}: validation negative log-likelihood {nll1:.4f} at 1, {nll:.4f} at it")
        with_temperature(draft, temperature)
        pq = ensemble.probabilities(draft, zv["X"])
        # the float model's answers, tempered alike, are what the 8-bit ones are checked against
        pf = temper(pf, temperature)
        meta["tablecam.temperature"] = (f"{temperature:.2f}: logits divided before the softmax, fitted on "
                                        f"{os.path.basename(args.val)} (negative log-likelihood {nll1:.4f} at 1, "
                                        f"{nll:.4f} at it)")
    tf = float(meta.get("tablecam.min_confidence", "0.999"))
    t = tc.calibrate(pq[rv], sv[rv], args.max_wrong)
    print(f"calibrated min_confidence {t:.3f} on {rv.sum()} readable validation patches (float: {tf:.3f})")
    tc.report("float, val designs, readable", pf[rv], yv[rv], tf, sv[rv])
    line = tc.report("8-bit, val designs, readable", pq[rv], yv[rv], t, sv[rv])
    agree = (pf.argmax(1) == pq.argmax(1)).mean()
    print(f"top-1 agreement float/8-bit {agree:.4%}; max |probability difference| {np.abs(pf - pq).max():.4f}")
    named = lambda p, thr: np.where((p.max(1) >= thr) & (p.argmax(1) < tc.BACK), p.argmax(1), -1)
    nf, nq = named(pf, tf), named(pq, t)
    kept = ((nf >= 0) & (nq == nf)).sum() / max(1, (nf >= 0).sum())
    print(f"of the float model's {(nf >= 0).sum()} named answers the 8-bit model names {kept:.2%} alike")
    # Far fewer means the ranges do not fit the network (other patches, another input scale).
    if kept < MIN_NAMED_KEPT:
        raise SystemExit(f"{args.out} not written: the 8-bit model names only {kept:.2%} of {args.model}'s named "
                         f"validation answers alike (at least {MIN_NAMED_KEPT:.0%} expected): check --ranges, or "
                         "keep the float model")
    if args.real_test:
        zr = np.load(args.real_test)
        sr = tc.source_cards(zr)
        tc.report("float, held-out real photos", ensemble.probabilities(args.model, zr["X"]), zr["Y"], tf, sr)
        line += " | " + tc.report("8-bit, held-out real photos", ensemble.probabilities(draft, zr["X"]), zr["Y"], t, sr)
    shape = [d.dim_value for d in src.graph.input[0].type.tensor_type.shape.dim[1:]]
    f_ms, q_ms = ms_per_patch(args.model, shape), ms_per_patch(draft, shape)
    print(f"batch 64, one thread: float {f_ms:.3f} ms/patch, 8-bit {q_ms:.3f} ms/patch (ratio {q_ms / f_ms:.2f})")
    m = onnx.load(draft)
    del m.metadata_props[:]
    meta["tablecam.min_confidence"] = f"{t:.4f}"
    meta["tablecam.validation"] = line
    meta["tablecam.quantized"] = (f"8-bit convolutions (QDQ, per channel, 7-bit weights) of "
                                  f"{os.path.basename(args.model)} sha256 "
                                  f"{hashlib.sha256(open(args.model, 'rb').read()).hexdigest()[:16]}, "
                                  f"{args.method} ranges from {args.n_ranges} patches of {os.path.basename(args.ranges)}"
                                  + (f" and {os.path.basename(args.ranges_extra)} ({args.extra_share:.0%})"
                                     if args.ranges_extra else ""))
    for k, v in meta.items():
        e = m.metadata_props.add()
        e.key, e.value = k, v
    m.doc_string = src.doc_string + " — 8-bit convolutions"
    onnx.checker.check_model(m)
    onnx.save(m, args.out)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")


if __name__ == "__main__":
    main()
