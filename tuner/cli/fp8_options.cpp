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
      "--fp8-quantize host)")(
      "fp8-v-layout", po::value(&flags.v_layout)->default_value(flags.v_layout),
      "FP8 dtypes: the layout of the V codes handed to the forward: rows ((B, H_kv, N_k, D), row-major; "
      "fa3_sm90 makes V^T from it: the transpose launch, or kTransposeV=1 in its producer) or transposed "
      "(fa3_sm90's V^T already, so the timed sequence is the forward alone: (B, H_kv, D, N_k rounded up to "
      "128) codes, within every 16 keys the order 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15 (P's register "
      "fragment), padding zero codes; made from the codes on the host (not timed), or written so by "
      "--fp8-quantize device; fa3_sm90 with --fp8-pv fp8 and kTransposeV=0)");
}

std::variant<device::Fp8Options, std::string> fp8_options_of(Fp8Flags const& flags) {
  device::Fp8Options o;
  auto const scaling = common::parse_fp8_scaling(flags.scaling);
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
  if (flags.v_layout != "rows" && flags.v_layout != "transposed")
    return "--fp8-v-layout '" + flags.v_layout + "' is not one of rows, transposed";
  o.pretransposed_v = flags.v_layout == "transposed";
  if (o.pretransposed_v && o.bf16_pv)
    return "--fp8-v-layout transposed is FP8 P.V's V^T; --fp8-pv bf16 reads row-major bf16 V";
  return o;
}

std::optional<std::string> fp8_dtype_conflict(device::Fp8Options const& options, common::Precision dtype) {
  if (options.pretransposed_v && !common::is_fp8(dtype))
    return "--fp8-v-layout transposed is a layout of FP8 codes; --dtype " + std::string(common::name(dtype)) +
           " takes row-major V";
  return std::nullopt;
}

}  // namespace fl::tuner
