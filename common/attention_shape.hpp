#pragma once
// The shape of one attention problem and the tensor layout every part of FlashLab agrees on.
//
// Layout: Q (B, H_q, N_q, D), K and V (B, H_kv, N_k, D), O (B, H_q, N_q, D), LSE (B, H_q, N_q);
// row-major and contiguous in host memory. Grouped-query attention: query head h reads key/value head
// h / (H_q / H_kv). Causal masks are bottom-right aligned when N_q != N_k (FlashAttention 2.1+):
// query row i may see key j when j <= i + (N_k - N_q); top-left aligned (PyTorch's is_causal=True) only
// when `causal_top_left` says so: j <= i.
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace fl::common {

struct AttentionShape {
  int batch = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int seqlen_q = 1;
  int seqlen_k = 1;
  int head_dim = 64;
  bool causal = false;
  double softmax_scale = 0.0;    // 0 means the default 1/sqrt(head_dim)
  bool causal_top_left = false;  // fa-check --causal-align top-left; every mask reads causal_offset()

  double scale() const { return softmax_scale != 0.0 ? softmax_scale : 1.0 / std::sqrt(double(head_dim)); }
  int group_size() const { return heads_q / heads_kv; }
  int kv_head_of(int q_head) const { return q_head / group_size(); }
  // The offset added to the query row index: N_k - N_q bottom-right aligned, 0 top-left aligned.
  std::int64_t causal_offset() const { return causal_top_left ? 0 : std::int64_t(seqlen_k) - seqlen_q; }
  bool key_visible(int query_row, int key_col) const {
    return !causal || std::int64_t(key_col) <= std::int64_t(query_row) + causal_offset();
  }

  std::size_t q_elements() const { return std::size_t(batch) * heads_q * seqlen_q * head_dim; }
  std::size_t kv_elements() const { return std::size_t(batch) * heads_kv * seqlen_k * head_dim; }
  std::size_t lse_elements() const { return std::size_t(batch) * heads_q * seqlen_q; }
};

}  // namespace fl::common
