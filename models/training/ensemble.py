"""Merges several exported classifiers of one contract into one ONNX file whose `probs` is their
combined answer, and calibrates its `min_confidence` on validation patches.

Why: independently trained networks rarely make the *same* confident mistake. On the glyph
classifier's validation designs a single network certifies no threshold below the 0.999 fallback
(its wrong answers are sure in every view, models/MODEL_CARD.md), while the mean of two networks'
probabilities is certified lower and reads more indexes right. One file keeps the Rust side
unchanged: it loads one classifier, checks one contract and runs one batched session.

    python ensemble.py --member A.onnx --member B.onnx --val val.npz [--real-test real-test.npz] \
        [--combine mean|geo] --out glyph_classifier.onnx

A member that is itself an ensemble written by this script contributes each of its networks
(`members_of`), so that a network trained later joins the committed ones without retraining them.
"""
import argparse
import hashlib
import os

import numpy as np

import train_corner as tc

# What every member must share: the Rust side checks these against the patch it cuts.
CONTRACT = ("tablecam.kind", "tablecam.version", "tablecam.patch", "tablecam.patch_kind", "tablecam.corner",
            "tablecam.labels")


def metadata(m):
    return {p.key: p.value for p in m.metadata_props}


def merged(models, combine):
    """One graph: every member reads the shared input; `probs` = their mean probability
    (`mean`), or the normalised geometric mean (`geo`: softmax of the mean log-probability)."""
    import onnx
    from onnx import helper
    first = models[0].graph
    inp = first.input[0].name
    nodes, inits, outs = [], [], []
    for i, m in enumerate(models):
        g, pre = m.graph, f"m{i}_"
        if g.input[0].name != inp or len(g.output) != 1:
            raise ValueError(f"member {i}: input {g.input[0].name!r}, {len(g.output)} outputs; expected {inp!r} and one")

        def ren(n):
            return n if n == inp or n == "" else pre + n
        for t in g.initializer:
            t2 = onnx.TensorProto()
            t2.CopyFrom(t)
            t2.name = ren(t.name)
            inits.append(t2)
        for n in g.node:
            n2 = onnx.NodeProto()
            n2.CopyFrom(n)
            n2.name = pre + n.name if n.name else ""
            n2.input[:] = [ren(x) for x in n.input]
            n2.output[:] = [ren(x) for x in n.output]
            nodes.append(n2)
        outs.append(ren(g.output[0].name))
    out = first.output[0].name
    if combine == "mean":
        nodes.append(helper.make_node("Mean", outs, [out]))
    else:
        floor = helper.make_tensor("ens_floor", onnx.TensorProto.FLOAT, [], [1e-12])
        inits.append(floor)
        logs = []
        for o in outs:
            nodes.append(helper.make_node("Max", [o, "ens_floor"], [o + "_floor"]))
            nodes.append(helper.make_node("Log", [o + "_floor"], [o + "_log"]))
            logs.append(o + "_log")
        nodes.append(helper.make_node("Mean", logs, ["ens_meanlog"]))
        nodes.append(helper.make_node("Softmax", ["ens_meanlog"], [out], axis=1))
    graph = helper.make_graph(nodes, "tablecam", [first.input[0]], [first.output[0]], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tablecam-training",
                          doc_string=f"{models[0].doc_string} — ensemble ({combine}) of {len(models)} networks")
    m.ir_version = models[0].ir_version
    return m


def members_of(m):
    """The networks of `m`: `m` itself, or, for an ensemble written by `merged`, each member's own
    graph taken back out of it (its nodes, initialisers and output renamed back; metadata of the
    contract, and each member's own `tablecam.training`)."""
    import onnx
    from onnx import helper
    meta = metadata(m)
    if "tablecam.ensemble" not in meta:
        return [m]
    g = m.graph
    inp, out = g.input[0].name, g.output[0].name
    trainings = meta.get("tablecam.training", "").split(" || ")
    found = []
    i = 0
    while any(n.output and n.output[0] == f"m{i}_{out}" for n in g.node):
        pre = f"m{i}_"

        def back(x):
            return x[len(pre):] if x.startswith(pre) else x
        nodes = []
        for n in g.node:
            if not n.output or not n.output[0].startswith(pre) or n.output[0].startswith(f"{pre}{out}_"):
                continue  # another member's, or the combination's (`{member output}_floor`, `_log`)
            n2 = onnx.NodeProto()
            n2.CopyFrom(n)
            n2.name = back(n.name)
            n2.input[:] = [back(x) for x in n.input]
            n2.output[:] = [back(x) for x in n.output]
            nodes.append(n2)
        inits = []
        for t in g.initializer:
            if t.name.startswith(pre):
                t2 = onnx.TensorProto()
                t2.CopyFrom(t)
                t2.name = back(t.name)
                inits.append(t2)
        graph = helper.make_graph(nodes, "tablecam", [g.input[0]], [g.output[0]], inits)
        one = helper.make_model(graph, opset_imports=list(m.opset_import), producer_name=m.producer_name,
                                doc_string=m.doc_string.split(" — ensemble")[0])
        one.ir_version = m.ir_version
        for k in CONTRACT + ("tablecam.designs",):
            if k in meta:
                e = one.metadata_props.add()
                e.key, e.value = k, meta[k]
        e = one.metadata_props.add()
        e.key, e.value = "tablecam.training", trainings[i] if i < len(trainings) else "?"
        onnx.checker.check_model(one)
        found.append(one)
        i += 1
    if not found or inp not in {x for n in g.node for x in n.input}:
        raise ValueError("an ensemble file whose members cannot be taken back out")
    return found


