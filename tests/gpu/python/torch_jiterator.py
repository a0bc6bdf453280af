# The PyTorch jiterator compiles its kernel with NVRTC at first use; with PyTorch's kernel cache off
# (USE_PYTORCH_KERNEL_CACHE=0) every start compiles again, and under jitcache run the second start's
# compile is a hit.
import torch

code = "template <typename T> T scaled_sum(T x, T y, T alpha) { return alpha * x + y; }"
fn = torch.cuda.jiterator._create_jit_fn(code, alpha=1.0)
a = torch.arange(1024, device="cuda", dtype=torch.float32)
b = torch.ones(1024, device="cuda", dtype=torch.float32)
out = fn(a, b, alpha=2.0)
assert torch.equal(out, 2.0 * a + b), "wrong results"
print("jiterator ok", float(out.sum()))
