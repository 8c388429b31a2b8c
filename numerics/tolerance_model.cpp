#include "numerics/tolerance_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/compensated_vector.hpp"

namespace fl::numerics {

namespace {

// exp2 on the GPU (ex2.approx) is accurate to about 2^-22 relative: an absolute error of ~4 u32 in the
// exponent; the scores' scaling by log2(e) and the subtraction of the max add u32 (|s| + |m|) each.
constexpr double kExpArgumentFloor = 16.0;  // (4 u32)^2 / u32^2
// log w is capped so that w^2 (times squared values) stays finite: a bound of e^150 means "anything finite".
constexpr double kMaxLogWeight = 150.0;
constexpr double kLinearLimit = 30.0;  // above this, log(expm1(a)) = a to double precision (e^-30 ~ 1e-13)
// Products a tensor core sums into the fp32 accumulator per rounding for 16-bit operands (mma.sync m16n8k16,
// wgmma k16): d / 16 roundings per score, each normalised toward zero (see coherent_dot_lse below).
constexpr int kTensorCoreStepK = 16;

}  // namespace

// Bounds of O (d), LSE and, with dO, dQ (d) of query row `row`; returns the row's statistics.
// Null outputs are skipped (statistics only).
RowStats ToleranceModel::query_row(std::size_t row, double* tau_o, double* tau_lse, double* tau_dq) const {
  RowStats st;
  int const n = visible_keys(s_, query_row_index(s_, row).pos);
  if (tau_o) std::fill(tau_o, tau_o + d_, floor_out_);
  if (tau_dq) std::fill(tau_dq, tau_dq + d_, floor_out_);
  if (tau_lse) *tau_lse = 0.0;
  if (n == 0) return st;
  std::size_t const k0 = first_key_row_for_query(s_, row);
  std::size_t const nv = std::size_t(n);
  std::vector<double> score(nv), var_s(nv), p(nv);
  st.m = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < nv; ++j) {
    score[j] = scale_ * dot(qrow(row), krow(k0 + j), d_);
    st.m = std::max(st.m, score[j]);
  }
  double l = 0.0;
  for (std::size_t j = 0; j < nv; ++j) {
    var_s[j] = score_var(row, k0 + j, score[j], st.m);
    l += std::exp(score[j] - st.m);
  }
  st.lse = st.m + std::log(l);
  double sum_p2_var_s = 0.0;
  double sum_p_var_s = 0.0;
  for (std::size_t j = 0; j < nv; ++j) {
    p[j] = std::exp(score[j] - st.lse);
    sum_p2_var_s += sq(p[j]) * var_s[j];
    sum_p_var_s += p[j] * var_s[j];
  }
  // l is a sum of n positive fp32 terms: relative variance about u32^2 n / 3.
  st.var_lse = sum_p2_var_s + sq(kU32) * double(n) / 3.0;
  // The rounding of Q_i is shared by every score of the row, so in LSE it adds coherently:
  // delta LSE contains s dq . (sum_j P_ij K_j), not a sum of independent terms.
  if (q_noise_.relative_var > 0.0 || q_noise_.floor_var > 0.0) {
    std::vector<double> pk(d_, 0.0);
    for (std::size_t j = 0; j < nv; ++j)
      for (std::size_t e = 0; e < d_; ++e) pk[e] += p[j] * krow(k0 + j)[e];
    double const qn2 = row_norm2(q2_, row);
    for (std::size_t e = 0; e < d_; ++e)
      st.var_lse += sq(scale_ * pk[e]) * element_var(q_noise_, qrow(row)[e], qn2);
  }
  if (tau_lse) {
    // log sum_j P_j e^{delta_j} is convex in the score errors: beyond first order it grows like
    // expm1(a) / a with a the P-weighted score uncertainty (in sigmas).
    double const a = kappa_ * std::sqrt(sum_p_var_s);
    double const nonlinearity = a > 1e-8 ? std::expm1(std::min(a, kLinearLimit)) / a : 1.0;
    *tau_lse = kappa_ * std::sqrt(st.var_lse) * nonlinearity +
               2.0 * kU32 * (std::fabs(st.lse) + std::fabs(st.m) + 2.0) + coherent_dot_lse(row, k0, p);
  }
  std::vector<double> w(nv);
  for (std::size_t j = 0; j < nv; ++j) w[j] = weight_uncertainty(score[j] - st.lse, var_s[j], st.var_lse);

