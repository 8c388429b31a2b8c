#include "numerics/input_families.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "numerics/compensated_vector.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"

namespace fl::numerics {

namespace {

constexpr std::array<std::pair<InputFamily, std::string_view>, 10> kFamilies{{
    {InputFamily::normal, "normal"},
    {InputFamily::fa3_outliers, "fa3_outliers"},
    {InputFamily::max_in_first_block, "max_in_first_block"},
    {InputFamily::max_in_last_block, "max_in_last_block"},
    {InputFamily::all_negative, "all_negative"},
    {InputFamily::huge_dynamic_range, "huge_dynamic_range"},
    {InputFamily::constant_rows, "constant_rows"},
    {InputFamily::fully_masked_rows, "fully_masked_rows"},
    {InputFamily::ragged_tail, "ragged_tail"},
    {InputFamily::near_dtype_max, "near_dtype_max"},
}};

constexpr double kOutlierProbability = 0.001;  // FlashAttention-3, section 4.3
constexpr double kOutlierStddev = 10.0;        // N(0, 100): variance 100
constexpr double kAllNegativeTarget = 120.0;   // scaled scores near -120, so < -100 with 20 sigma to spare
constexpr double kRaggedScoreOffset = 4.0;     // ragged_tail rows score around -4
constexpr int kRaggedCoarseAlign = 256;        // tail of 1 for every power-of-two block up to 256
constexpr int kRaggedFineAlign = 16;
constexpr int kKeyExponentMin = -8, kKeyExponentMax = 4;
constexpr int kValueExponentMin = -10, kValueExponentMax = 10;
constexpr double kNearMaxQkCap = 32768.0;               // 2^15: scores stay finite in fp32
constexpr double kNearMaxVCap = 1.2676506002282294e30;  // 2^100: l * max|V| stays finite in fp32

void fill_normal(std::vector<double>& t, std::size_t n, SeededRandom& rng) {
  t.resize(n);
  for (double& x : t) x = rng.normal();
}

// Evenly spread rows of each head plus its first and last row, at most kMaxAdversarialRows in all.
std::vector<std::size_t> spread_rows(std::size_t heads, std::size_t rows_per_head) {
  std::vector<std::size_t> out;
  std::size_t const per_head =
      std::max<std::size_t>(2, kMaxAdversarialRows / std::max<std::size_t>(1, heads));
  std::size_t const count = std::min(per_head, rows_per_head);
  for (std::size_t h = 0; h < heads && out.size() < kMaxAdversarialRows + 2 * heads; ++h) {
    std::size_t const base = h * rows_per_head;
    out.push_back(base);
    out.push_back(base + rows_per_head - 1);
    for (std::size_t t = 0; t < count; ++t)
      out.push_back(base + (count <= 1 ? 0 : t * (rows_per_head - 1) / (count - 1)));
  }
  return out;
}

std::size_t q_heads(common::AttentionShape const& s) {
  return std::size_t(s.batch) * s.heads_q;
}
std::size_t kv_heads(common::AttentionShape const& s) {
  return std::size_t(s.batch) * s.heads_kv;
}

// Q_row += t K_key with the smallest t >= 0 that puts the key's scaled score kPlantedMaxMargin above
// every other visible key of the row (each score is linear in t).
void plant_row_maximum(AttentionInputs& in, std::size_t row, int key) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  int const n_visible = visible_keys(s, query_row_index(s, row).pos);
  std::size_t const k0 = first_key_row_for_query(s, row);
  double* q = in.q.data() + row * d;
  double const* target = in.k.data() + (k0 + std::size_t(key)) * d;
  double const scale = s.scale();
  double const target_score = scale * dot(q, target, d);
  double const target_norm2 = dot(target, target, d);
  double t = 0.0;
  for (int j = 0; j < n_visible; ++j) {
    if (j == key) continue;
    double const* other = in.k.data() + (k0 + std::size_t(j)) * d;
    double const gap = target_score - scale * dot(q, other, d);
    double const slope = scale * (target_norm2 - dot(target, other, d));
    if (gap >= kPlantedMaxMargin) continue;
    if (slope > 0.0) t = std::max(t, (kPlantedMaxMargin - gap) / slope);
  }
  for (std::size_t e = 0; e < d; ++e) q[e] += t * target[e];
}

// Rows to plant: every row when there are few, else a spread subset.
std::vector<std::size_t> planted_rows(common::AttentionShape const& s) {
  std::size_t const total = query_rows(s);
  if (total <= kMaxAdversarialRows) {
    std::vector<std::size_t> all(total);
    for (std::size_t r = 0; r < total; ++r) all[r] = r;
    return all;
  }
  std::vector<std::size_t> rows = spread_rows(q_heads(s), std::size_t(s.seqlen_q));
  sort_unique(rows);
  return rows;
}

void plant_maxima(FamilyInputs& out, SeededRandom& rng, bool first_block) {
  AttentionInputs& in = out.inputs;
  for (std::size_t row : planted_rows(in.shape)) {
    int const n_visible = visible_keys(in.shape, query_row_index(in.shape, row).pos);
    if (n_visible == 0) continue;
    int const key = first_block ? rng.integer(0, std::min(kFirstBlockKeys, n_visible) - 1) : n_visible - 1;
    plant_row_maximum(in, row, key);
    out.adversarial_rows.push_back(row);
    out.adversarial_key_rows.push_back(first_key_row_for_query(in.shape, row) + std::size_t(key));
  }
}

// A power of two a with a^2 * scale >= target: q_0 = a, k_0 = -a shifts every score by -a^2 * scale, exactly.
double shift_magnitude(double scale, double target) {
  return std::exp2(std::ceil(std::log2(std::sqrt(target / scale))));
}

void shift_scores_down(AttentionInputs& in, double target) {
  std::size_t const d = std::size_t(in.shape.head_dim);
  double const a = shift_magnitude(in.shape.scale(), target);
  for (std::size_t r = 0; r < in.q.size() / d; ++r) in.q[r * d] = a;
  for (std::size_t r = 0; r < in.k.size() / d; ++r) in.k[r * d] = -a;
}

int ragged_length(int n) {
  int const align = n > kRaggedCoarseAlign ? kRaggedCoarseAlign : kRaggedFineAlign;
  return std::max(align, (n / align) * align) + 1;
}

void round_all(AttentionInputs& in, common::Precision storage) {
  for (auto* t : {&in.q, &in.k, &in.v, &in.d_o})
    for (double& x : *t) x = double(round_to(storage, float(x)));
}

}  // namespace