def probabilities(path_or_bytes, X, bs=512):
    import onnxruntime as ort
    s = ort.InferenceSession(path_or_bytes, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    return np.concatenate([s.run(None, {name: np.asarray(tc.as_input(X[i:i + bs]))})[0]
                           for i in range(0, len(X), bs)])


def main():
    import onnx
    ap = argparse.ArgumentParser()
    ap.add_argument("--member", action="append", required=True, help="an exported classifier, or an ensemble whose networks all join (at least two networks in all)")
    ap.add_argument("--combine", choices=("mean", "geo"), default="mean")
    ap.add_argument("--val", required=True, help="validation patches the threshold is calibrated on")
    ap.add_argument("--real-test", help="more patches only reported")
    ap.add_argument("--max-wrong", type=float, default=0.0005)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    # (name, network): an ensemble file given as a member contributes each of its networks
    nets = []
    for p in args.member:
        inner = members_of(onnx.load(p))
        nets += [(os.path.basename(p) if len(inner) == 1 else f"{os.path.basename(p)}[{k}]", net)
                 for k, net in enumerate(inner)]
    if len(nets) < 2:
        ap.error("an ensemble needs at least two networks")
    names = [n for n, _ in nets]
    models = [net for _, net in nets]
    metas = [metadata(m) for m in models]
    for p, meta in zip(names[1:], metas[1:]):
        for k in CONTRACT:
            if meta.get(k) != metas[0].get(k):
                raise SystemExit(f"{p}: {k} = {meta.get(k)!r}, but {names[0]} has {metas[0].get(k)!r}: "
                                 "members of one ensemble must share the patch contract")
    m = merged(models, args.combine)
    onnx.checker.check_model(m)
    blob = m.SerializeToString()
    zv = np.load(args.val)
    pv, rv, sv = probabilities(blob, zv["X"]), tc.readable(zv), tc.source_cards(zv)
    t = tc.calibrate(pv[rv], sv[rv], args.max_wrong)
    print(f"calibrated min_confidence {t:.3f} on {rv.sum()} readable validation patches", flush=True)
    lines = [tc.report("val designs, readable", pv[rv], zv["Y"][rv], t, sv[rv])]
    if args.real_test:
        zr = np.load(args.real_test)
        lines.append(tc.report("held-out real photos", probabilities(blob, zr["X"]), zr["Y"], t, tc.source_cards(zr)))
    meta = {k: metas[0][k] for k in CONTRACT if k in metas[0]}
    meta["tablecam.min_confidence"] = f"{t:.4f}"
    meta["tablecam.ensemble"] = f"{args.combine} of " + ", ".join(
        f"{n} sha256 {hashlib.sha256(net.SerializeToString()).hexdigest()[:16]}" for n, net in nets)
    meta["tablecam.training"] = " || ".join(x.get("tablecam.training", "?") for x in metas)
    meta["tablecam.validation"] = " | ".join(lines)
    if "tablecam.designs" in metas[0]:
        meta["tablecam.designs"] = metas[0]["tablecam.designs"]
    for k, v in meta.items():
        e = m.metadata_props.add()
        e.key, e.value = k, v
    onnx.save(m, args.out)
    # the merged file must answer exactly the members' combination
    x = zv["X"][:64]
    ps = [probabilities(net.SerializeToString(), x) for net in models]
    want = np.mean(ps, 0) if args.combine == "mean" else \
        (lambda g: g / g.sum(1, keepdims=True))(np.exp(np.mean(np.log(np.maximum(ps, 1e-12)), 0)))
    diff = float(np.abs(probabilities(args.out, x) - want).max())
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes); vs members combined in NumPy max |diff| {diff:.2e}")
    assert diff < 1e-5, "the merged graph does not compute the members' combination"


if __name__ == "__main__":
    main()
