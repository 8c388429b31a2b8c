#include "tuner/cli/fp8_options.hpp"

#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"

namespace po = boost::program_options;

namespace fl::tuner {

namespace {
// The FP8 kernels' per-block factors cover whole 32-row slabs (one P.V k-step of keys); a block is at most a
// whole sequence.
constexpr int kFp8BlockRowsMultiple = 32;
constexpr common::CountRange kFp8BlockRows{"--fp8-block-rows", kFp8BlockRowsMultiple, common::kSeqlen.max,
                                           "a multiple of 32"};
}  // namespace

void add_fp8_options(po::options_description& desc, Fp8Flags& flags) {
  desc.add_options()("fp8-scaling", po::value(&flags.scaling)->default_value(flags.scaling),
                     "FP8 dtypes: per_tensor or per_block scaling of Q, K, V (numerics' quantize_fp8)")(
      "fp8-block-rows",
      common::count_value(kFp8BlockRows, &flags.block_rows)->default_value(std::to_string(flags.block_rows)),
      "FP8 per-block scaling: rows per block of each (batch, head) matrix (a multiple of 32)")(
      "incoherent", po::bool_switch(&flags.incoherent),
      "FP8 dtypes: rotate Q and K by the random Hadamard transform before quantising")(
      "fp8-quantize", po::value(&flags.quantize)->default_value(flags.quantize),
      "FP8 dtypes: where Q, K, V are rotated and quantised: host (before the upload, not timed) or device "
      "(kernels_src/fp8_quantize.cuh, launched before the forward and timed with it; same bits)")(
      "fp8-pv", po::value(&flags.pv)->default_value(flags.pv),
      "FP8 dtypes: the precision of O += P V: fp8 (P and V as FP8 codes, FlashAttention-3's recipe) or bf16 "
      "(V given in bf16, P rounded to bf16, Q K^T still FP8: numerics' bf16_pv variant; fa3_sm90 with "
      "--fp8-quantize host)");
}

std::variant<Fp8Options, std::string> fp8_options_of(Fp8Flags const& flags) {
  Fp8Options o;
  auto const scaling = numerics::parse_fp8_scaling(flags.scaling);
  if (!scaling) return "--fp8-scaling '" + flags.scaling + "' is not one of per_tensor, per_block";
  o.scaling = *scaling;
  if (flags.block_rows <= 0 || flags.block_rows % kFp8BlockRowsMultiple != 0)
    return "--fp8-block-rows " + std::to_string(flags.block_rows) + " is not a positive multiple of " +
           std::to_string(kFp8BlockRowsMultiple);
  o.block_rows = flags.block_rows;
  o.incoherent = flags.incoherent;
  if (flags.quantize != "host" && flags.quantize != "device")
    return "--fp8-quantize '" + flags.quantize + "' is not one of host, device";
  o.on_device = flags.quantize == "device";
  if (flags.pv != "fp8" && flags.pv != "bf16") return "--fp8-pv '" + flags.pv + "' is not one of fp8, bf16";
  o.bf16_pv = flags.pv == "bf16";
  return o;
}

}  // namespace fl::tuner
