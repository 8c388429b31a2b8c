#pragma once
// FP8 operands quantised on the device (Problem::fp8.on_device): the launches of
// kernels_src/fp8_quantize.cuh that run before an FP8 family's own (so a timed launch sequence includes the
// incoherent rotation and the quantisation), their kernels and scratch. One place for fa3_sm90 and fa2_fp8.
#include <cstddef>
#include <string>
#include <vector>

#include "device/family.hpp"

namespace fl::device {

// The family's program: `forward_file` ("fa3_sm90_fwd.cu"), or the file that adds the quantisation kernels
// to it ("fp8_quantize_fa3_sm90_fwd.cu") when the problem quantises on the device.
std::string fp8_program_file(std::string const& forward_file, Problem const& problem);

// Descale blocks of Q (tensor 0) or of K and V (1, 2): (B, H, ceil(N / descale_block_rows)).
int fp8_descale_blocks(Problem const& problem, int tensor);

// The kernels (per block: one; per tensor: amax, scale, codes), empty unless the problem quantises on the
// device; and their launches, in that order, none of them taking tensor maps.
std::vector<std::string> fp8_quantize_name_expressions(Problem const& problem);
std::vector<LaunchStep> fp8_quantize_launches(Problem const& problem);

// params.fp8_amax: per-tensor scaling's one amax per block of Q, K, V and the three scales (fp64).
std::size_t fp8_amax_scratch_bytes(Problem const& problem);

}  // namespace fl::device
