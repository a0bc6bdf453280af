# JAX loads built-in PTX modules through cuModuleLoadData besides its cubins (docs/transparent.md):
# under jitcache run they are cached, and the results are the same.
import jax.numpy as jnp

# Sums that float32 holds exactly (below 2^24), whatever order the GPU adds in.
x = jnp.arange(100, dtype=jnp.float32)
total = float(jnp.sum(x))
dot = float(jnp.dot(x, x))
assert total == 4950.0, total
assert dot == 328350.0, dot
print("jax sum", total, "dot", dot)
