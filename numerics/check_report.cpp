#include "numerics/check_report.hpp"

#include <cctype>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <sstream>

#include "common/json_writer.hpp"
#include "common/stop_signals.hpp"
#include "numerics/check_report_format.hpp"

namespace fl::numerics {

namespace report_format {

std::string shape_line(common::AttentionShape const& s) {
  std::ostringstream out;
  out << "B=" << s.batch << " H_q=" << s.heads_q << " H_kv=" << s.heads_kv << " N_q=" << s.seqlen_q
      << " N_k=" << s.seqlen_k << " D=" << s.head_dim << " scale=" << std::setprecision(6) << s.scale();
  return out.str();
}

std::string upper(std::string text) {
  for (char& c : text) c = char(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string sci(double x, int digits) {
  std::ostringstream out;
  out << std::setprecision(digits) << x;
  return out.str();
}

}  // namespace report_format

namespace {

using report_format::sci;
using report_format::shape_line;
using report_format::upper;

void metrics_json(common::JsonWriter& j, ErrorMetrics const& m) {
  j.begin_object();
  j.field("count", m.count).field("max_abs", m.max_abs).field("rmse", m.rmse);
  j.field("rel_frobenius", m.rel_frobenius).field("cosine", m.cosine).field("rel_l1", m.rel_l1);
  j.field("nan_count", m.nan_count).field("inf_count", m.inf_count);
  j.end_object();
}

}  // namespace

std::string utc_timestamp() {
  std::time_t const now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M UTC");
  return out.str();
}

std::string check_json(CheckResult const& r, common::AttentionShape const& s, CheckContext const& context) {
  common::JsonWriter j;
  j.begin_object();
  j.field("verdict", r.verdict());
  // null, or the signal that stopped the check ("SIGINT", "SIGTERM"): the rows checked are in
  // checked_query_rows, and the diagnosis was not run.
  if (r.interrupted())
    j.field("interrupted", common::stop_signal_name(r.stop_signal));
  else
    j.key("interrupted").null_value();
  j.field("claimed_precision", name(r.recipe.claimed));
  // fp32, or the input type for a kernel that stores S in 16 bits (its bound budgets that rounding).
  j.field("score_precision", name(r.recipe.scores));
  j.field("causal_convention", r.causal_convention);
  j.key("shape").begin_object();
  j.field("batch", s.batch).field("heads_q", s.heads_q).field("heads_kv", s.heads_kv);
  j.field("seqlen_q", s.seqlen_q).field("seqlen_k", s.seqlen_k).field("head_dim", s.head_dim);
  j.field("causal", s.causal).field("softmax_scale", s.scale());
  j.end_object();
  j.field("input_dtype", context.input_dtype);
  j.field("inputs_exact_in_claimed_precision", r.inputs_exact);
  j.field("sampled", r.sampled);
  j.field("checked_query_rows", r.checked_query_rows).field("total_query_rows", r.total_query_rows);
  j.field("checked_key_rows", r.checked_key_rows).field("total_key_rows", r.total_key_rows);
  j.field("tolerance_sigmas", kDefaultToleranceSigmas);
  j.key("outputs").begin_object();
  for (std::size_t k = 0; k < r.judgement.outputs.size(); ++k) {
    OutputJudgement const& o = r.judgement.outputs[k];
    if (!o.checked) continue;
    j.key(o.name).begin_object();
    j.field("verdict", o.failing_elements == 0 ? "pass" : "fail");
    j.key("metrics");
    metrics_json(j, o.metrics);
    j.field("failing_elements", o.failing_elements);
    j.field("worst_error_over_bound", o.worst_ratio);
    j.key("failing_rows").begin_array();
    for (std::size_t t = 0; t < o.failing_rows.size() && t < 1000; ++t) j.value(o.failing_rows[t]);
    j.end_array();
    j.key("per_row_max_abs").begin_array();
    for (double x : o.row_max_error) j.value(x);
    j.end_array();
    if (r.baseline.done && k < r.baseline.metrics.size() && r.baseline.metrics[k].count > 0) {
      j.key("same_precision_standard_attention").begin_object();
      j.key("metrics");
      metrics_json(j, r.baseline.metrics[k]);
      j.field("elements_above_bound", r.baseline.above_bound[k]);
      j.field("rms_bound_over_rmse", r.baseline.bound_over_error[k]);
      j.end_object();
    }
    j.end_object();
  }
  j.end_object();
  j.key("sampled_query_rows").begin_array();
  for (std::size_t row : r.reference.sample.query_rows) j.value(row);
  j.end_array();
  j.key("sampled_key_rows").begin_array();
  for (std::size_t row : r.reference.sample.key_rows) j.value(row);
  j.end_array();
  j.key("worst_rows").begin_array();
  for (WorstRow const& w : r.worst_rows) {
    j.begin_object();
    j.field("output", w.output).field("row", w.row).field("batch", w.index.batch).field("head", w.index.head);
    j.field("position", w.index.pos).field("max_abs", w.max_error).field("error_over_bound", w.ratio);
    j.field("properties", w.properties);
    j.end_object();
  }
  j.end_array();
  j.key("diagnosis").begin_array();
  for (DiagnosisEntry const& d : r.diagnosis) {
    j.begin_object();
    j.field("id", d.id)
        .field("kind", d.kind)
        .field("evidence", d.evidence)
        .field("match_error", d.match_error);
    j.field("strength", d.strength).field("fix", d.fix);
    j.end_object();
  }
  j.end_array();
  j.key("notes").begin_array();
  for (std::string const& n : r.notes) j.value(n);
  j.end_array();
  j.key("files").begin_object();
  for (auto const& [option, path] : context.files) j.field(option, path);
  j.end_object();
  j.field("command", context.command_line);
  j.end_object();
  return j.str() + "\n";
}

void print_check_summary(std::ostream& out, CheckResult const& r, common::AttentionShape const& s) {
  if (r.interrupted())
    out << "fa-check: INTERRUPTED by " << common::stop_signal_name(r.stop_signal)
        << (r.rows_cut_by_stop ? ": the rows below are those checked before it"
                               : ": the diagnosis was not run")
        << "\n";
  out << "fa-check: " << upper(r.verdict()) << " (claimed " << name(r.recipe.claimed)
      << (r.recipe.scores == common::Precision::fp32
              ? std::string()
              : " with S stored in " + std::string(name(r.recipe.scores)))
      << ", " << shape_line(s) << ")\n";
  out << "  " << r.causal_convention << "\n";
  out << "  rows checked: " << r.checked_query_rows << " of " << r.total_query_rows << " query rows";
  if (r.total_key_rows) out << ", " << r.checked_key_rows << " of " << r.total_key_rows << " key rows";
  out << (r.rows_cut_by_stop ? " (interrupted)" : r.sampled ? " (sampled)" : " (all)") << "\n";
  out << "  output  verdict  max_abs     rmse        rel_frob    cosine      nan  inf  failing  worst "
         "err/bound\n";
  for (OutputJudgement const& o : r.judgement.outputs) {
    if (!o.checked) continue;
    out << "  " << std::left << std::setw(8) << o.name << std::setw(9)
        << (o.failing_elements ? "FAIL" : "pass") << std::setw(12) << sci(o.metrics.max_abs) << std::setw(12)
        << sci(o.metrics.rmse) << std::setw(12) << sci(o.metrics.rel_frobenius) << std::setw(12)
        << sci(o.metrics.cosine, 8) << std::setw(5) << o.metrics.nan_count << std::setw(5)
        << o.metrics.inf_count << std::setw(9) << o.failing_elements << sci(o.worst_ratio) << std::right
        << "\n";
  }
  if (!r.pass) {
    out << "  worst rows:\n";
    for (WorstRow const& w : r.worst_rows)
      if (w.ratio > 1.0)
        out << "    " << w.output << " max |err| " << sci(w.max_error) << " = " << sci(w.ratio)
            << " x bound; " << w.properties << "\n";
    if (r.diagnosis.empty()) out << "  diagnosis: no known signature\n";
    for (DiagnosisEntry const& d : r.diagnosis) {
      out << "  diagnosis: " << d.id << " (match error " << sci(d.match_error) << "): " << d.evidence << "\n";
      if (!d.fix.empty()) out << "    fix: " << d.fix << "\n";
    }
  }
  for (std::string const& n : r.notes) out << "  note: " << n << "\n";
}

}  // namespace fl::numerics
