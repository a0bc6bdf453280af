// Calls a device function defined in another translation unit (link_callee.cu): linking the two
// PTX modules resolves it.
extern __device__ float scale_and_offset(float x, int i);

extern "C" __global__ void apply_scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scale_and_offset(in[i], i);
}
