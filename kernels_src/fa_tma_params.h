#pragma once
// The tensor maps (TMA descriptors) of one launch, shared by the host (C++20, g++) and the device (NVRTC):
// the second by-value argument of the kernels that load their tiles with the tensor copy engine. Plain
// bytes so that neither side needs the other's headers: the host encodes each with cuTensorMapEncodeTiled
// (runtime/tensor_map.hpp) and copies its 128 bytes here; the kernel hands their address to
// cp.async.bulk.tensor, which reads them from parameter space (a __grid_constant__ argument).
//
// Each map views one (B, H, N, D) tensor as 4-D {D, N, H, B} (innermost first) with the launch's strides,
// so a box never crosses into the next head and rows past N read as zeros (TMA's out-of-bounds fill) or
// are not written (stores): any N works without padding.

namespace fa {

struct alignas(64) TmaDescriptor {
  unsigned long long words[16];  // sizeof(CUtensorMap) = 128, alignment 64
};

struct TmaDescriptors {
  TmaDescriptor q, k, v, o;
};

// The backward's loads (fa3_sm90_bwd): Q and dO in query blocks, K and V in key blocks.
struct TmaBwdDescriptors {
  TmaDescriptor q, k, v, d_o;
};

}  // namespace fa
