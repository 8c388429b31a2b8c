#pragma once
// Warpgroup matrix products (wgmma, sm_90a): shared-memory descriptors of 128-byte-swizzled tiles, the
// fence / commit / wait discipline, and the operand fence that keeps the compiler's hands off registers
// an asynchronous product still owns. The instructions themselves are fa_wgmma_ops.cuh (generated).
//
// Accumulator layout. A warpgroup's m64nN accumulator gives warp w rows 16w..16w+15 and, per thread,
// N/2 floats in mma.sync's C-fragment order: d[t][0..1] = (row lane/4, columns 8t + 2(lane%4) + 0..1),
// d[t][2..3] = the same columns of row lane/4 + 8. So float[N/8][4] is the [kNT][4] tile of one 16-row
// mma.sync tile, and the online softmax, the masks and the epilogue of the mma.sync families apply
// unchanged (kMT = 1). The register A operand of O += P V is mma.sync's A fragment of the same rows.
//
// Shared tiles. Every operand tile is stored as TMA writes it with CU_TENSOR_MAP_SWIZZLE_128B: panels of
// 64 16-bit (128 FP8) columns, each panel rows x 128 bytes, 16-byte chunk c of row r at chunk c ^ (r % 8);
// 8 rows form one 1024-byte swizzle atom, so every panel starts 1024-aligned.
//  - K-major (Q, K: the contraction dim is contiguous): the stride between 8-row groups (SBO) is 1024;
//    the leading offset is unused with this swizzle (16 by convention). The k-step s of 32 bytes starts at
//    panel s / 4, byte 32 (s % 4) of the row: the hardware applies the swizzle to the summed address.
//    A 64-byte-swizzled tile (rows of 64 bytes: FP8 d64 Q and K, an FP8 V^T of 64 keys) is the same with
//    a 512-byte atom (8 rows x 64 bytes), two k-steps per panel and swizzle mode 2.
//  - N-major (V read as the K x N operand of P V, its rows are keys): SBO = 1024 (8 keys), LBO = the
//    panel's size (the next 64 columns of N); k-step s (16 keys) starts 16 rows = 2048 bytes further.
#include "fa_wgmma_ops.cuh"

namespace fa {

constexpr int kSwizzleBytes = 128;       // CU_TENSOR_MAP_SWIZZLE_128B: one panel row
constexpr int kSwizzleAtomBytes = 1024;  // 8 rows of 128 bytes: the alignment every panel needs
constexpr int kWarpgroupThreads = 128;

// The dynamic shared-memory base rounded up to the swizzle atom (the kernels request kSharedAlignSlack
// bytes more than their tiles need): every TMA tile and wgmma operand then starts 1024-aligned.
__device__ __forceinline__ unsigned char* align_to_swizzle_atom(unsigned char* raw) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(raw));
  return raw + (kSwizzleAtomBytes - address % kSwizzleAtomBytes) % kSwizzleAtomBytes;
}

// Bits of the 64-bit descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading and stride
// byte offsets, each >> 4 in 14 bits; swizzle mode in bits 62-63 (1 = 128-byte, 2 = 64-byte swizzle).
__device__ __forceinline__ unsigned long long descriptor_field(unsigned bytes) {
  return (bytes & 0x3FFFF) >> 4;
}
template <int kSpan = kSwizzleBytes>
__device__ __forceinline__ unsigned long long smem_descriptor(unsigned smem_address, unsigned leading_bytes,
                                                              unsigned stride_bytes) {
  static_assert(kSpan == 128 || kSpan == 64, "128- or 64-byte swizzle");
  constexpr unsigned long long kMode = kSpan == 128 ? 1ull : 2ull;
  return descriptor_field(smem_address) | descriptor_field(leading_bytes) << 16 |
         descriptor_field(stride_bytes) << 32 | kMode << 62;
}

// k-step `step` (32 bytes of contraction) of a K-major tile whose panels (kSpan-byte rows) hold
// panel_bytes each.
template <int kSpan = kSwizzleBytes>
__device__ __forceinline__ unsigned long long k_major_descriptor(unsigned tile, int panel_bytes, int step) {
  constexpr int kStepsPerPanel = kSpan / 32;
  return smem_descriptor<kSpan>(tile + (step / kStepsPerPanel) * panel_bytes + (step % kStepsPerPanel) * 32,
                                16, 8 * kSpan);
}
// k-step `step` (16 rows of keys) of an N-major 16-bit tile (V), panels of panel_bytes.
__device__ __forceinline__ unsigned long long n_major_descriptor(unsigned tile, int panel_bytes, int step) {
  return smem_descriptor(tile + step * 16 * kSwizzleBytes, panel_bytes, kSwizzleAtomBytes);
}

// Orders this thread's earlier register accesses before the wgmma that follows (needed before the first
// product and after any ordinary write of an accumulator or of a register A operand).
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// The compiler sees a wgmma as reading and writing its accumulators at the issuing asm statement; after a
// wait, this marks them written again so that no read is hoisted above the wait.
template <int kTiles>
__device__ __forceinline__ void fence_operands(float (&d)[kTiles][4]) {
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[t][e])::"memory");
}

}  // namespace fa
