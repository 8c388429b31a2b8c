#pragma once
// The load ring of the warp-specialised kernels: kStages shared-memory slots per operand, each with a
// "full" mbarrier (the producer's TMA bytes have landed) and an "empty" one (every consumer warpgroup is
// done reading). The producer and the consumers walk the same sequence of loads, so a running count names
// the slot (count % kStages) and the phase parity to wait for ((count / kStages) & 1) on both sides.
//
// Parities: a fresh mbarrier is in phase 0; waiting for parity 1 returns at once (the phase "before" it
// counts as complete). So consumers wait `full` with the round's parity and the producer waits `empty`
// with the opposite one: in round 0 every slot is empty without any consumer having released it.
#include "fa_tma.cuh"

namespace fa {

template <int kStages>
struct LoadRing {
  Barrier full[kStages];
  Barrier empty[kStages];

  // One thread, before the role split: full completes on the producer's arrivals (one expect-bytes
  // arrival, plus one per producer thread that fills part of the slot with ordinary stores), empty on the
  // consumers' arrivals: one per warpgroup where the slot holds only TMA-written tiles (read by wgmma),
  // one per consumer thread where the slot also holds words written by ordinary stores (each reader must
  // release its own loads before they are overwritten).
  __device__ __forceinline__ void init(int consumer_arrivals, int producer_arrivals = 1) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], producer_arrivals);
      barrier_init(&empty[s], consumer_arrivals);
    }
  }

  static __device__ __forceinline__ int slot(int count) {
    return count % kStages;
  }
  static __device__ __forceinline__ unsigned parity(int count) {
    return (count / kStages) & 1;
  }

  // Producer: waits for the slot of load `count` to be free, then announces `bytes` on its full barrier.
  __device__ __forceinline__ Barrier* acquire(int count, unsigned bytes, const char* name) {
    wait_empty(count, name);
    return announce(count, bytes);
  }
  // The second half of acquire, for a producer that writes to the slot's companions in shared memory
  // between the two (the arrival releases those stores to the consumers that wait on full).
  __device__ __forceinline__ Barrier* announce(int count, unsigned bytes) {
    barrier_arrive_expect_bytes(&full[slot(count)], bytes);
    return &full[slot(count)];
  }
  // Producer threads that fill the slot with ordinary stores: wait for it to be free, store, then arrive
  // on full[slot(count)] (release: the stores are visible to the consumers that wait on it).
  __device__ __forceinline__ void wait_empty(int count, const char* name) {
    barrier_wait(&empty[slot(count)], parity(count) ^ 1, name);
  }
  // Producer threads that filled the slot of load `count` with ordinary stores (after wait_empty): the
  // arriving threads init counted, once their stores are complete (and, where the async proxy reads the
  // slot, wgmma or a TMA store, after each writer's fence_shared_to_async_proxy). Release: the stores are
  // visible to the consumers that wait on full.
  __device__ __forceinline__ void publish(int count, bool signalling_thread) {
    if (signalling_thread) barrier_arrive(&full[slot(count)]);
  }
  // Consumers: wait until load `count` has landed.
  __device__ __forceinline__ void wait_full(int count, const char* name) {
    barrier_wait(&full[slot(count)], parity(count), name);
  }
  // The same without a bound (fa_tma.cuh: barrier_wait_unbounded), where the producer watches over it.
  __device__ __forceinline__ void wait_full_unbounded(int count) {
    barrier_wait_unbounded(&full[slot(count)], parity(count));
  }
  // Consumers: the arriving threads init counted, once their reads of the slot are complete.
  __device__ __forceinline__ void release(int count, bool signalling_thread) {
    if (signalling_thread) barrier_arrive(&empty[slot(count)]);
  }
};

}  // namespace fa
