#pragma once
// Every kernel family, declared once: each family's FamilyDescription (`<family>::kDescription`, defined in
// device/families/<family>.cpp, whose opening comment says what the family is), the list the registry
// serves, and the few facts of a family that other code asks for by name. Adding a family: write its .cpp
// (its functions and kDescription in namespace fl::device::<family>), declare kDescription here and add it
// to kFamilies; an alias only if code makes one on the stack.
#include <cstddef>

#include "device/families/family_description.hpp"

namespace fl::device {

// Standard attention in three launches through device memory.
namespace naive {
extern FamilyDescription const kDescription;
}

// The FlashAttention-1 loop order, one launch per key block.
namespace fa1 {
extern FamilyDescription const kDescription;
}

// The FlashAttention-2 forward on mma.sync.
namespace fa2_sm80 {
extern FamilyDescription const kDescription;
// Dynamic shared memory of the forward kernel for this config (Q tile + kStages K and V tiles, or the
// FA-1 layout's merge buffer if larger).
std::size_t forward_shared_bytes(Config const& config, int head_dim);
}  // namespace fa2_sm80

// The FlashAttention-2 backward on mma.sync.
namespace fa2_sm80_bwd {
extern FamilyDescription const kDescription;
// The best config with the deterministic dQ pass (same bits run to run): the family's reproducible config.
Config deterministic_config(Problem const& problem);
// Dynamic shared memory of the dK/dV kernel (fa2bwd::BwdConfig::kSmemBytes) and of the dQ pass.
std::size_t dkdv_shared_bytes(int block_m, int block_n, int stages, int dq_atomic, int head_dim);
std::size_t dq_shared_bytes(int q_block_m, int q_block_n, int head_dim);
}  // namespace fa2_sm80_bwd

// The FlashAttention-2 forward with FP8 Q, K, V.
namespace fa2_fp8 {
extern FamilyDescription const kDescription;
// Dynamic shared memory: the Q tile and kStages K and V tiles, one byte per element.
std::size_t shared_bytes(Config const& config, int head_dim);
}  // namespace fa2_fp8

// The FlashAttention-1 backward loop order.
namespace fa1_bwd {
extern FamilyDescription const kDescription;
// Dynamic shared memory of one outer step's kernel.
std::size_t step_shared_bytes(int block_m, int block_n, int head_dim);
}  // namespace fa1_bwd

// The FlashAttention-3 forward on Hopper (TMA, wgmma, warp specialisation).
namespace fa3_sm90 {
extern FamilyDescription const kDescription;
}

// The FlashAttention-3 backward structure on Hopper.
namespace fa3_sm90_bwd {
extern FamilyDescription const kDescription;
}

// The split-KV forward for decoding (Flash-Decoding).
namespace flash_decode {
extern FamilyDescription const kDescription;
}

// The registry's families, in its fixed order.
inline constexpr FamilyDescription const* kFamilies[] = {
    &naive::kDescription,        &fa1::kDescription,          &fa2_sm80::kDescription,
    &fa2_sm80_bwd::kDescription, &fa2_fp8::kDescription,      &fa1_bwd::kDescription,
    &fa3_sm90::kDescription,     &fa3_sm90_bwd::kDescription, &flash_decode::kDescription};

using NaiveFamily = DeclaredFamily<naive::kDescription>;
using Fa1Family = DeclaredFamily<fa1::kDescription>;
using Fa1BwdFamily = DeclaredFamily<fa1_bwd::kDescription>;
using Fa2Sm80Family = DeclaredFamily<fa2_sm80::kDescription>;
using Fa2Sm80BwdFamily = DeclaredFamily<fa2_sm80_bwd::kDescription>;
using Fa2Fp8Family = DeclaredFamily<fa2_fp8::kDescription>;
using Fa3Sm90Family = DeclaredFamily<fa3_sm90::kDescription>;
using Fa3Sm90BwdFamily = DeclaredFamily<fa3_sm90_bwd::kDescription>;
using FlashDecodeFamily = DeclaredFamily<flash_decode::kDescription>;

}  // namespace fl::device
