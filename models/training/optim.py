"""Adam with decoupled weight decay and a cosine schedule (no optax dependency)."""
import math

import jax
import jax.numpy as jnp


def adam_init(params):
    z = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": z, "v": jax.tree_util.tree_map(jnp.zeros_like, params), "t": jnp.zeros((), jnp.int32)}


def adam_update(params, grads, state, lr, b1=0.9, b2=0.999, eps=1e-8, wd=1e-4):
    t = state["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    mh = 1 - b1 ** t.astype(jnp.float32)
    vh = 1 - b2 ** t.astype(jnp.float32)
    new = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / mh / (jnp.sqrt(v / vh) + eps) + wd * p), params, m, v)
    return new, {"m": m, "v": v, "t": t}


def cosine_lr(step, total, peak, warmup=200):
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))