  // O and its variance.
  std::vector<double> o(d_, 0.0), var_o(d_, 0.0), acc(d_, 0.0), vmax(d_, 0.0), var_ev_max(d_, 0.0);
  for (std::size_t j = 0; j < nv; ++j)
    for (std::size_t e = 0; e < d_; ++e) o[e] += p[j] * vrow(k0 + j)[e];
  bool const v_noisy = v_noise_.relative_var > 0.0 || v_noise_.floor_var > 0.0;
  for (std::size_t j = 0; j < nv; ++j) {
    double const* v = vrow(k0 + j);
    // Per-key factors hoisted so that the element loop is plain arithmetic (it vectorises).
    double const weight_var = sq(w[j]);
    double const rounding_var = sq(p[j]) * var_p_ + floor_p_var_;
    double const p2 = sq(p[j]);
    for (std::size_t e = 0; e < d_; ++e) {
      double const dv = v[e] - o[e];
      var_o[e] += weight_var * dv * dv + rounding_var * v[e] * v[e];
      acc[e] += p2 * v[e] * v[e];
      vmax[e] = std::max(vmax[e], std::fabs(dv));
    }
    if (!v_noisy) continue;
    double const vn2 = row_norm2(v2_, k0 + j);
    for (std::size_t e = 0; e < d_; ++e) {
      double const ev = element_var(v_noise_, v[e], vn2);
      var_o[e] += (p2 + weight_var) * ev;
      var_ev_max[e] = std::max(var_ev_max[e], ev);
    }
  }
  for (std::size_t e = 0; e < d_; ++e) {
    var_o[e] += accumulation_var(n, acc[e], o[e]);
    if (tau_o) {
      double const hull = vmax[e] + u_p_ * (vmax[e] + std::fabs(o[e])) + kappa_ * std::sqrt(var_ev_max[e]);
      double const pre = std::min(kappa_ * std::sqrt(var_o[e]), hull);
      tau_o[e] = pre + u_out_ * (std::fabs(o[e]) + pre) + floor_out_;
    }
  }
  if (in_.d_o.empty()) return st;

  // D = rowsum(dO * O) with the kernel's own (rounded) O.
  double const* d_o = dorow(row);
  double const do_n2 = row_norm2(do2_, row);
  double delta_acc = 0.0;
  for (std::size_t e = 0; e < d_; ++e) {
    st.delta += d_o[e] * o[e];
    double const var_ohat = var_o[e] + sq(u_out_ * o[e]) / 3.0;
    st.var_delta += sq(d_o[e]) * var_ohat + sq(o[e]) * element_var(do_noise_, d_o[e], do_n2);
    delta_acc += sq(d_o[e] * o[e]);
  }
  st.var_delta += accumulation_var(int(d_), delta_acc, st.delta);
  if (!tau_dq) return st;

  std::vector<double> dq(d_, 0.0), var_dq(d_, 0.0), pk(d_, 0.0), acc_dq(d_, 0.0);
  for (std::size_t j = 0; j < nv; ++j) {
    double const* k = krow(k0 + j);
    double const dp = dot(d_o, vrow(k0 + j), d_);
    double const ds = p[j] * (dp - st.delta);
    double const var_dp = pair_var(do_noise_, row, do2_, v_noise_, k0 + j, v2_) +
                          sq(kU32) * double(d_) * (do_norm2_[row] * v_norm2_[k0 + j] + sq(dp)) / 3.0;
    double const var_ds = sq(w[j] * (dp - st.delta)) + sq(p[j]) * var_dp + (var_p_ + var_ds_) * sq(ds) +
                          floor_p_var_ * sq(dp - st.delta) + floor_ds_var_;
    double const kn2 = row_norm2(k2_, k0 + j);
    for (std::size_t e = 0; e < d_; ++e) {
      dq[e] += ds * k[e];
      pk[e] += p[j] * k[e];
      // (dS + its error) times K's own error: the second-order term matters where dS is 0 exactly.
      var_dq[e] += sq(k[e]) * var_ds + (sq(ds) + var_ds) * element_var(k_noise_, k[e], kn2);
      acc_dq[e] += sq(ds * k[e]);
    }
  }
  for (std::size_t e = 0; e < d_; ++e) {
    dq[e] *= scale_;
    double const var = sq(scale_) * (var_dq[e] + st.var_delta * sq(pk[e])) + st.var_lse * sq(dq[e]) +
                       accumulation_var(n, sq(scale_) * acc_dq[e], dq[e]);
    tau_dq[e] = finish(var, dq[e]);
  }
  return st;
}

