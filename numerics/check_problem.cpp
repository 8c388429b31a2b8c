#include "numerics/check_problem.hpp"

#include <array>
#include <cmath>
#include <sstream>

#include "common/input_limits.hpp"
#include "common/npy.hpp"

namespace fl::numerics {

namespace {

std::string shape_text(std::vector<std::size_t> const& shape) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ")";
  return out.str();
}

common::NpyArray read(std::filesystem::path const& path, char const* what) {
  if (!std::filesystem::exists(path))
    throw CheckInputError(std::string("--") + what + " " + path.string() + ": no such file");
  try {
    return common::read_npy(path);
  } catch (common::NpyError const& e) {
    throw CheckInputError(std::string("--") + what + " " + e.what());
  }
}

// (B, H, N, D) as four numbers; (N, D) becomes (1, 1, N, D).
std::array<std::size_t, 4> as_bhnd(common::NpyArray const& a, char const* what,
                                   std::filesystem::path const& path) {
  if (a.shape.size() == 4) return {a.shape[0], a.shape[1], a.shape[2], a.shape[3]};
  if (a.shape.size() == 2) return {1, 1, a.shape[0], a.shape[1]};
  throw CheckInputError(std::string("--") + what + " " + path.string() + ": shape " + shape_text(a.shape) +
                        " is not allowed (expected (B, H, N, D) or (N, D))");
}

void expect_shape(common::NpyArray const& a, std::array<std::size_t, 4> const& want, char const* what,
                  std::filesystem::path const& path, char const* like) {
  std::array<std::size_t, 4> const got = as_bhnd(a, what, path);
  if (got != want)
    throw CheckInputError(std::string("--") + what + " " + path.string() + ": shape " + shape_text(a.shape) +
                          " does not match " + like + " (" + std::to_string(want[0]) + ", " +
                          std::to_string(want[1]) + ", " + std::to_string(want[2]) + ", " +
                          std::to_string(want[3]) + ")");
}

// Each dimension within the range the reference and the kernels can index (common/input_limits.hpp).
void expect_dims_in_range(std::array<std::size_t, 4> const& dims, char const* what,
                          std::filesystem::path const& path) {
  common::CountRange const ranges[] = {common::kBatch, common::kHeads, common::kSeqlen, common::kHeadDim};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    common::CountRange const& r = ranges[i];
    if (dims[i] < std::uint64_t(r.min) || dims[i] > std::uint64_t(r.max))
      throw CheckInputError(std::string("--") + what + " " + path.string() + ": " + std::string(r.what) +
                            " " + std::to_string(dims[i]) + " is not allowed (" + common::range_text(r) +
                            ")");
  }
}

void expect_finite(std::vector<double> const& t, char const* what, std::filesystem::path const& path) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]))
      throw CheckInputError(std::string("--") + what + " " + path.string() + ": element " +
                            std::to_string(i) + " is " + (std::isnan(t[i]) ? "NaN" : "Inf") +
                            "; inputs must be finite");
}

}  // namespace

