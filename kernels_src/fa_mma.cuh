#pragma once
// Tensor-core fragments: ldmatrix loads and mma.sync m16n8k16 (fp16/bf16 -> fp32) and m16n8k32 (fp8).
//
// Fragment layouts (PTX ISA, "mma.m16n8k16"), lane = 4 * g + c (g = lane / 4, c = lane % 4):
//   A (16x16, row): a0 = (g, 2c..2c+1), a1 = (g+8, 2c..), a2 = (g, 8+2c..), a3 = (g+8, 8+2c..)
//   B (16x8,  col): b0 = (k 2c..2c+1, n g), b1 = (k 8+2c.., n g)
//   C (16x8)      : c0,c1 = (g, 2c..2c+1), c2,c3 = (g+8, 2c..2c+1)
// Two C tiles side by side (16x16 of fp32) repack into one A fragment: that is how P stays in registers
// between the softmax and the P.V product.
#include "fa_types.cuh"

namespace fa {

// Four 8x8 matrices of 16-bit elements; lane l gives the row address of matrix l/8, row l%8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// The same, transposed: lane l receives (row 2c..2c+1, col g) of each matrix (B operand from a row-major
// [k][n] tile such as V stored [key][d]).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// D = A * B + D, m16n8k16, fp32 accumulators.
template <typename Element>
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);

template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                  unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                         unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// FP8: m16n8k32, A and B hold 4 e4m3 (or e5m2) values per register; same row/col roles as above with
// k doubled (a0 = (g, 4c..4c+3), a1 = (g+8, 4c..), a2 = (g, 16+4c..), a3 = (g+8, 16+4c..);
// b0 = (k 4c..4c+3, n g), b1 = (k 16+4c.., n g)). sm_89 and later.
__device__ __forceinline__ void mma_16832_e4m3(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                               unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_16832_e5m2(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                               unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Zero C fragments (accumulators of kRows x kCols tiles) before a product accumulates into them.
template <int kRows, int kCols>
__device__ __forceinline__ void clear_accumulators(float (&c)[kRows][kCols][4]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int t = 0; t < kCols; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) c[r][t][e] = 0.f;
}

}  // namespace fa
