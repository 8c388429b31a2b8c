#include "numerics/check_report.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/gnuplot.hpp"
#include "common/json_writer.hpp"
#include "common/stop_signals.hpp"

namespace fl::numerics {

namespace {

constexpr int kHistogramBinsPerDecade = 4;
constexpr int kHistogramLowDecade = -8;  // ratios below 1e-8 of the bound are put in the first bin
constexpr int kHistogramHighDecade = 2;

std::string shape_line(AttentionShape const& s) {
  std::ostringstream out;
  out << "B=" << s.batch << " H_q=" << s.heads_q << " H_kv=" << s.heads_kv << " N_q=" << s.seqlen_q
      << " N_k=" << s.seqlen_k << " D=" << s.head_dim << " scale=" << std::setprecision(6) << s.scale();
  return out.str();
}

std::string upper(std::string text) {
  for (char& c : text) c = char(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string sci(double x, int digits = 3) {
  std::ostringstream out;
  out << std::setprecision(digits) << x;
  return out.str();
}

void metrics_json(common::JsonWriter& j, ErrorMetrics const& m) {
  j.begin_object();
  j.field("count", m.count).field("max_abs", m.max_abs).field("rmse", m.rmse);
  j.field("rel_frobenius", m.rel_frobenius).field("cosine", m.cosine).field("rel_l1", m.rel_l1);
  j.field("nan_count", m.nan_count).field("inf_count", m.inf_count);
  j.end_object();
}

// The sampled row indices of output k (0..2 query rows, 3..4 key rows).
std::vector<std::size_t> const& rows_of(CheckResult const& r, std::size_t k) {
  return k >= 3 ? r.reference.sample.key_rows : r.reference.sample.query_rows;
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

std::string check_json(CheckResult const& r, AttentionShape const& s, CheckContext const& context) {
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

void print_check_summary(std::ostream& out, CheckResult const& r, AttentionShape const& s) {
  if (r.interrupted())
    out << "fa-check: INTERRUPTED by " << common::stop_signal_name(r.stop_signal)
        << (r.rows_cut_by_stop ? ": the rows below are those checked before it"
                               : ": the diagnosis was not run")
        << "\n";
  out << "fa-check: " << upper(r.verdict()) << " (claimed " << name(r.recipe.claimed) << ", " << shape_line(s)
      << ")\n";
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

ReportOutcome write_check_report(std::filesystem::path const& dir, CheckResult const& r,
                                 AttentionShape const& s, CheckContext const& context,
                                 std::string const& gnuplot) {
  std::filesystem::create_directories(dir);
  ReportOutcome outcome;
  auto write = [&](std::string const& file, std::string const& content) {
    common::write_file_atomically(dir / file, content);
    outcome.written.push_back(dir / file);
  };

  std::ostringstream metrics;
  metrics
      << "output,verdict,count,max_abs,rmse,rel_frobenius,cosine,rel_l1,nan_count,inf_count,failing_elements,"
         "worst_error_over_bound\n";
  std::ostringstream rows;
  rows << "output,row,batch,head,position,visible_keys,max_abs,error_over_bound\n";
  std::vector<std::vector<std::size_t>> histogram(r.judgement.outputs.size());
  int const bins = (kHistogramHighDecade - kHistogramLowDecade) * kHistogramBinsPerDecade + 1;
  for (std::size_t k = 0; k < r.judgement.outputs.size(); ++k) {
    OutputJudgement const& o = r.judgement.outputs[k];
    histogram[k].assign(std::size_t(bins), 0);
    if (!o.checked) continue;
    ErrorMetrics const& m = o.metrics;
    metrics << o.name << "," << (o.failing_elements ? "fail" : "pass") << "," << m.count << "," << m.max_abs
            << "," << m.rmse << "," << m.rel_frobenius << "," << m.cosine << "," << m.rel_l1 << ","
            << m.nan_count << "," << m.inf_count << "," << o.failing_elements << "," << o.worst_ratio << "\n";
    auto const& sample_rows = rows_of(r, k);
    for (std::size_t t = 0; t < sample_rows.size(); ++t) {
      bool const key = k >= 3;
      RowIndex const x = key ? key_row_index(s, sample_rows[t]) : query_row_index(s, sample_rows[t]);
      int const visible = key ? 0 : visible_keys(s, x.pos);
      rows << o.name << "," << sample_rows[t] << "," << x.batch << "," << x.head << "," << x.pos << ","
           << visible << "," << o.row_max_error[t] << "," << o.row_max_ratio[t] << "\n";
      double const ratio = o.row_max_ratio[t];
      int bin = ratio > 0.0
                    ? int(std::floor((std::log10(ratio) - kHistogramLowDecade) * kHistogramBinsPerDecade))
                    : 0;
      histogram[k][std::size_t(std::clamp(bin, 0, bins - 1))]++;
    }
  }
  std::ostringstream hist;
  hist << "log10_error_over_bound";
  for (OutputJudgement const& o : r.judgement.outputs) hist << "," << o.name;
  hist << "\n";
  for (int b = 0; b < bins; ++b) {
    hist << double(kHistogramLowDecade) + double(b) / kHistogramBinsPerDecade;
    for (auto const& h : histogram) hist << "," << h[std::size_t(b)];
    hist << "\n";
  }
  write("metrics.csv", metrics.str());
  write("rows.csv", rows.str());
  write("histogram.csv", hist.str());
  write("report.json", check_json(r, s, context));

  std::string const rows_csv = common::gnuplot_quote((std::filesystem::absolute(dir) / "rows.csv").string());
  std::string const hist_csv =
      common::gnuplot_quote((std::filesystem::absolute(dir) / "histogram.csv").string());
  std::string const common = "set datafile separator ','\nset key outside right\nset grid\n";
  std::string outputs_plot;
  std::vector<std::string> names;
  for (OutputJudgement const& o : r.judgement.outputs)
    if (o.checked) names.push_back(o.name);
  auto per_output = [&](std::string const& xcol, std::string const& ycol) {
    std::string p = "plot ";
    for (std::size_t i = 0; i < names.size(); ++i)
      p += (i ? ", " : "") + rows_csv + " using (strcol(1) eq '" + names[i] + "' ? $" + xcol +
           " : 1/0):" + ycol + " with points pt 7 ps 0.4 title '" + names[i] + "'";
    return p + ", 1 with lines lw 2 lc rgb 'red' title 'bound'\n";
  };
  struct Plot {
    char const* file;
    char const* caption;
    std::string script;
  };
  std::string hist_plot =
      common +
      "set style fill solid 0.5\nset boxwidth 0.22\nset xlabel 'log10(max |error| / bound) of each row'\n"
      "set ylabel 'rows'\nset arrow from 0, graph 0 to 0, graph 1 nohead lc rgb 'red' lw 2\nplot ";
  for (std::size_t i = 0; i < r.judgement.outputs.size(); ++i)
    if (r.judgement.outputs[i].checked)
      hist_plot += std::string(hist_plot.back() == ' ' ? "" : ", ") + hist_csv +
                   " using 1:" + std::to_string(i + 2) + " skip 1 with boxes title '" +
                   r.judgement.outputs[i].name + "'";
  hist_plot += "\n";
  std::vector<Plot> plots = {
      {"error_histogram.svg",
       "Histogram of each row's largest error as a fraction of its bound (1 = the bound)", hist_plot},
      {"error_vs_length.svg",
       "Largest error / bound of each query row against the number of keys it sees (the sequence length of "
       "the row)",
       common + "set logscale y\nset xlabel 'keys visible to the row'\nset ylabel 'max |error| / bound'\n" +
           per_output("6", "($8 > 0 ? $8 : 1e-12)")},
      {"per_row_error.svg", "Largest error / bound of each checked row along the sequence",
       common +
           "set logscale y\nset xlabel 'position in the sequence (query rows; key rows for dK, dV)'\n"
           "set ylabel 'max |error| / bound'\n" +
           per_output("5", "($8 > 0 ? $8 : 1e-12)")},
  };
  bool const have_gnuplot = common::gnuplot_available(gnuplot);
  outcome.plots_drawn = have_gnuplot;
  std::vector<Plot const*> drawn;
  if (have_gnuplot)
    for (Plot const& p : plots)
      if (common::render_svg(gnuplot, p.script, dir / p.file)) {
        drawn.push_back(&p);
        outcome.written.push_back(dir / p.file);
      }
  if (have_gnuplot && drawn.size() != plots.size()) outcome.plots_drawn = false;

  std::ostringstream md;
  md << "# fa-check report: " << upper(r.verdict())
     << (r.interrupted() ? std::string(" (interrupted by ") + common::stop_signal_name(r.stop_signal) + ")"
                         : "")
     << "\n\n";
  md << "- date: " << utc_timestamp() << "\n- command: `" << context.command_line << "`\n";
  md << "- claimed precision: " << name(r.recipe.claimed) << " (inputs stored as " << context.input_dtype
     << ")\n";
  md << "- shape: " << shape_line(s) << "\n- masking: " << r.causal_convention << "\n";
  md << "- rows checked: " << r.checked_query_rows << " of " << r.total_query_rows << " query rows";
  if (r.total_key_rows) md << ", " << r.checked_key_rows << " of " << r.total_key_rows << " key rows";
  md << (r.rows_cut_by_stop ? " (interrupted)" : r.sampled ? " (sampled)" : " (all)") << "\n";
  md << "- tolerance: per element, " << kDefaultToleranceSigmas
     << " standard deviations of the rounding-error model plus the output's own rounding "
        "(numerics/README.md)\n\n";
  md << "| output | verdict | max abs | RMSE | rel. Frobenius | cosine | rel. L1 | NaN | Inf | failing | "
        "worst err/bound |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (OutputJudgement const& o : r.judgement.outputs) {
    if (!o.checked) continue;
    ErrorMetrics const& m = o.metrics;
    md << "| " << o.name << " | " << (o.failing_elements ? "FAIL" : "pass") << " | " << sci(m.max_abs)
       << " | " << sci(m.rmse) << " | " << sci(m.rel_frobenius) << " | " << sci(m.cosine, 8) << " | "
       << sci(m.rel_l1) << " | " << m.nan_count << " | " << m.inf_count << " | " << o.failing_elements
       << " | " << sci(o.worst_ratio) << " |\n";
  }
  if (r.baseline.done) {
    md << "\nCross-check: standard (untiled) attention in the same precision on the same inputs\n\n";
    md << "| output | RMSE | rel. Frobenius | elements above the bound | rms(bound) / RMSE "
          "|\n|---|---|---|---|---|\n";
    for (std::size_t k = 0; k < r.baseline.metrics.size(); ++k)
      if (r.baseline.metrics[k].count > 0)
        md << "| " << r.judgement.outputs[k].name << " | " << sci(r.baseline.metrics[k].rmse) << " | "
           << sci(r.baseline.metrics[k].rel_frobenius) << " | " << r.baseline.above_bound[k] << " | "
           << sci(r.baseline.bound_over_error[k]) << " |\n";
  }
  md << "\n## Worst rows\n\n";
  for (WorstRow const& w : r.worst_rows)
    md << "- " << w.output << ": max |err| " << sci(w.max_error) << " (" << sci(w.ratio)
       << " x bound): " << w.properties << "\n";
  md << "\n## Diagnosis\n\n";
  if (r.pass)
    md << "Not needed: the check passed.\n";
  else if (r.diagnosis.empty())
    md << "No known signature.\n";
  for (DiagnosisEntry const& d : r.diagnosis)
    md << "- **" << d.id << "** (match error " << sci(d.match_error) << "): " << d.evidence
       << (d.fix.empty() ? "" : "\n  - fix: " + d.fix) << "\n";
  if (!r.notes.empty()) {
    md << "\n## Notes\n\n";
    for (std::string const& n : r.notes) md << "- " << n << "\n";
  }
  md << "\n## Plots\n\n";
  if (!have_gnuplot)
    md << "Plots skipped: gnuplot (`" << gnuplot << "`) is not available. The data are in the CSV files.\n";
  for (Plot const* p : drawn) md << "![" << p->caption << "](" << p->file << ")\n\n" << p->caption << ".\n\n";
  md << "\nData: [metrics.csv](metrics.csv), [rows.csv](rows.csv) (every checked row), "
        "[histogram.csv](histogram.csv), "
        "[report.json](report.json).\n";
  write("report.md", md.str());
  return outcome;
}

}  // namespace fl::numerics