CheckProblem load_check_problem(CheckFiles const& files, bool causal, double softmax_scale) {
  if (softmax_scale < 0.0 || !std::isfinite(softmax_scale))
    throw CheckInputError("--scale " + std::to_string(softmax_scale) + ": must be a positive finite number");
  int const backward_given = int(files.d_o.has_value()) + int(files.dq.has_value()) +
                             int(files.dk.has_value()) + int(files.dv.has_value());
  if (backward_given != 0 && backward_given != 4)
    throw CheckInputError("backward check needs all of --do, --dq, --dk, --dv (got " +
                          std::to_string(backward_given) + " of 4)");
  CheckProblem p;
  common::NpyArray q = read(files.q, "q");
  common::NpyArray k = read(files.k, "k");
  common::NpyArray v = read(files.v, "v");
  common::NpyArray o = read(files.o, "o");
  p.input_dtype = q.dtype;
  auto const qs = as_bhnd(q, "q", files.q);
  auto const ks = as_bhnd(k, "k", files.k);
  expect_dims_in_range(qs, "q", files.q);
  expect_dims_in_range(ks, "k", files.k);
  expect_shape(v, ks, "v", files.v, "K");
  expect_shape(o, qs, "o", files.o, "Q");
  if (qs[0] != ks[0])
    throw CheckInputError("--k " + files.k.string() + ": batch " + std::to_string(ks[0]) +
                          " differs from Q's " + std::to_string(qs[0]));
  if (qs[3] != ks[3])
    throw CheckInputError("--k " + files.k.string() + ": head dim " + std::to_string(ks[3]) +
                          " differs from Q's " + std::to_string(qs[3]));
  if (ks[1] == 0 || qs[1] % ks[1] != 0)
    throw CheckInputError("--k " + files.k.string() + ": " + std::to_string(ks[1]) +
                          " key/value heads; Q's " + std::to_string(qs[1]) +
                          " heads must be a multiple of it (grouped-query attention)");
  if (qs[2] == 0 || ks[2] == 0 || qs[3] == 0)
    throw CheckInputError("--q " + files.q.string() + ": empty sequence or head dim");
  common::AttentionShape& s = p.inputs.shape;
  s.batch = int(qs[0]);
  s.heads_q = int(qs[1]);
  s.heads_kv = int(ks[1]);
  s.seqlen_q = int(qs[2]);
  s.seqlen_k = int(ks[2]);
  s.head_dim = int(qs[3]);
  s.causal = causal;
  s.softmax_scale = softmax_scale;
  expect_finite(q.values, "q", files.q);
  expect_finite(k.values, "k", files.k);
  expect_finite(v.values, "v", files.v);
  p.inputs.q = std::move(q.values);
  p.inputs.k = std::move(k.values);
  p.inputs.v = std::move(v.values);
  p.observed.o = std::move(o.values);
  if (files.lse) {
    common::NpyArray lse = read(*files.lse, "lse");
    std::vector<std::size_t> const want3 = {qs[0], qs[1], qs[2]};
    bool const ok = lse.shape == want3 ||
                    (lse.shape.size() == 1 && qs[0] * qs[1] == 1 && lse.shape[0] == qs[2]) ||
                    (lse.shape.size() == 4 && lse.shape[3] == 1 &&
                     std::vector<std::size_t>(lse.shape.begin(), lse.shape.begin() + 3) == want3);
    if (!ok)
      throw CheckInputError("--lse " + files.lse->string() + ": shape " + shape_text(lse.shape) +
                            " does not match (B, H_q, N_q) = " + shape_text(want3));
    p.observed.lse = std::move(lse.values);
  }
  if (backward_given == 4) {
    common::NpyArray d_o = read(*files.d_o, "do");
    expect_shape(d_o, qs, "do", *files.d_o, "Q");
    expect_finite(d_o.values, "do", *files.d_o);
    p.inputs.d_o = std::move(d_o.values);
    common::NpyArray dq = read(*files.dq, "dq");
    expect_shape(dq, qs, "dq", *files.dq, "Q");
    common::NpyArray dk = read(*files.dk, "dk");
    expect_shape(dk, ks, "dk", *files.dk, "K");
    common::NpyArray dv = read(*files.dv, "dv");
    expect_shape(dv, ks, "dv", *files.dv, "K");
    p.observed.dq = std::move(dq.values);
    p.observed.dk = std::move(dk.values);
    p.observed.dv = std::move(dv.values);
  }
  return p;
}

void validate_problem(CheckProblem const& p) {
  common::AttentionShape const& s = p.inputs.shape;
  if (s.batch < 1 || s.heads_kv < 1 || s.heads_q % s.heads_kv != 0 || s.seqlen_q < 1 || s.seqlen_k < 1 ||
      s.head_dim < 1)
    throw CheckInputError("problem shape is not valid (need positive sizes, heads_q a multiple of heads_kv)");
  if (p.inputs.q.size() != s.q_elements() || p.inputs.k.size() != s.kv_elements() ||
      p.inputs.v.size() != s.kv_elements() || p.observed.o.size() != s.q_elements())
    throw CheckInputError("tensor sizes do not match the problem shape");
  for (auto const* t : {&p.inputs.q, &p.inputs.k, &p.inputs.v, &p.inputs.d_o})
    for (double x : *t)
      if (!std::isfinite(x)) throw CheckInputError("an input tensor holds NaN or Inf; inputs must be finite");
}

}  // namespace fl::numerics