// Bounds of dK and dV (d each) of key row `kr`, given the statistics of every query row.
void ToleranceModel::key_row(std::size_t kr, std::vector<RowStats> const& stats, double* tau_dk,
                             double* tau_dv) const {
  RowIndex const x = key_row_index(s_, kr);
  std::vector<double> dk(d_, 0.0), dv(d_, 0.0), var_dk(d_, 0.0), var_dv(d_, 0.0), acc_dk(d_, 0.0),
      acc_dv(d_, 0.0);
  std::int64_t const first_query =
      s_.causal ? std::max<std::int64_t>(0, std::int64_t(x.pos) - s_.causal_offset()) : std::int64_t(0);
  int const group = s_.group_size();
  int count = 0;
  for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
    std::size_t const row0 = (std::size_t(x.batch) * s_.heads_q + std::size_t(hq)) * s_.seqlen_q;
    for (std::int64_t i = first_query; i < s_.seqlen_q; ++i) {
      std::size_t const row = row0 + std::size_t(i);
      RowStats const& st = stats[row];
      ++count;
      double const score = scale_ * dot(qrow(row), krow(kr), d_);
      double const p = std::exp(score - st.lse);
      double const var_s = score_var(row, kr, score, st.m);
      double const w = weight_uncertainty(score - st.lse, var_s, st.var_lse);
      double const* d_o = dorow(row);
      double const* q = qrow(row);
      double const dp = dot(d_o, vrow(kr), d_);
      double const ds = p * (dp - st.delta);
      double const var_dp = pair_var(do_noise_, row, do2_, v_noise_, kr, v2_) +
                            sq(kU32) * double(d_) * (do_norm2_[row] * v_norm2_[kr] + sq(dp)) / 3.0;
      double const var_ds = sq(w * (dp - st.delta)) + sq(p) * (var_dp + st.var_delta) +
                            (var_p_ + var_ds_) * sq(ds) + floor_p_var_ * sq(dp - st.delta) + floor_ds_var_;
      double const qn2 = row_norm2(q2_, row);
      double const don2 = row_norm2(do2_, row);
      double const var_weight = sq(w) + sq(p) * var_p_ + floor_p_var_;
      for (std::size_t e = 0; e < d_; ++e) {
        dv[e] += p * d_o[e];
        dk[e] += ds * q[e];
        var_dv[e] += var_weight * sq(d_o[e]) + (sq(p) + var_weight) * element_var(do_noise_, d_o[e], don2);
        var_dk[e] += sq(q[e]) * var_ds + (sq(ds) + var_ds) * element_var(q_noise_, q[e], qn2);
        acc_dv[e] += sq(p * d_o[e]);
        acc_dk[e] += sq(ds * q[e]);
      }
    }
  }
  for (std::size_t e = 0; e < d_; ++e) {
    dk[e] *= scale_;
    tau_dk[e] =
        finish(sq(scale_) * var_dk[e] + accumulation_var(count, sq(scale_) * acc_dk[e], dk[e]), dk[e]);
    tau_dv[e] = finish(var_dv[e] + accumulation_var(count, acc_dv[e], dv[e]), dv[e]);
  }
}

// The part of the fp32 dot products' error that every score of a row shares in sign. Tensor cores add each
// step's products to the accumulator and normalise the sum toward zero (RZ), so every score moves toward 0
// by up to one ulp (2 u32 |partial sum| <= 2 u32 |Q_i| |K_j|) per step: errors of one sign, which a common
// shift of the scores carries into LSE whole (O does not see it), where score_var's independent term is
// averaged over the row's keys (sum P^2). Scaled scores near -250 at d = 256 (all_negative): the H200's
// flash_decode LSE over n_k = 4097 keys reached 1.06-1.16x the bound without this term, exactly what an
// emulation of 16-product steps (2 alignment bits past fp32's 24, RZ) gives (tests/numerics/
// tolerance_model_test.cpp); round-to-nearest dot products give 0.09x.
double ToleranceModel::coherent_dot_lse(std::size_t row, std::size_t k0, std::vector<double> const& p) const {
  double weighted_norms = 0.0;
  for (std::size_t j = 0; j < p.size(); ++j)
    weighted_norms += p[j] * std::sqrt(q_norm2_[row] * k_norm2_[k0 + j]);
  double const steps = std::ceil(double(d_) / kTensorCoreStepK);
  return 2.0 * kU32 * steps * scale_ * weighted_norms;
}

