#pragma once
// A kernel family as the host declares it (tuner, numerics and the tests read it): its tunables and their
// values, the constraints between them, the kernels_src file, the kernels to instantiate for a config, and
// the launches that run a problem. One implementation per family under device/families/, each mirroring the
// static_asserts beside its kernel (the kernel is the ground truth; the mirror lets the tuner prune before it
// compiles).
//
// Every kernel of every family takes one argument, fa::AttentionParams (kernels_src/fa_params.h), by
// value; a multi-launch family distinguishes its launches by LaunchStep::step, copied into params.step.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device/config.hpp"
#include "device/problem.hpp"
#include "kernels_src/fa_params.h"
#include "runtime/module.hpp"
#include "runtime/tensor_map.hpp"

namespace fl::device {

struct ParamSpec {
  std::string name;         // "kBlockM": the kernel's template parameter or -D name
  std::vector<int> values;  // the search space along this axis (a precision option's: what --config takes)
  std::string meaning;      // one line for --help and the README
};

struct LaunchStep {
  std::string name_expression;  // which kernel of the program
  runtime::Dim3 grid;
  runtime::Dim3 block;
  std::size_t dynamic_shared_bytes = 0;
  int step = 0;  // copied into params.step (fa1's outer key block, naive's pass)
  // A persistent kernel walks its tiles with a stride of gridDim.x: the runner caps grid.x at the device's
  // SM count (one CTA per SM; the kernels that set this fill an SM's shared memory alone).
  bool persistent = false;
  // Whether the kernel takes the family's tensor maps (tma_argument) as its second argument; a TMA
  // family's small helper kernels (the backward's preprocessing and dQ conversion) take only the params.
  bool takes_tensor_maps = true;
};

// Device scratch a family needs besides Q, K, V, O, LSE (naive's S and P, fa1's running statistics, the
// backward's fp32 dQ accumulator), in bytes per field of fa::AttentionParams.
struct ScratchBytes {
  std::size_t s = 0, p = 0, m = 0, l = 0, o = 0;
  std::size_t dq_accum = 0;      // params.dq_accum: (B, H_q, N_q, D) fp32
  std::size_t v_transposed = 0;  // params.v_transposed: fa3_sm90 FP8's V^T
  std::size_t dq_semaphore = 0;  // params.dq_semaphore: (B, H_q, N_q) int
  std::size_t tile_counter = 0;  // params.tile_counter: fa3_sm90's dynamic tile scheduler, two ints
  std::size_t fp8_amax = 0;      // params.fp8_amax: FP8 quantised on the device, per-tensor amax (fp64)
  std::size_t total() const {
    return s + p + m + l + o + dq_accum + v_transposed + dq_semaphore + tile_counter + fp8_amax +
           (fp8_amax ? kScratchAlign : 0);
  }
  // Slack for aligning fp8_amax's doubles after fields of any size.
  static constexpr std::size_t kScratchAlign = 8;
};

class Family {
 public:
  virtual ~Family() = default;

  virtual std::string_view name() const = 0;  // "fa2_sm80"
  // The kernels_src file holding the problem's kernels ("fa2_sm80_fwd.cu"; the backward has its own).
  virtual std::string source_file(Problem const& problem) const = 0;
  virtual std::vector<ParamSpec> parameters() const = 0;
  // Config keys that are precision claims, not speed tunables (naive's kScoreBits: 16 stores S in the input
  // type, judged by a looser bound, score_precision). --config sets them (fa-bench, fa-check); the tuner
  // never searches them (space_axes holds each at the default config's value), since its check judges every
  // candidate by the problem's recipe. Values: the default first. None by default.
  virtual std::vector<ParamSpec> precision_options() const { return {}; }

  // Why the family cannot run `problem` at all (dtype, head dim, direction), or std::nullopt.
  virtual std::optional<std::string> unsupported(Problem const& problem) const = 0;
  // Why `config` breaks a constraint for `problem` (the first rule broken, in words), or std::nullopt.
  virtual std::optional<std::string> violates(Config const& config, Problem const& problem) const = 0;
  // The hand-picked config measured best on the H200 before tuning (see the family's file).
  virtual Config default_config(Problem const& problem) const = 0;
  // A config whose outputs are the same bits run to run (no floating-point atomics): what a detector that
  // compares reruns (fa-mutate's bwd-race) must run. Most families are deterministic in every config.
  virtual Config reproducible_config(Problem const& problem) const { return default_config(problem); }

  virtual std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const = 0;
  virtual std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const = 0;
  // Kernels that load their tiles with TMA take a second by-value argument after fa::AttentionParams,
  // the launch's tensor maps (fa::TmaDescriptors, kernels_src/fa_tma_params.h): one spec per map of
  // `params`' tensors, in the descriptor struct's order; none for a family whose kernels take only the
  // params.
  virtual std::vector<runtime::TensorMapSpec> tensor_maps(Config const&, Problem const&,
                                                          fa::AttentionParams const&) const {
    return {};
  }
  // That argument's bytes: tensor_maps encoded by the driver (runtime::encode_tensor_maps); empty, and no
  // driver asked, when there are none.
  runtime::Result<std::vector<unsigned char>> tma_argument(Config const& config, Problem const& problem,
                                                           fa::AttentionParams const& params) const;
  virtual ScratchBytes scratch(Config const&, Problem const&) const { return {}; }
  // The precision of the scaled scores S * scale as the softmax reads them: fp32 for every family that
  // keeps S in registers or stores it in fp32; the input type where a config stores S in 16 bits (naive's
  // kScoreBits = 16). numerics' check of the config's outputs budgets that rounding
  // (numerics::gpu::recipe_of(family, config, problem)).
  virtual common::Precision score_precision(Config const&, Problem const&) const {
    return common::Precision::fp32;
  }
  // Query rows and keys per tile of `config`: its kBlockM and kBlockN by default (0 where absent); a family
  // whose tiles are derived (fa3_sm90: 64 rows per consumer warpgroup) says so.
  virtual std::pair<int, int> tile_rows_and_keys(Config const& config, Problem const& problem) const;
};

// The axes of the family's searched space for `problem`: its parameters, then each precision option with
// the one value of the default config (every candidate names it as the default does: the same text keys
// the store).
std::vector<ParamSpec> space_axes(Family const& family, Problem const& problem);

// Every config of the family's space (the cartesian product of space_axes) that passes violates(), in a
// fixed order: the first parameter varies slowest.
std::vector<Config> enumerate_space(Family const& family, Problem const& problem);

// Why `config` names a key that is neither a tunable nor a precision option of the family (one line
// naming both lists), or std::nullopt.
std::optional<std::string> unknown_config_key(Family const& family, Config const& config);

// The C++ spelling of the element type in name expressions: "__half", "__nv_bfloat16".
std::string element_type_name(common::Precision dtype);

}  // namespace fl::device
