#pragma once
// The tensor copy engine and its barriers (sm_90): TMA tile loads and stores through <cuda/ptx>, the
// mbarrier pipeline of full/empty slots, named barriers, and register reallocation between warpgroups.
//
// Every wait is bounded: a TMA or mbarrier mistake (a wrong byte count, a parity off by one) otherwise
// hangs the kernel and whatever runs it. After kBarrierTimeoutNs of one wait the thread traps (printing
// the barrier's name first when compiled with -DFA_DEBUG_BARRIERS), which ends the launch with an error
// the host reports (a sticky fault that the tuner records against this config). 4 s: a real wait lasts
// microseconds (milliseconds under compute-sanitizer).
#include <cuda/ptx>

#include "fa_tma_params.h"

namespace fa {

// One mbarrier: a 64-bit word in shared memory (the type <cuda/ptx> takes).
using Barrier = cuda::std::uint64_t;

// The low 32 bits of the global nanosecond timer: one register instead of two (the producer warpgroup
// runs on 24; the 64-bit timer made its causal loop spill), and an unsigned difference stays right across
// one wrap, so bounds up to 4.29 s can be measured.
constexpr unsigned kBarrierTimeoutNs = 4u * 1000 * 1000 * 1000;

__device__ __forceinline__ unsigned global_timer_low_ns() {
  unsigned t;
  asm volatile("mov.u32 %0, %globaltimer_lo;" : "=r"(t));
  return t;
}

// Blocks until the phase of `bar` with parity `parity` has completed. The timeout traps; with
// FA_DEBUG_BARRIERS it first prints the barrier's name. The print is off by default because a function
// call (printf) inside the consumers' loop makes ptxas serialise every wgmma (C7510).
__device__ __forceinline__ void barrier_wait(Barrier* bar, unsigned parity, const char* name) {
  if (cuda::ptx::mbarrier_try_wait_parity(bar, parity)) return;
  const unsigned start = global_timer_low_ns();
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
    if (global_timer_low_ns() - start > kBarrierTimeoutNs) {
#ifdef FA_DEBUG_BARRIERS
      printf("flashlab: barrier %s timed out (block %d, thread %d, parity %u)\n", name, blockIdx.x,
             threadIdx.x, parity);
#else
      (void)name;
#endif
      __trap();
    }
  }
}

// The same wait without a bound, for waits that a bounded wait elsewhere watches over. In fa3_sm90_bwd's
// consumer loop the timer loop's exit made ptxas allocate the consumers at the entry's 168 registers
// despite setmaxnreg (dK + dV alone, 128 floats at d128, are live across it): 144-588 bytes of spills
// and serialised wgmma (CUDA 13.0, 2026-12-01). There the producer warp's bounded waits stand guard: a
// consumer stuck here never releases its slot, and the producer's wait for that slot traps.
__device__ __forceinline__ void barrier_wait_unbounded(Barrier* bar, unsigned parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

__device__ __forceinline__ void barrier_init(Barrier* bar, unsigned arrivals) {
  cuda::ptx::mbarrier_init(bar, arrivals);
}
// Makes the initialised barriers visible to the copy engine (the async proxy) before any copy uses them.
__device__ __forceinline__ void barrier_init_fence() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}
__device__ __forceinline__ void barrier_arrive(Barrier* bar) {
  (void)cuda::ptx::mbarrier_arrive(bar);
}
// The producer's arrival: the phase completes once `bytes` have landed from the copies that name `bar`.
__device__ __forceinline__ void barrier_arrive_expect_bytes(Barrier* bar, unsigned bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, bar, bytes);
}

// One box of a 4-D map {D, N, H, B} at (column, row, head, batch) into shared memory; completes on bar.
__device__ __forceinline__ void tma_load(void* smem, const TmaDescriptor& map, int column, int row, int head,
                                         int batch, Barrier* bar) {
  const int coords[4] = {column, row, head, batch};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, &map, coords, bar);
}
// One box from shared memory to global; rows past the map's N are not written.
__device__ __forceinline__ void tma_store(const TmaDescriptor& map, int column, int row, int head, int batch,
                                          const void* smem) {
  const int coords[4] = {column, row, head, batch};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map, coords, smem);
}
__device__ __forceinline__ void tma_store_commit() {
  cuda::ptx::cp_async_bulk_commit_group();
}
// Waits until the committed stores have read their shared memory (it may be reused afterwards).
__device__ __forceinline__ void tma_store_wait_read() {
  cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
}
// Ordinary shared-memory stores (the epilogue's O) made visible to the copy engine that reads them next.
__device__ __forceinline__ void fence_shared_to_async_proxy() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
}

// Named barriers 1..15 (0 is __syncthreads): `threads` of the CTA meet; arrive does not wait.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads));
}

// setmaxnreg (sm_90a): moves registers from the producer warpgroup to the consumers. Takes effect only
// with a register cap at entry (__launch_bounds__(threads, 1)) and each role in one branch of an if/else.
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

}  // namespace fa
