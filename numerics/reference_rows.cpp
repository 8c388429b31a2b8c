#include "numerics/reference_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/parallel_for.hpp"
#include "numerics/compensated_sum.hpp"
#include "numerics/compensated_vector.hpp"

namespace fl::numerics {

namespace {

// The scores (and dP) of one row against the kTileKeys keys of a tile are computed side by side, one key per
// vector lane. Each lane does exactly dot()'s operations (eight partial sums over the head dimension,
// combined in dot()'s order, then the tail), so each score is bit for bit dot()'s; what changes is that
// eight independent sums fill a vector, instead of eight partial sums of one dot product that then had to
// be added across lanes.
using Lanes = double __attribute__((vector_size(kTileKeys * sizeof(double))));

// The heads (flat key/value head index) that `rows` read, ascending.
std::vector<std::size_t> heads_read(common::AttentionShape const& s, std::vector<std::size_t> const& rows) {
  std::vector<std::size_t> heads;
  for (std::size_t r : rows) {
    std::size_t const head = first_key_row_for_query(s, r) / std::size_t(s.seqlen_k);
    if (heads.empty() || heads.back() != head) heads.push_back(head);
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  return heads;
}

// The tiles of one head: tile[e * kTileKeys + lane] = K (V) row `tile start + lane`'s element e.
void transpose_head(double const* rows, std::size_t n, std::size_t d, double* tiles) {
  for (std::size_t first = 0; first < n; first += kTileKeys) {
    double* tile = tiles + first * d;
    for (std::size_t e = 0; e < d; ++e)
      for (std::size_t lane = 0; lane < kTileKeys; ++lane)
        tile[e * kTileKeys + lane] = first + lane < n ? rows[(first + lane) * d + e] : 0.0;
  }
}

// out[lane] = factor * dot(x, key `lane` of the tile), bit for bit (compensated_vector.hpp's dot; x * 1.0 is
// x exactly).
[[gnu::always_inline]] inline void tile_dots(double const* x, double const* tile, std::size_t d,
                                             double factor, double* out) {
  // Eight named sums, not an array: GCC 12 keeps an array of vectors in memory (a store and a reload per
  // step), named ones in registers.
  Lanes p0 = {}, p1 = {}, p2 = {}, p3 = {}, p4 = {}, p5 = {}, p6 = {}, p7 = {};
  Lanes key;
  auto const step = [&](Lanes& partial, std::size_t at) {
    std::memcpy(&key, tile + at * kTileKeys, sizeof key);
    partial += x[at] * key;
  };
  std::size_t e = 0;
  for (; e + 8 <= d; e += 8) {
    step(p0, e);
    step(p1, e + 1);
    step(p2, e + 2);
    step(p3, e + 3);
    step(p4, e + 4);
    step(p5, e + 5);
    step(p6, e + 6);
    step(p7, e + 7);
  }
  Lanes tail = {};
  for (; e < d; ++e) step(tail, e);
  Lanes const sum = factor * ((((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))) + tail);
  std::memcpy(out, &sum, sizeof sum);
}

// O's sums for one element chunk of one row, in registers for the whole pass over the keys: V is a Lanes
// (kTileKeys elements) or a double (the tail of a head dimension that is not a multiple of kTileKeys). Each
// element does exactly what CompensatedVector::add_scaled / write_to do (or a plain sum), so the bits are
// theirs; what changes is that the sums are not loaded and stored once per key.
template <class V>
[[gnu::always_inline]] inline void load(V& v, double const* x) {
  std::memcpy(&v, x, sizeof v);
}

// Vectors are passed by reference, never by value: GCC warns (-Wpsabi) that a 64-byte vector's calling
// convention depends on the clone's target.
template <class V>
struct PlainSum {
  V sum{};
  [[gnu::always_inline]] void add(V const& y) { sum += y; }
  [[gnu::always_inline]] void store(double* out) const { std::memcpy(out, &sum, sizeof sum); }
};

template <class V>
struct TwoSumSum {
  V sum{}, compensation{};
  [[gnu::always_inline]] void add(V const& y) { two_sum_add(sum, compensation, y); }
  [[gnu::always_inline]] void store(double* out) const {
    V const value = sum + compensation;
    std::memcpy(out, &value, sizeof value);
  }
};

// sum += sum_k P_k V_k over keys [from, to), in key order: one row's keys past the pair's shared ones.
template <template <class> class Sum, class V>
[[gnu::always_inline]] inline void add_products(Sum<V>& sum, double const* p, int from, int to,
                                                double const* values, std::size_t d, std::size_t e) {
  V value;
  for (int k = from; k < to; ++k) {
    load(value, values + std::size_t(k) * d + e);
    sum.add(p[k] * value);
  }
}

// O of two rows (a, b; b may be a) over elements [e, e + sizeof(V) / 8): sum_j P_j V_j over each row's
// visible keys, in key order. Two rows share each V load; two, not more, so that a TwoSum's two vectors per
// row and its temporaries stay in AVX2's 16 registers.
template <template <class> class Sum, class V>
[[gnu::always_inline]] inline void sum_pair(double const* p_a, double const* p_b, int visible_a,
                                            int visible_b, double const* values, std::size_t d, std::size_t e,
                                            double* o_a, double* o_b) {
  Sum<V> a, b;
  V value;
  int const both = std::min(visible_a, visible_b);
  for (int j = 0; j < both; ++j) {
    load(value, values + std::size_t(j) * d + e);
    a.add(p_a[j] * value);
    b.add(p_b[j] * value);
  }
  add_products(a, p_a, both, visible_a, values, d, e);  // at most one of these two adds a key
  add_products(b, p_b, both, visible_b, values, d, e);
  a.store(o_a + e);
  b.store(o_b + e);
}

// O of every row of a block that wants it, two rows at a time, chunk by chunk of the head dimension.
template <template <class> class Sum>
[[gnu::always_inline]] inline void sum_outputs(double const* p, std::size_t stride, int const* visible,
                                               QueryRowTargets const* targets, std::size_t count,
                                               double const* values, std::size_t d) {
  std::size_t wanted[kReferenceBlockRows];
  std::size_t n = 0;
  for (std::size_t t = 0; t < count; ++t)
    if (targets[t].o && visible[t] > 0) wanted[n++] = t;
  for (std::size_t i = 0; i < n; i += 2) {
    std::size_t const a = wanted[i], b = wanted[std::min(i + 1, n - 1)];  // b = a: the last, alone
    std::size_t e = 0;
    for (; e + kTileKeys <= d; e += kTileKeys)
      sum_pair<Sum, Lanes>(p + a * stride, p + b * stride, visible[a], visible[b], values, d, e, targets[a].o,
                           targets[b].o);
    for (; e < d; ++e)
      sum_pair<Sum, double>(p + a * stride, p + b * stride, visible[a], visible[b], values, d, e,
                            targets[a].o, targets[b].o);
  }
}

}  // namespace

KeyTiles::KeyTiles(AttentionInputs const& in, std::vector<std::size_t> const& rows, int threads) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  seqlen_k_ = std::size_t(s.seqlen_k);
  tiles_per_head_ = (seqlen_k_ + kTileKeys - 1) / kTileKeys;
  tile_size_ = kTileKeys * d;
  std::size_t const size = std::size_t(s.batch) * s.heads_kv * tiles_per_head_ * tile_size_;
  k_.reset(new double[size]);  // not zeroed: only the heads read are written (and so touched)
  if (in.has_backward()) v_.reset(new double[size]);
  std::vector<std::size_t> const heads = heads_read(s, rows);
  common::parallel_for(heads.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t h = begin; h < end; ++h) {
      std::size_t const offset = heads[h] * tiles_per_head_ * tile_size_;
      transpose_head(in.k.data() + heads[h] * seqlen_k_ * d, seqlen_k_, d, k_.get() + offset);
      if (v_) transpose_head(in.v.data() + heads[h] * seqlen_k_ * d, seqlen_k_, d, v_.get() + offset);
    }
  });
}

