#pragma once
// The tensors of one attention problem, held in float64 on the host.
//
// Every value an implementation can consume or produce (fp32, fp16, bf16, fp8 after descaling) is exactly
// representable in a double, so one container type serves the reference, the emulators and the .npy files.
// Layout (ARCHITECTURE.md): row-major, contiguous, (B, H, N, D); LSE is (B, H, N).
//
// A "query row" is the flat index r = (b * H_q + h) * N_q + i, a "key row" (a column of the score
// matrix, the unit of dK and dV) is c = (b * H_kv + h_kv) * N_k + j.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/attention_shape.hpp"

namespace fl::numerics {

struct AttentionInputs {
  common::AttentionShape shape;
  std::vector<double> q;    // (B, H_q, N_q, D)
  std::vector<double> k;    // (B, H_kv, N_k, D)
  std::vector<double> v;    // (B, H_kv, N_k, D)
  std::vector<double> d_o;  // (B, H_q, N_q, D); empty when only the forward is wanted

  bool has_backward() const { return !d_o.empty(); }
};

struct AttentionOutputs {
  std::vector<double> o;    // (B, H_q, N_q, D)
  std::vector<double> lse;  // (B, H_q, N_q), natural log; -inf for a row with no visible key
  std::vector<double> dq;   // (B, H_q, N_q, D); empty when the backward was not computed
  std::vector<double> dk;   // (B, H_kv, N_k, D)
  std::vector<double> dv;   // (B, H_kv, N_k, D)

  bool has_backward() const { return !dq.empty(); }
};

// Where query row r and key row c live, and what they see.
struct RowIndex {
  int batch = 0;
  int head = 0;  // query head for query rows, key/value head for key rows
  int pos = 0;   // position along the sequence
};

inline std::size_t query_rows(common::AttentionShape const& s) {
  return std::size_t(s.batch) * s.heads_q * s.seqlen_q;
}
inline std::size_t key_rows(common::AttentionShape const& s) {
  return std::size_t(s.batch) * s.heads_kv * s.seqlen_k;
}

inline RowIndex query_row_index(common::AttentionShape const& s, std::size_t r) {
  RowIndex x;
  x.pos = int(r % std::size_t(s.seqlen_q));
  std::size_t const bh = r / std::size_t(s.seqlen_q);
  x.head = int(bh % std::size_t(s.heads_q));
  x.batch = int(bh / std::size_t(s.heads_q));
  return x;
}

inline RowIndex key_row_index(common::AttentionShape const& s, std::size_t c) {
  RowIndex x;
  x.pos = int(c % std::size_t(s.seqlen_k));
  std::size_t const bh = c / std::size_t(s.seqlen_k);
  x.head = int(bh % std::size_t(s.heads_kv));
  x.batch = int(bh / std::size_t(s.heads_kv));
  return x;
}

// First key row (flat) of the key/value head that query row r reads.
inline std::size_t first_key_row_for_query(common::AttentionShape const& s, std::size_t r) {
  RowIndex const x = query_row_index(s, r);
  return (std::size_t(x.batch) * s.heads_kv + std::size_t(s.kv_head_of(x.head))) * s.seqlen_k;
}

// Number of keys query position i sees (bottom-right causal); 0 means a fully masked row.
inline int visible_keys(common::AttentionShape const& s, int query_pos) {
  if (!s.causal) return s.seqlen_k;
  std::int64_t const last = std::int64_t(query_pos) + s.causal_offset();
  if (last < 0) return 0;
  return int(std::min<std::int64_t>(last + 1, s.seqlen_k));
}

inline std::span<double const> row_of(std::vector<double> const& t, std::size_t row, int head_dim) {
  return {t.data() + row * std::size_t(head_dim), std::size_t(head_dim)};
}
inline std::span<double> row_of(std::vector<double>& t, std::size_t row, int head_dim) {
  return {t.data() + row * std::size_t(head_dim), std::size_t(head_dim)};
}

}  // namespace fl::numerics
