# PyTorch with a Triton kernel: Triton compiles with ptxas and loads cubins, PyTorch ships cubins,
# so everything passes through the preload library untouched; nothing breaks and results are right.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


n = 4096
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.ones(n, device="cuda", dtype=torch.float32)
out = torch.empty_like(x)
add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
torch.cuda.synchronize()
assert torch.equal(out, x + y), "wrong results"
print("torch", float(torch.ones(1000, device="cuda").sum()), "triton add ok", float(out.sum()))
