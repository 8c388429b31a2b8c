#pragma once
// FlashAttention-3's incoherent processing: Q and K are both multiplied by M = D H / sqrt(d), with D a
// random +-1 diagonal and H the d x d Hadamard matrix. M is orthogonal, so (Q M)(K M)^T = Q K^T in exact
// arithmetic, while an outlier in one coordinate is spread over all d coordinates before FP8 quantisation.
// d must be a power of two (64, 128, 256); the transform is the fast Walsh-Hadamard transform, O(d log d).
#include <cstdint>
#include <span>
#include <vector>

namespace fl::numerics {

struct IncoherentTransform {
  std::vector<double> signs;  // the diagonal of D, each +1 or -1; size = head dim
};

bool is_power_of_two(int n);

// Signs drawn from std::mt19937_64(seed). Throws std::invalid_argument unless head_dim is a power of two.
IncoherentTransform make_incoherent_transform(int head_dim, std::uint64_t seed);

// Each row x (length head_dim) of `rows` becomes x D H / sqrt(head_dim), in place.
void apply_incoherent(IncoherentTransform const& t, std::span<double> rows);

// The inverse, y -> y M^T = (y H / sqrt(head_dim)) D: brings dQ' = dS (K M) back to dQ = dQ' M^T.
void apply_incoherent_inverse(IncoherentTransform const& t, std::span<double> rows);

}  // namespace fl::numerics
