"""jax_pool_oom.py clean|bug - nearest neighbours of 196,608 points (64
floats each) with jitted JAX, under the default allocator (XLA takes 75% of
the card at start-up and serves every buffer from that pool).
bug: the whole distance matrix in one call: 196,608 x 196,608 floats is
155 GB, more than the pool of any one card, and XLA raises
RESOURCE_EXHAUSTED inside its pool, without a failed driver call (oom at
that line; block_until_ready() makes the error surface there, not at the
next use of the result).  The clean run takes the queries 8,192 at a time."""
import sys

import jax
import jax.numpy as jnp

BUG = sys.argv[1:] == ["bug"]
N, BLOCK = 24 * 8192, 8192


@jax.jit
def sq_dists(q, p):
    return (q * q).sum(1)[:, None] + (p * p).sum(1)[None, :] - 2.0 * q @ p.T


@jax.jit
def nearest_other(d, first):
    rows = jnp.arange(d.shape[0])
    d = d.at[rows, rows + first].set(jnp.inf)           # not its own neighbour
    return jnp.argmin(d, axis=1)


points = jax.random.normal(jax.random.PRNGKey(0), (N, 64))
if BUG:
    d = sq_dists(points, points).block_until_ready()   # EXPECT: oom
    nearest = nearest_other(d, 0)
else:
    nearest = jnp.concatenate([nearest_other(sq_dists(points[i:i + BLOCK], points), i)
                               for i in range(0, N, BLOCK)])
print("done", int(nearest[:8].sum()))
