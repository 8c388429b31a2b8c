#pragma once
// Seeded host inputs for our kernels (device/run/host_tensors.hpp): N(0, 1) timing inputs, numerics' input
// families, and the float64 reference's forward that a backward kernel is given.
#include <cstdint>
#include <memory>

#include "device/problem.hpp"
#include "device/run/host_tensors.hpp"
#include "numerics/input_families.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::gpu {

// Seeded inputs (with dO for a backward problem): N(0, 1) entries rounded to the dtype's storage precision
// (bf16 for an FP8 dtype: the values an FP8 kernel's operands are quantised from), Q scaled by `q_spread`
// so that the scores have a spread wide enough for the running max to move between key blocks. Never
// zeros (a zero input hides unwritten outputs and wrong indexing).
device::HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed,
                                      float q_spread = 2.0f);

// Seeded inputs of `family` for `problem` (forward only). Some families adjust the shape (fully masked
// rows, ragged tails): `problem` is updated to the shape the inputs have.
device::HostInputs family_inputs(device::Problem& problem, InputFamily family, std::uint64_t seed);

// Whether `family` can run on a kernel compiled for `causal`: fully_masked_rows makes the problem causal, so
// a non-causal kernel instance cannot be judged on it.
bool family_applies(InputFamily family, bool causal);

// O (rounded to the dtype, as a kernel writes it) and LSE of the float64 reference: the forward outputs
// a backward kernel reads, so that the backward is judged on its own. Every row (numerics'
// reference_forward_rows: blocks of rows over tiles of keys, all cores), O summed plainly: it is only
// rounded to float and to the dtype (numerics::OutputSum::plain; LSE and the statistics below are the
// reference's bits either way).
device::HostOutputs reference_forward(device::Problem const& problem, device::HostInputs const& in);

// Whether `forward` is reference_forward's O and LSE, to the bit, on the given (flat) query rows: only those
// rows are computed again, so that a stored forward is checked for a few hundred rows' cost.
bool is_reference_forward_on(device::Problem const& problem, AttentionInputs const& inputs,
                             std::vector<std::size_t> const& query_rows, device::HostOutputs const& forward);

// The same forward, bit for bit, and from the same pass (one more dot product per score) the float64 LSE
// and D = rowsum(dO * O) of every query row (`in` must carry dO): a check of the backward given them
// (CheckOptions::row_statistics) needs no statistics pass of its own, so a backward problem pays one pass
// over its scores instead of two.
struct ForwardWithStatistics {
  device::HostOutputs forward;
  std::shared_ptr<RowStatistics const> statistics;
};
// options: the pass's threads and its cancel flag (numerics::ReferenceOptions; known_statistics unused).
ForwardWithStatistics reference_forward_with_statistics(device::Problem const& problem,
                                                        device::HostInputs const& in,
                                                        ReferenceOptions const& options = {});

}  // namespace fl::numerics::gpu
