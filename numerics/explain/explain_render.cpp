// render_text: the trace as the lesson's table, one line per variant and block, then the end state beside the
// float64 answer, then notes.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "numerics/explain/explain.hpp"

namespace fl::numerics::explain {

using mutants::MutantId;

namespace {

// Scores shown per block up to this block size; above it only the block's largest score.
constexpr int kMaxScoresShown = 8;
// Below this (and above 1e7) a figure is printed in scientific notation: fixed decimals would show 0.000.
constexpr double kSmallestFixed = 1e-3;
constexpr double kLargestFixed = 1e7;
// Notes on the max rising are listed for at most this many blocks.
constexpr int kMaxRiseNotes = 3;

std::string fixed(double x, int decimals) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  double const a = std::fabs(x);
  if (x == 0 || (a >= kSmallestFixed && a < kLargestFixed))
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  else
    std::snprintf(buf, sizeof buf, "%.*e", decimals, x);
  return buf;
}

// A score (or the running max, which is one) as held: the shortest form that reads back as the same float
// (fp32 arithmetic, or an fp64 value that is a float, as given scores are), else 7 significant digits; ".0"
// on integers.
std::string exact_number(double x, bool as_float) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::string s;
  if (as_float || static_cast<double>(static_cast<float>(x)) == x) {
    s.assign(buf, std::to_chars(buf, buf + sizeof buf, static_cast<float>(x)).ptr);
  } else {
    std::snprintf(buf, sizeof buf, "%.7g", x);
    s = buf;
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <class T>
std::string vector_text(std::vector<T> const& v, int decimals, int shown) {
  if (v.size() == 1) return fixed(static_cast<double>(v[0]), decimals);
  std::string s = "[";
  auto const n = std::min<std::size_t>(v.size(), static_cast<std::size_t>(std::max(shown, 1)));
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + fixed(static_cast<double>(v[i]), decimals);
  if (n < v.size()) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s + "]";
}

std::string scores_text(emulator::BlockState const& b, bool as_float) {
  int const real = b.end_key - b.first_key;
  std::string s;
  for (std::size_t j = 0; j < b.scores.size(); ++j) {
    bool const padding = static_cast<int>(j) >= real;
    if (padding && std::isinf(b.scores[j])) continue;  // masked padding: not a key
    s += (s.empty() ? "" : ", ") + exact_number(b.scores[j], as_float) + (padding ? " (padding)" : "");
  }
  return s;
}

double max_abs_difference(std::vector<double> const& a, std::vector<double> const& b) {
  double worst = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    double const d = std::fabs(a[e] - b[e]);
    if (std::isnan(d)) return NAN;
    worst = std::max(worst, d);
  }
  return worst;
}

bool same_state(emulator::BlockState const& a, emulator::BlockState const& b) {
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  if (!same(a.m, b.m) || !same(a.alpha, b.alpha) || !same(a.l, b.l)) return false;
  for (std::size_t e = 0; e < a.output_so_far.size(); ++e)
    if (!same(a.output_so_far[e], b.output_so_far[e])) return false;
  return a.scores == b.scores;
}

// What input shows a bug whose trace is identical to the correct one on this row.
std::string exposure_hint(MutantId id) {
  switch (id) {
    case MutantId::unrescaled_o:
    case MutantId::unrescaled_l:
    case MutantId::stale_max:
      return "it acts only when the running max rises after the first block (put a larger score later)";
    case MutantId::m_init_zero:
      return "it acts only when every score is so far below 0 that its weights underflow (try --family "
             "all_negative --precision fp32; float64 does not underflow there)";
    case MutantId::normalize_in_loop:
      return "it acts only with more than one block (a smaller --block)";
    case MutantId::missing_scale:
      return "it acts only with a softmax scale other than 1 (--softmax-scale, or an input family)";
    case MutantId::causal_diagonal:
      return "it acts only where the key after the diagonal lies in a block the row visits (--family normal "
             "--causal --keys 16 --block 4 --row 2)";
    case MutantId::masked_row_nan:
      return "it acts only when a whole block is masked before any visible key (--scores -inf,-inf,1,2 "
             "--values 1,2,3,4 --block 2); in a kernel: a fully masked row in a query tile with rows that "
             "see "
             "keys";
    case MutantId::tail_unmasked:
      return "it acts only when the keys do not fill the last block and the scores are below 0";
    case MutantId::lse_without_max:
      return "it changes only the LSE, never O";
    default:
      return "this row does not reach the line where it lives";
  }
}

void render_notes(std::ostringstream& out, RowProblem const& problem, Explanation const& x) {
  bool const as_float = x.arithmetic == emulator::TraceArithmetic::fp32;
  Variant const& correct = x.variants.front();
  auto const& blocks = correct.trace.blocks;
  out << "\nnotes\n";
  if (blocks.empty()) {
    out << "  the row sees no key (causal): its key loop never runs, O = 0 and LSE = -inf, the limit of an "
           "empty softmax\n";
  } else if (blocks.front().alpha == 0.0 && std::isfinite(blocks.front().m)) {
    out << "  scale=0 in block " << blocks.front().block << " is exp(-inf - "
        << exact_number(blocks.front().m, as_float)
        << "): l and the output start at 0, so there is nothing to rescale. Not a bug: the max starts at "
           "-inf so that the first block sets it.\n";
  }
  int rises = 0;
  for (std::size_t i = 1; i < blocks.size() && rises < kMaxRiseNotes; ++i) {
    if (!(blocks[i].m > blocks[i - 1].m)) continue;
    ++rises;
    out << "  block " << blocks[i].block << ": the running max rises "
        << exact_number(blocks[i - 1].m, as_float) << " -> " << exact_number(blocks[i].m, as_float)
        << ", so scale=" << fixed(blocks[i].alpha, 3)
        << " shrinks l and the output accumulated so far: every earlier weight is measured against the new "
           "max\n";
  }
  if (blocks.size() > 1 && rises == 0)
    out << "  the running max never rises after the first block: every later scale is 1\n";
  if (is_fp8(problem.recipe.probabilities))
    out << "  FP8: P is computed times " << problem.recipe.probability_scale
        << " (FlashAttention-3's offset), so l carries that factor; it cancels in O = acc / l\n";
  for (std::size_t v = 1; v < x.variants.size(); ++v) {
    Variant const& bad = x.variants[v];
    auto const& bad_blocks = bad.trace.blocks;
    out << "  " << bad.name << " (" << mutants::info(*bad.mutant).description << "): ";
    std::size_t first = 0;
    while (first < std::min(blocks.size(), bad_blocks.size()) && same_state(blocks[first], bad_blocks[first]))
      ++first;
    bool const same_trace = first == blocks.size() && bad_blocks.size() == blocks.size();
    bool const same_output = max_abs_difference(bad.trace.output, correct.trace.output) == 0.0;
    bool const same_lse = bad.trace.lse == correct.trace.lse;
    if (same_trace && same_output && same_lse) {
      out << "identical to the correct algorithm on this row: " << exposure_hint(*bad.mutant) << "\n";
      continue;
    }
    if (!same_trace && first < bad_blocks.size())
      out << "departs from the correct state at block " << bad_blocks[first].block << "; ";
    if (same_output) {
      out << "O ends identical to the correct one";
      if (!same_lse)
        out << ", but LSE=" << fixed(bad.trace.lse, 6) << " against " << fixed(x.exact_lse, 6);
      else
        out << " (" << exposure_hint(*bad.mutant) << ")";
      out << "\n";
      continue;
    }
    double const error = max_abs_difference(bad.trace.output, x.exact);
    if (std::isnan(error)) {
      out << "ends in NaN\n";
    } else if (bad.trace.output.size() == 1) {
      double const signed_error = bad.trace.output[0] - x.exact[0];
      out << "ends at " << fixed(bad.trace.output[0], 6) << ", " << (signed_error > 0 ? "above" : "below")
          << " the answer " << fixed(x.exact[0], 6) << " by " << fixed(std::fabs(signed_error), 6) << "\n";
    } else {
      out << "max |O - answer| = " << fixed(error, 6)
          << " (correct: " << fixed(max_abs_difference(correct.trace.output, x.exact), 6) << ")\n";
    }
  }
}

}  // namespace

