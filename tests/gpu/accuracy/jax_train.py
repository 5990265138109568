"""jax_train.py clean|bug - a JAX jit training loop (linear regression MLP,
300 steps).  Run with XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async (run.py sets
it) so buffers are stream-ordered driver allocations the trace sees one by
one (the default BFC arena preallocates 75% of the GPU at start).
bug: every step's parameters are kept in a list (`history.append(...)`):
device memory grows to the end (memory-growth at the update line)."""
import sys

import jax
import jax.numpy as jnp

BUG = sys.argv[1:] == ["bug"]
key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
params = {"w1": jax.random.normal(k1, (1024, 1024)) * 0.01,
          "w2": jax.random.normal(k2, (1024, 1)) * 0.01}
x = jax.random.normal(k3, (512, 1024))
y = jnp.sum(x, axis=1, keepdims=True)


def loss_fn(p, x, y):
    h = jnp.tanh(x @ p["w1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)


@jax.jit
def update(p, x, y):
    g = jax.grad(loss_fn)(p, x, y)
    return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g)


history = []
for step in range(300):
    params = update(params, x, y)   # EXPECT: memory-growth
    if BUG:
        history.append(params)
    if step % 100 == 0:
        print("step", step, float(loss_fn(params, x, y)))
jax.block_until_ready(params)
print("done")
