#pragma once
// One attention problem as our kernels run it: the shape (common's AttentionShape, layout (B, H, N, D),
// bottom-right causal), the element type, the direction and how FP8 operands are made.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/attention_shape.hpp"
#include "common/precision.hpp"

namespace fl::device {

enum class Direction { forward, backward };

// How FP8 operands are made from the (bf16) inputs: numerics' quantize_fp8 with this scaling (per-block:
// one scale per block_rows rows of each (batch, head) matrix), after the incoherent transform of Q and K
// when asked (FlashAttention-3 fuses it into the preceding op). on_device: the rotation and quantisation
// run as kernels (kernels_src/fp8_quantize.cuh) in the problem's launch sequence, from bf16 inputs, so
// they are timed with the forward; else the host makes the codes before the upload (not timed). Both give
// the same bits. Ignored for fp16/bf16.
struct Fp8Options {
  common::Fp8Scaling scaling = common::Fp8Scaling::per_tensor;
  int block_rows = common::kDefaultFp8BlockRows;
  bool incoherent = false;
  std::uint64_t incoherent_seed = 0;
  bool on_device = false;
  // O += P V in bf16, S = Q K^T in FP8 (numerics' bf16_pv variant, issue 15's error item): V stays bf16
  // (no descale, no transpose), P is rounded to bf16 (still times 2^8). fa3_sm90 only, host-quantised.
  bool bf16_pv = false;
  // V handed to the forward already in the layout its FP8 P V reads (fa3_sm90's V^T: (B, H_kv, D, N_k
  // rounded up to 128), keys permuted within each 16 as P's register fragment holds them, padding zero;
  // kernels_src/fa3_sm90_v_transpose_map.h's vt_global_offset), so no transpose runs in the timed sequence:
  // made on the host from the codes (not timed), or written so by the device quantisation. fa3_sm90 with
  // FP8 P V (not bf16_pv) and kTransposeV = 0 only.
  bool pretransposed_v = false;
};

struct Problem {
  // Not an aggregate: callers that brace-initialise (shape, dtype, direction) keep compiling warning-free
  // as fields are added.
  Problem() = default;
  Problem(common::AttentionShape shape_, common::Precision dtype_, Direction direction_ = Direction::forward,
          Fp8Options fp8_ = {})
      : shape(shape_), dtype(dtype_), direction(direction_), fp8(fp8_) {}

  common::AttentionShape shape;
  common::Precision dtype = common::Precision::bf16;
  Direction direction = Direction::forward;
  Fp8Options fp8;
};

// FLOPs by the FlashAttention papers' convention: forward 4 * b * h * n_q * n_k * d, halved for causal
// (only when n_q == n_k is that exact; we keep the convention for every shape, as the papers do);
// backward 2.5 times the forward.
double attention_flops(Problem const& problem);

// The papers' headline shapes hold b * n = 16384 tokens and h * d = 2048 of width at every n and d, so that
// each point of a speed-against-n plot moves the same bytes of Q. Past n = 16384 the batch stays 1.
inline constexpr std::int64_t kHeadlineTokens = 16384;
inline constexpr int kHeadlineWidth = 2048;
int headline_batch(int seqlen, std::int64_t tokens = kHeadlineTokens);  // max(1, tokens / n)
int headline_heads(int head_dim);                                       // max(1, kHeadlineWidth / d)

// The headline shape for sequence length n and head dim d: b = headline_batch(n), h = headline_heads(d).
Problem headline_problem(int seqlen, int head_dim, bool causal, common::Precision dtype, Direction direction);

// "b4 h16/16 n4096x4096 d128 bf16 causal fwd": one line for tables and logs.
std::string describe(Problem const& problem);

// The dtype as the database keys a problem by it: its name, and for FP8 the options that differ from the
// default ("fp8_e4m3 per_block128 incoherent quantized_on_device"), so that measurements of different FP8
// recipes never share a key; parse_dtype_key reads it back (std::nullopt when it is not one).
std::string dtype_key(Problem const& problem);
std::optional<std::pair<common::Precision, Fp8Options>> parse_dtype_key(std::string const& key);

std::string direction_name(Direction direction);

// Rows per descale block of the FP8 factors a forward reads from device arrays (fa::AttentionParams'
// descale_block_rows), 0 when it takes per-tensor factors by value: per-block scaling's block_rows; per-
// tensor scaling quantised on the device kUniformDescaleBlockRows, every block holding the tensor's factor
// (the factor is computed on the device, after the kernel arguments are fixed).
int descale_block_rows(Problem const& problem);
// A multiple of every FP8 forward's key block (fa3_sm90 64/128/256, fa2_fp8's 32-key steps).
inline constexpr int kUniformDescaleBlockRows = 256;
bool quantizes_on_device(Problem const& problem);  // an FP8 problem with fp8.on_device
bool pretransposed_v(Problem const& problem);      // an FP8 problem with fp8.pretransposed_v

}  // namespace fl::device