std::string render_text(RowProblem const& problem, Explanation const& x, RenderOptions const& options) {
  bool const as_float = x.arithmetic == emulator::TraceArithmetic::fp32;
  std::ostringstream out;
  common::AttentionShape const& shape = problem.inputs.shape;
  out << "fa-explain: one row's online softmax (FlashAttention-2 order), after each key block\n";
  out << "row: " << problem.description << "\n";
  out << "blocks of " << x.block << " keys, "
      << (x.key_order == emulator::KeyOrder::first_to_last ? "first to last" : "last to first") << "; ";
  if (as_float)
    out << "precision " << name(problem.recipe.claimed)
        << " as a kernel computes it (scores, m, l, accumulator in fp32; the CPU emulator's arithmetic)\n";
  else
    out << "fp64: every step in float64, nothing rounded (the lesson's numbers; --precision fp32 for a "
           "kernel's)\n";
  out << "m = running max of the scores; scale = exp(m_old - m_new), what the old l and output are "
         "multiplied "
         "by; l = running sum of exp(score - m); output so far = accumulator / l\n";
  if (shape.softmax_scale != 1.0)
    out << "softmax scale " << shape.scale() << ": weights are exp(scale * (score - m))\n";

  std::size_t width = 0, steps = 0;
  for (Variant const& v : x.variants) {
    width = std::max(width, v.name.size());
    steps = std::max(steps, v.trace.blocks.size());
  }
  Variant const& correct = x.variants.front();
  for (std::size_t i = 0; i < steps; ++i) {
    // The block's keys and scores as the correct algorithm sees them (a mutant that sees others says so).
    Variant const* shown = &correct;
    for (Variant const& v : x.variants)
      if (i >= shown->trace.blocks.size() && i < v.trace.blocks.size()) shown = &v;
    emulator::BlockState const& head_block = shown->trace.blocks[i];
    out << "\nblock " << head_block.block << "  keys " << head_block.first_key << ".."
        << head_block.end_key - 1;
    if (x.block <= kMaxScoresShown)
      out << "  scores " << scores_text(head_block, as_float);
    else
      out << "  max score "
          << exact_number(*std::max_element(head_block.scores.begin(), head_block.scores.end()), as_float);
    out << "\n";
    for (Variant const& v : x.variants) {
      out << "  " << v.name << std::string(width - v.name.size() + 2, ' ');
      if (i >= v.trace.blocks.size()) {
        out << "(no such block)\n";
        continue;
      }
      emulator::BlockState const& b = v.trace.blocks[i];
      out << "m=" << exact_number(b.m, as_float) << " scale=" << fixed(b.alpha, 3) << " l=" << fixed(b.l, 4)
          << " output so far=" << vector_text(b.output_so_far, 3, options.shown_dims);
      if (&v != shown && x.block <= kMaxScoresShown && b.scores != head_block.scores)
        out << "  (sees scores " << scores_text(b, as_float) << ")";
      out << "\n";
    }
  }

  out << "\nend of the row\n";
  std::string const exact_label = "exact (float64)";
  std::size_t const end_width = std::max(width, exact_label.size());
  out << "  " << exact_label << std::string(end_width - exact_label.size() + 2, ' ')
      << "answer=" << vector_text(x.exact, 6, options.shown_dims) << " LSE=" << fixed(x.exact_lse, 6) << "\n";
  for (Variant const& v : x.variants)
    out << "  " << v.name << std::string(end_width - v.name.size() + 2, ' ')
        << "online=" << vector_text(v.trace.output, 6, options.shown_dims) << " LSE=" << fixed(v.trace.lse, 6)
        << "  max |online - answer| = " << fixed(max_abs_difference(v.trace.output, x.exact), 2) << "\n";
  render_notes(out, problem, x);
  return out.str();
}

}  // namespace fl::numerics::explain
