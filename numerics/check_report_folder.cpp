#include "numerics/check_report.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/gnuplot.hpp"
#include "common/stop_signals.hpp"
#include "numerics/check_report_format.hpp"

namespace fl::numerics {

namespace {

using report_format::sci;
using report_format::shape_line;
using report_format::upper;

constexpr int kHistogramBinsPerDecade = 4;
constexpr int kHistogramLowDecade = -8;  // ratios below 1e-8 of the bound are put in the first bin
constexpr int kHistogramHighDecade = 2;

// The sampled row indices of output k (0..2 query rows, 3..4 key rows).
std::vector<std::size_t> const& rows_of(CheckResult const& r, std::size_t k) {
  return k >= 3 ? r.reference.sample.key_rows : r.reference.sample.query_rows;
}

}  // namespace

ReportOutcome write_check_report(std::filesystem::path const& dir, CheckResult const& r,
                                 common::AttentionShape const& s, CheckContext const& context,
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
     << "; scores " << name(r.recipe.scores) << ")\n";
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
