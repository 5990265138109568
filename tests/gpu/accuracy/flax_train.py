"""flax_train.py clean|bug - Flax (linen) and optax: an MLP classifier
trained for 300 jitted steps, under JAX's default allocator (XLA takes 75%
of the card at start-up and serves every buffer from that pool, so the
driver sees no allocation after the first).
bug: every step's parameters are kept in a list, for an average of the
weights at the end: each step's 4 MiB of weights stay on the GPU, and the
pool fills up (memory-growth inside the pool, at the line whose result is
kept).  The clean run keeps a running average on the device instead."""
import sys

import jax
import jax.numpy as jnp
import optax
import flax.linen as nn

BUG = sys.argv[1:] == ["bug"]


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(2048)(x))
        return nn.Dense(10)(x)


model = MLP()
k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
x = jax.random.normal(k1, (1024, 512))
y = jax.random.randint(k2, (1024,), 0, 10)
params = model.init(k3, x)
tx = optax.adam(1e-3)
opt_state = tx.init(params)


@jax.jit
def train_step(params, opt_state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(model.apply(p, x), y).mean()
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def running_mean(avg, p, n):
    return jax.tree_util.tree_map(lambda a, b: a + (b - a) / n, avg, p)


history, avg = [], params
for step in range(300):
    params, opt_state, loss = train_step(params, opt_state, x, y)   # EXPECT: memory-growth
    if BUG:
        history.append(params)
    else:
        avg = running_mean(avg, params, step + 2.0)
    if step % 100 == 0:
        print("step", step, float(loss))
if BUG:
    avg = jax.tree_util.tree_map(lambda *ps: sum(ps) / len(ps), *history)
jax.block_until_ready(avg)
print("done", float(jnp.sum(jax.tree_util.tree_leaves(avg)[0])))
