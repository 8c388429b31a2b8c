#pragma once
// The FP8 operand options of fa-bench and fa-tune, declared and validated once: how the FP8 operands of a
// problem are made (Problem::fp8: per-tensor or per-block scaling, the incoherent rotation, host or device
// quantisation). They are properties of the problem (they change what is computed and its error), not
// tunables: fa-tune tunes each FP8 recipe asked for, and keys its measurements by it (dtype_key).
#include <boost/program_options.hpp>

#include <string>
#include <variant>

#include "tuner/problem.hpp"

namespace fl::tuner {

struct Fp8Flags {
  std::string scaling = "per_tensor";
  int block_rows = numerics::kDefaultFp8BlockRows;
  bool incoherent = false;
  std::string quantize = "host";
  std::string pv = "fp8";
};

// Adds --fp8-scaling, --fp8-block-rows, --incoherent, --fp8-quantize and --fp8-pv, writing into `flags`.
void add_fp8_options(boost::program_options::options_description& desc, Fp8Flags& flags);

// The options, or the one line naming the bad value and what is allowed.
std::variant<Fp8Options, std::string> fp8_options_of(Fp8Flags const& flags);

}  // namespace fl::tuner