std::span<InputFamily const> all_input_families() {
  static constexpr std::array<InputFamily, kFamilies.size()> kAll = [] {
    std::array<InputFamily, kFamilies.size()> a{};
    for (std::size_t i = 0; i < kFamilies.size(); ++i) a[i] = kFamilies[i].first;
    return a;
  }();
  return kAll;
}

std::string_view name(InputFamily f) {
  for (auto const& [value, text] : kFamilies)
    if (value == f) return text;
  return "unknown";
}

std::optional<InputFamily> parse_input_family(std::string_view text) {
  for (auto const& [value, family_name] : kFamilies)
    if (family_name == text) return value;
  return std::nullopt;
}

common::AttentionShape family_shape(InputFamily family, common::AttentionShape s) {
  if (family == InputFamily::fully_masked_rows) {
    s.causal = true;
    s.seqlen_q = std::max(s.seqlen_q, 2);
    s.seqlen_k = std::max(1, s.seqlen_q - std::max(1, s.seqlen_q / 4));
  }
  if (family == InputFamily::ragged_tail) {
    s.seqlen_q = ragged_length(s.seqlen_q);
    s.seqlen_k = ragged_length(s.seqlen_k);
  }
  return s;
}

FamilyInputs generate_family(InputFamily family, FamilyRequest const& request) {
  FamilyInputs out;
  out.family = family;
  AttentionInputs& in = out.inputs;
  in.shape = request.shape;
  common::AttentionShape& s = in.shape;
  if (s.head_dim < kFamilyHeadDim.min || s.seqlen_q < 1 || s.seqlen_k < 1 || s.heads_kv < 1 ||
      s.heads_q % s.heads_kv != 0)
    throw std::invalid_argument(
        "generate_family: need head_dim >= 2, n >= 1, heads_q a multiple of heads_kv");
  s = family_shape(family, s);
  // One stream per family and seed; the family's id is mixed in so families never share tensors.
  SeededRandom rng(request.seed * 0x9E3779B97F4A7C15ull + std::uint64_t(family) + 1);
  fill_normal(in.q, s.q_elements(), rng);
  fill_normal(in.k, s.kv_elements(), rng);
  fill_normal(in.v, s.kv_elements(), rng);
  if (request.with_backward) fill_normal(in.d_o, s.q_elements(), rng);
  std::size_t const d = std::size_t(s.head_dim);

  switch (family) {
    case InputFamily::normal:
      break;
    case InputFamily::fa3_outliers: {
      auto add_outliers = [&](std::vector<double>& t, std::vector<std::size_t>* rows) {
        for (std::size_t i = 0; i < t.size(); ++i)
          if (rng.bernoulli(kOutlierProbability)) {
            t[i] += kOutlierStddev * rng.normal();
            if (rows) rows->push_back(i / d);
          }
      };
      add_outliers(in.q, &out.adversarial_rows);
      add_outliers(in.k, &out.adversarial_key_rows);
      add_outliers(in.v, &out.adversarial_key_rows);
      break;
    }
    case InputFamily::max_in_first_block:
    case InputFamily::max_in_last_block:
      plant_maxima(out, rng, family == InputFamily::max_in_first_block);
      break;
    case InputFamily::all_negative:
      shift_scores_down(in, kAllNegativeTarget);
      break;
    case InputFamily::huge_dynamic_range:
      for (std::size_t r = 0; r < in.k.size() / d; ++r) {
        int const e = rng.integer(kKeyExponentMin, kKeyExponentMax);
        int const f = rng.integer(kValueExponentMin, kValueExponentMax);
        for (std::size_t x = 0; x < d; ++x) {
          in.k[r * d + x] = std::ldexp(in.k[r * d + x], e);
          in.v[r * d + x] = std::ldexp(in.v[r * d + x], f);
        }
        if (e == kKeyExponentMax) out.adversarial_key_rows.push_back(r);
      }
      break;
    case InputFamily::constant_rows:
      for (std::size_t r = 0; r < in.q.size() / d; r += 2) {
        std::fill(in.q.begin() + std::ptrdiff_t(r * d), in.q.begin() + std::ptrdiff_t((r + 1) * d), 0.0);
        if (out.adversarial_rows.size() < kMaxAdversarialRows) out.adversarial_rows.push_back(r);
      }
      break;
    case InputFamily::fully_masked_rows:
      for (std::size_t h = 0; h < q_heads(s); ++h)
        for (int i = 0; i < s.seqlen_q; ++i)
          if (visible_keys(s, i) <= 1)
            out.adversarial_rows.push_back(h * std::size_t(s.seqlen_q) + std::size_t(i));
      break;
    case InputFamily::ragged_tail:
      shift_scores_down(in, kRaggedScoreOffset);
      for (std::size_t h = 0; h < q_heads(s); ++h)
        for (int i = std::max(0, s.seqlen_q - kRaggedFineAlign - 1); i < s.seqlen_q; ++i)
          out.adversarial_rows.push_back(h * std::size_t(s.seqlen_q) + std::size_t(i));
      for (std::size_t h = 0; h < kv_heads(s); ++h)
        for (int j = std::max(0, s.seqlen_k - kRaggedFineAlign - 1); j < s.seqlen_k; ++j)
          out.adversarial_key_rows.push_back(h * std::size_t(s.seqlen_k) + std::size_t(j));
      break;
    case InputFamily::near_dtype_max: {
      double const top = max_finite(request.precision);
      double const a_qk = std::min(top, kNearMaxQkCap);
      double const a_v = std::min(top, kNearMaxVCap);
      auto near_max = [&](std::vector<double>& t, double a) {
        for (double& x : t) x = rng.sign() * a * (0.5 + 0.5 * rng.uniform());
      };
      near_max(in.q, a_qk);
      near_max(in.k, a_qk);
      near_max(in.v, a_v);
      for (double& x : in.d_o) x /= a_v * std::sqrt(double(d));
      break;
    }
  }
  if (out.adversarial_rows.empty() || family == InputFamily::fa3_outliers) {
    std::vector<std::size_t> spread = spread_rows(q_heads(s), std::size_t(s.seqlen_q));
    out.adversarial_rows.insert(out.adversarial_rows.end(), spread.begin(), spread.end());
  }
  if (out.adversarial_key_rows.empty())
    out.adversarial_key_rows = spread_rows(kv_heads(s), std::size_t(s.seqlen_k));
  if (!request.with_backward) out.adversarial_key_rows.clear();
  sort_unique(out.adversarial_rows);
  sort_unique(out.adversarial_key_rows);
  // Outliers can be thousands of rows at n = 16384; a sample needs representatives, not all of them.
  // Masked rows stay complete: they cost nothing to check.
  if (family != InputFamily::fully_masked_rows && out.adversarial_rows.size() > 2 * kMaxAdversarialRows)
    out.adversarial_rows.resize(2 * kMaxAdversarialRows);
  if (out.adversarial_key_rows.size() > 2 * kMaxAdversarialRows)
    out.adversarial_key_rows.resize(2 * kMaxAdversarialRows);
  round_all(in, common::storage_precision(request.precision));
  return out;
}

}  // namespace fl::numerics