// The portable build targets baseline x86-64 (SSE2: two doubles per instruction) while the GPU machine's host
// has AVX2 or AVX-512: this function, where the reference spends its time, is compiled once per level and the
// loader picks the widest the CPU runs (an ifunc). The element loops are the same operations in the same
// order at every width, without FMA (-ffp-contract=off, numerics/CMakeLists.txt), so every clone gives the
// default clone's bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FL_VECTOR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define FL_VECTOR_CLONES
#endif

FL_VECTOR_CLONES void compute_query_block(AttentionInputs const& in, KeyTiles const& tiles,
                                          std::size_t const* rows, QueryRowTargets const* targets,
                                          std::size_t count, OutputSum o_sum) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  double const scale = s.scale();
  bool const backward = in.has_backward();
  std::size_t const k0 = first_key_row_for_query(s, rows[0]);
  double const* keys = in.k.data() + k0 * d;
  double const* values = in.v.data() + k0 * d;

  int visible[kReferenceBlockRows];
  std::size_t width = 0;  // keys the widest row sees
  bool want_dq = false;
  for (std::size_t t = 0; t < count; ++t) {
    visible[t] = visible_keys(s, query_row_index(s, rows[t]).pos);
    width = std::max(width, std::size_t(visible[t]));
    if (targets[t].o) std::fill(targets[t].o, targets[t].o + d, 0.0);
    if (targets[t].dq) std::fill(targets[t].dq, targets[t].dq + d, 0.0);
    want_dq = want_dq || (backward && targets[t].dq && visible[t] > 0);
  }
  // Rows of p and dp: the tiles' width, so that a tile's lanes past a row's visible keys have somewhere to
  // go.
  std::size_t const stride = (width + kTileKeys - 1) / kTileKeys * kTileKeys;
  std::vector<double> p(count * stride), dp(backward ? count * stride : 0);

  // Scores and dP_ij = dO_i . V_j, tile by tile.
  for (std::size_t j = 0; j < width; j += kTileKeys) {
    double const* k_tile = tiles.k(k0, j);
    double const* v_tile = backward ? tiles.v(k0, j) : nullptr;
    for (std::size_t t = 0; t < count; ++t) {
      if (j >= std::size_t(visible[t])) continue;
      tile_dots(in.q.data() + rows[t] * d, k_tile, d, scale, &p[t * stride + j]);
      if (backward) tile_dots(in.d_o.data() + rows[t] * d, v_tile, d, 1.0, &dp[t * stride + j]);
    }
  }

  // Softmax of each row: P_ij = exp(s_ij - max) / l, l summed with compensation in key order; then D.
  double row_delta[kReferenceBlockRows];
  for (std::size_t t = 0; t < count; ++t) {
    int const n = visible[t];
    double* weights = p.data() + t * stride;
    double lse = -std::numeric_limits<double>::infinity();
    CompensatedSum delta;
    if (n > 0) {
      double const row_max = *std::max_element(weights, weights + n);
      CompensatedSum denominator;
      for (int j = 0; j < n; ++j) {
        weights[j] = std::exp(weights[j] - row_max);
        denominator.add(weights[j]);
      }
      double const l = denominator.value();
      lse = row_max + std::log(l);
      for (int j = 0; j < n; ++j) weights[j] /= l;
      if (backward)
        for (int j = 0; j < n; ++j) delta.add(weights[j] * dp[t * stride + std::size_t(j)]);
    }
    row_delta[t] = delta.value();
    if (targets[t].lse) *targets[t].lse = lse;
    if (targets[t].delta) *targets[t].delta = backward ? row_delta[t] : 0.0;
  }

  // O = sum_j P_ij V_j, each row's sums in registers over all its keys.
  if (o_sum == OutputSum::plain)
    sum_outputs<PlainSum>(p.data(), stride, visible, targets, count, values, d);
  else
    sum_outputs<TwoSumSum>(p.data(), stride, visible, targets, count, values, d);
  if (!want_dq) return;

  // dQ = scale sum_j P_ij (dP_ij - D_i) K_j, each K_j loaded once for the block.
  std::vector<CompensatedVector> dq;
  dq.reserve(count);
  for (std::size_t t = 0; t < count; ++t) dq.emplace_back(targets[t].dq ? d : 0);
  for (std::size_t j = 0; j < width; ++j)
    for (std::size_t t = 0; t < count; ++t) {
      if (!targets[t].dq || j >= std::size_t(visible[t])) continue;
      double const ds = p[t * stride + j] * (dp[t * stride + j] - row_delta[t]);
      dq[t].add_scaled(ds, keys + j * d);
    }
  for (std::size_t t = 0; t < count; ++t)
    if (targets[t].dq && visible[t] > 0) dq[t].write_to({targets[t].dq, d}, scale);
}

std::vector<std::pair<std::size_t, std::size_t>> query_blocks(common::AttentionShape const& s,
                                                              std::vector<std::size_t> const& rows) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t b = 0; b < rows.size();) {
    std::size_t const k0 = first_key_row_for_query(s, rows[b]);
    std::size_t e = b + 1;
    while (e < rows.size() && e - b < kReferenceBlockRows && first_key_row_for_query(s, rows[e]) == k0) ++e;
    blocks.emplace_back(b, e);
    b = e;
  }
  return blocks;
}

}  // namespace fl::numerics
