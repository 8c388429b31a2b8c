#pragma once
// The FP8 operand options of fa-bench and fa-tune, declared and validated once: how the FP8 operands of a
// problem are made (Problem::fp8: per-tensor or per-block scaling, the incoherent rotation, host or device
// quantisation). They are properties of the problem (they change what is computed and its error), not
// tunables: fa-tune tunes each FP8 recipe asked for, and keys its measurements by it (dtype_key).
#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <variant>

#include "device/problem.hpp"

namespace fl::tuner {

struct Fp8Flags {
  std::string scaling = "per_tensor";
  int block_rows = common::kDefaultFp8BlockRows;
  bool incoherent = false;
  std::string quantize = "host";
  std::string pv = "fp8";
  std::string v_layout = "rows";
};

// Adds --fp8-scaling, --fp8-block-rows, --incoherent, --fp8-quantize, --fp8-pv and --fp8-v-layout, writing
// into `flags`.
void add_fp8_options(boost::program_options::options_description& desc, Fp8Flags& flags);

// The options, or the one line naming the bad value and what is allowed.
std::variant<device::Fp8Options, std::string> fp8_options_of(Fp8Flags const& flags);

// The one line when `options` ask for what only an FP8 `dtype` has (a pre-transposed V), else nothing.
std::optional<std::string> fp8_dtype_conflict(device::Fp8Options const& options, common::Precision dtype);

}  // namespace fl::tuner