// Variance of x^.y^ - x.y from the operands' rounding (x row a of X, y row b of Y).
double ToleranceModel::pair_var(OperandNoise const& nx, std::size_t a, std::vector<double> const& x2,
                                OperandNoise const& ny, std::size_t b, std::vector<double> const& y2) const {
  if (nx.relative_var == 0.0 && ny.relative_var == 0.0 && nx.floor_var == 0.0 && ny.floor_var == 0.0)
    return 0.0;
  double const xy2 = dot(x2.data() + a * d_, y2.data() + b * d_, d_);
  double const xn2 = row_norm2(x2, a);
  double const yn2 = row_norm2(y2, b);
  double const iso = (nx.isotropic || ny.isotropic) ? xn2 * yn2 / double(d_) : 0.0;
  return (nx.relative_var + ny.relative_var) * std::max(xy2, iso) + nx.floor_var * yn2 + ny.floor_var * xn2;
}

// Variance of the kernel's scaled score s_ij (before exp), relative to the reference's.
// The fp32 dot product's term uses |q|^2 |k|^2 >= sum_d q_d^2 k_d^2 (an O(1) upper bound instead of a
// third O(d) pass per score: the term is ~u32/u_P smaller than the rest, so its slack costs nothing).
// A score stored in 16 bits (PrecisionRecipe::scores) is one more rounding of s_ij itself: relative
// u_S^2 / 3 (bf16 u_S = 2^-8: a score of -120 moves by up to 0.25, so e^s by up to 28%). The row maximum
// is one of those rounded scores, and LSE = m + log sum e^(s - m) = log sum e^s does not depend on which
// value m takes, so only each score's own rounding enters: through var_lse = sum P^2 var_s into LSE (for
// one dominant key that is |s| u_S / sqrt(3) per sigma, the worst case |s| u_S inside 2 sigma; over many
// keys independent roundings average), through the weights into O and the gradients.
double ToleranceModel::score_var(std::size_t row, std::size_t kr, double score, double m) const {
  double const qk2 = q_norm2_[row] * k_norm2_[kr];
  double const fp32_dot = sq(kU32) * sq(scale_) * double(d_) * (qk2 + sq(score / scale_)) / 3.0;
  double const fp32_exp_argument = sq(kU32) * (2.0 * (sq(score) + sq(m)) + kExpArgumentFloor);
  double const stored = var_score_ * sq(score) + floor_score_var_;
  return sq(scale_) * pair_var(q_noise_, row, q2_, k_noise_, kr, k2_) + fp32_dot + fp32_exp_argument + stored;
}

// Root mean square of the error of P_ij caused by the score errors. The kernel's weight is
// P_ij e^delta with delta = delta_s_ij - delta_LSE_i, modelled as Gaussian with standard deviation
// sigma <= sigma_s + sigma_LSE (Cauchy-Schwarz: whatever their correlation). For delta ~ N(0, sigma^2),
// E[e^(t delta)] = e^(t^2 sigma^2 / 2), so the exact second moment is
//   E[(e^delta - 1)^2] = e^(2 sigma^2) - 2 e^(sigma^2 / 2) + 1 = expm1(2 sigma^2) - 2 expm1(sigma^2 / 2),
// which is sigma^2 (1 + 7 sigma^2 / 4 + ...) while sigma is small (the linear P sigma) and e^(2 sigma^2)
// once it is O(1) (a key below the maximum may overtake it). kappa then multiplies the sum over keys.
// Computed in the log domain from the log-weight s - lse: a key whose weight underflows to 0 can still
// take the maximum when its score is uncertain by more than its distance to the maximum.
double ToleranceModel::weight_uncertainty(double log_p, double var_s, double var_lse) const {
  double const sigma = std::sqrt(var_s) + std::sqrt(var_lse);
  if (!(sigma > 0.0) || std::isinf(log_p)) return 0.0;
  double const v = sigma * sigma;
  // Above kLinearLimit, expm1(2v) is e^(2v) to double precision and the second term is negligible.
  double const log_second_moment =
      2.0 * v > kLinearLimit ? 2.0 * v : std::log(std::expm1(2.0 * v) - 2.0 * std::expm1(0.5 * v));
  return std::exp(std::min(log_p + 0.5 * log_second_moment, kMaxLogWeight));
}

}  // namespace fl::numerics
