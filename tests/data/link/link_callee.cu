// The device function link_caller.cu calls, defined here so that only a link resolves it.
__device__ float scale_and_offset(float x, int i) { return 2.0f * x + static_cast<float>(i % 7); }
