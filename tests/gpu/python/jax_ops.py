# JAX loads built-in PTX modules through cuModuleLoadData besides its cubins (docs/transparent.md):
# under jitcache run they are cached, and the results are the same.
import jax.numpy as jnp

x = jnp.arange(1000, dtype=jnp.float32)
total = float(jnp.sum(x))
dot = float(jnp.dot(x, x))
assert total == 499500.0, total
assert dot == 332833500.0, dot
print("jax sum", total, "dot", dot)
