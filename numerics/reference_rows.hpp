#pragma once
// The reference's query rows, computed in blocks (internal to numerics: reference.cpp's engine).
//
// Up to kReferenceBlockRows query rows that read the same keys and values (one batch and key/value head) are
// computed together: each tile of kTileKeys keys is loaded once per block instead of once per row, and a
// row's scores against a tile are computed one key per vector lane. Every row's values are bit for bit those
// of the row computed alone: its operations and their order are unchanged (scores by dot(); the max;
// e = exp(s - max) summed with Neumaier's compensation; P = e / l; then O, D = sum_j P_j dP_j and dQ
// accumulated key by key, TwoSum per element); only rows and keys are interleaved.
// tests/numerics/reference_rows_test.cpp compares every row with that textbook computation; the costs before
// and after are in numerics/README.md ("Costs").
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics {

constexpr std::size_t kReferenceBlockRows = 16;
constexpr std::size_t kTileKeys = 8;

// K (and, with dO, V) of the key/value heads that some query rows read, transposed in tiles of kTileKeys keys
// (tile[e * kTileKeys + lane]: element e of the tile's key `lane`, 0 past a head's last key): a row's
// scores (dP) against a tile are then one vector operation per element, each lane doing dot()'s operations
// for its key. Built once for a set of rows, in parallel over heads, and read by every block: transposing
// per block instead cost as much as the scores.
class KeyTiles {
 public:
  KeyTiles(AttentionInputs const& in, std::vector<std::size_t> const& rows, int threads);
  // The tile of keys key..key + kTileKeys - 1 (key a multiple of kTileKeys) of the head whose first flat key
  // row is `first_key_row`.
  double const* k(std::size_t first_key_row, std::size_t key) const { return at(k_, first_key_row, key); }
  double const* v(std::size_t first_key_row, std::size_t key) const { return at(v_, first_key_row, key); }

 private:
  double const* at(std::unique_ptr<double[]> const& t, std::size_t first_key_row, std::size_t key) const {
    return t.get() + (first_key_row / seqlen_k_ * tiles_per_head_ + key / kTileKeys) * tile_size_;
  }
  std::size_t seqlen_k_ = 0, tiles_per_head_ = 0, tile_size_ = 0;
  std::unique_ptr<double[]> k_, v_;  // only the heads read are written
};

// Where one query row's values go; null: not wanted. delta and dq need the inputs' dO.
struct QueryRowTargets {
  double* o = nullptr;      // (D)
  double* dq = nullptr;     // (D)
  double* lse = nullptr;    // natural log; -inf for a row that sees no key
  double* delta = nullptr;  // D_i = sum_j P_ij dP_ij = rowsum(dO_i * O_i); 0 for a row that sees no key
};

// rows[0..count): flat query rows that read the same keys (first_key_row_for_query equal), count <=
// kReferenceBlockRows, whose heads `tiles` holds; targets[t] receives row rows[t], its O summed as o_sum
// says.
void compute_query_block(AttentionInputs const& in, KeyTiles const& tiles, std::size_t const* rows,
                         QueryRowTargets const* targets, std::size_t count, OutputSum o_sum);

// `rows` (sorted) cut into blocks [begin, end) of at most kReferenceBlockRows consecutive entries that read
// the same keys.
std::vector<std::pair<std::size_t, std::size_t>> query_blocks(common::AttentionShape const& s,
                                                              std::vector<std::size_t> const& rows);

}  // namespace fl::numerics
