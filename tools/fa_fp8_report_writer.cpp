#include "tools/fa_fp8_report_writer.hpp"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/gnuplot.hpp"
#include "numerics/check_report.hpp"
#include "numerics/fp8_study.hpp"

using namespace fl::numerics;

namespace fl::tools {

namespace {

// FlashAttention-3 paper, Table 3: RMSE of O on its outlier recipe against an FP64 reference.
struct PaperRow {
  char const* name;
  double rmse;
  char const* method;  // our method
  char const* label;   // our variant label
};
constexpr PaperRow kPaperTable3[] = {
    {"Baseline FP16", 3.2e-4, "baseline", "fp16"},
    {"FlashAttention-2 FP16", 1.9e-4, "tiled", "fp16"},
    {"FlashAttention-3 FP16", 1.9e-4, "tiled", "fp16"},
    {"Baseline FP8", 2.4e-2, "baseline", "fp8_e4m3 per_tensor"},
    {"FlashAttention-3 FP8", 9.1e-3, "tiled", "fp8_e4m3 per_block incoherent"},
    {"FA3 FP8 without block quantization", 9.3e-3, "tiled", "fp8_e4m3 per_tensor incoherent"},
    {"FA3 FP8 without incoherent processing", 2.4e-2, "tiled", "fp8_e4m3 per_block"},
};

constexpr char const* kResultsFile = "results.csv";
constexpr char const* kReportFile = "report.md";
constexpr char const* kHeadDimPlotFile = "o_rmse_vs_head_dim.svg";
constexpr char const* kBackwardPlotFile = "backward_rmse.svg";

std::string forward_plot_file(InputFamily recipe) {
  return "o_rmse_vs_n_" + std::string(name(recipe)) + ".svg";
}

std::string sci(double x) {
  std::ostringstream out;
  out << std::setprecision(2) << std::scientific << x;
  return out.str();
}

std::string key_of(Fp8StudyRow const& r) {
  return r.pass + "|" + r.method + "|" + r.label() + "|" + std::string(name(r.recipe)) + "|" +
         std::to_string(r.head_dim) + "|" + std::to_string(r.seqlen);
}

}  // namespace

std::vector<std::string> fp8_report_files(Fp8StudyOptions const& study) {
  std::vector<std::string> files = {kResultsFile, kReportFile};
  for (InputFamily recipe : study.recipes) files.push_back(forward_plot_file(recipe));
  files.push_back(kHeadDimPlotFile);
  files.push_back(kBackwardPlotFile);
  return files;
}

int write_fp8_report(std::filesystem::path const& out, std::string const& gnuplot,
                     Fp8StudyOptions const& study, std::string const& command_line) {
  std::filesystem::create_directories(out);
  auto const t0 = std::chrono::steady_clock::now();
  std::vector<Fp8StudyRow> const rows = run_fp8_study(study, [](Fp8StudyRow const& r) {
    std::cerr << r.pass << " " << r.method << " " << r.label() << " " << name(r.recipe) << " d" << r.head_dim
              << " n" << r.seqlen << ": O rmse " << sci(r.o_rmse) << " (" << std::fixed
              << std::setprecision(1) << r.seconds << std::defaultfloat << " s)\n";
  });
  double const total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::map<std::string, Fp8StudyRow const*> by_key;
  for (auto const& r : rows) by_key[key_of(r)] = &r;

  std::ostringstream csv;
  csv << "pass,method,variant,precision,scaling,incoherent,recipe,head_dim,seqlen,rows,o_rmse,o_rel,dq_rmse,"
         "dk_rmse,"
         "dv_rmse,seconds\n";
  for (auto const& r : rows)
    csv << r.pass << "," << r.method << "," << r.label() << "," << name(r.precision) << ","
        << (is_fp8(r.precision) ? std::string(name(r.scaling)) : "") << "," << (r.incoherent ? 1 : 0) << ","
        << name(r.recipe) << "," << r.head_dim << "," << r.seqlen << "," << r.rows << "," << r.o_rmse << ","
        << r.o_rel << "," << r.dq_rmse << "," << r.dk_rmse << "," << r.dv_rmse << "," << r.seconds << "\n";
  fl::common::write_file_atomically(out / kResultsFile, csv.str());

  auto find = [&](std::string const& pass, std::string const& method, std::string const& label,
                  InputFamily recipe, int d, int n) -> Fp8StudyRow const* {
    auto it = by_key.find(pass + "|" + method + "|" + label + "|" + std::string(name(recipe)) + "|" +
                          std::to_string(d) + "|" + std::to_string(n));
    return it == by_key.end() ? nullptr : it->second;
  };

  std::ostringstream md;
  md << "# FP8 error analysis: generated tables\n\n";
  md << "Generated " << utc_timestamp() << " by `";
  md << command_line;
  md << "` in " << std::fixed << std::setprecision(0) << total_seconds << std::defaultfloat
     << " s. RMSE of O (and of dQ, dK, dV) against the float64 reference; B = H = 1, non-causal; inputs "
        "stored as "
        "bf16. baseline = standard attention (untiled, S and softmax in fp32, P rounded); tiled = the "
        "FlashAttention-2-order CPU emulator with 128 x 128 tiles (the FlashAttention-3 FP8 forward when "
        "per-block scaling and incoherent processing are on). Per-block scaling: one scale per 128 rows.\n\n";

  int const table_d = 128;
  md << "## Beside FlashAttention-3's Table 3 (fa3_outliers recipe, head dim " << table_d << ")\n\n";
  md << "| paper row | paper RMSE | ours: method, variant |";
  for (int n : study.seqlens) md << " n=" << n << " |";
  md << "\n|---|---|---|";
  for (std::size_t i = 0; i < study.seqlens.size(); ++i) md << "---|";
  md << "\n";
  for (PaperRow const& p : kPaperTable3) {
    md << "| " << p.name << " | " << sci(p.rmse) << " | " << p.method << ", " << p.label << " |";
    for (int n : study.seqlens) {
      Fp8StudyRow const* r = find("forward", p.method, p.label, InputFamily::fa3_outliers, table_d, n);
      md << " " << (r ? sci(r->o_rmse) : "-") << " |";
    }
    md << "\n";
  }

  if (!study.fp8_variants.empty()) {
    std::string const base = "fp8_e4m3 per_block incoherent";
    md << "\n## FP8 variants on FlashAttention-3's recipe (e4m3, per-block, incoherent; fa3_outliers, "
          "head dim "
       << table_d << ", tiled), O RMSE and ratio to fa3\n\n| variant |";
    for (int n : study.seqlens) md << " n=" << n << " | ratio |";
    md << "\n|---|";
    for (std::size_t i = 0; i < study.seqlens.size(); ++i) md << "---|---|";
    md << "\n";
    std::vector<Fp8Variants> shown = {Fp8Variants{}};
    for (Fp8Variants v : study.fp8_variants)
      if (!v.is_fa3()) shown.push_back(v);
    for (Fp8Variants v : shown) {
      std::string const label = v.is_fa3() ? base : base + " " + name(v);
      md << "| " << name(v) << " |";
      for (int n : study.seqlens) {
        Fp8StudyRow const* r = find("forward", "tiled", label, InputFamily::fa3_outliers, table_d, n);
        Fp8StudyRow const* f = find("forward", "tiled", base, InputFamily::fa3_outliers, table_d, n);
        md << " " << (r ? sci(r->o_rmse) : "-") << " | ";
        if (r && f && f->o_rmse > 0)
          md << std::fixed << std::setprecision(2) << r->o_rmse / f->o_rmse << std::defaultfloat;
        else
          md << "-";
        md << " |";
      }
      md << "\n";
    }
  }

  for (InputFamily recipe : study.recipes) {
    md << "\n## Forward, O RMSE, recipe " << name(recipe) << "\n\n| d | method | variant |";
    for (int n : study.seqlens) md << " n=" << n << " |";
    md << "\n|---|---|---|";
    for (std::size_t i = 0; i < study.seqlens.size(); ++i) md << "---|";
    md << "\n";
    for (int d : study.head_dims) {
      std::vector<std::pair<std::string, std::string>> seen;
      for (auto const& r : rows)
        if (r.pass == "forward" && r.recipe == recipe && r.head_dim == d && r.seqlen == study.seqlens.front())
          seen.emplace_back(r.method, r.label());
      for (auto const& [method, label] : seen) {
        md << "| " << d << " | " << method << " | " << label << " |";
        for (int n : study.seqlens) {
          Fp8StudyRow const* r = find("forward", method, label, recipe, d, n);
          md << " " << (r ? sci(r->o_rmse) : "-") << " |";
        }
        md << "\n";
      }
    }
  }
  md << "\n## Backward (every row), RMSE of O / dQ / dK / dV\n\n| recipe | d | n | method | variant | O | dQ "
        "| dK | dV |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  for (auto const& r : rows)
    if (r.pass == "backward")
      md << "| " << name(r.recipe) << " | " << r.head_dim << " | " << r.seqlen << " | " << r.method << " | "
         << r.label() << " | " << sci(r.o_rmse) << " | " << sci(r.dq_rmse) << " | " << sci(r.dk_rmse) << " | "
         << sci(r.dv_rmse) << " |\n";

  // Plots.
  std::string const data = fl::common::gnuplot_quote(std::filesystem::absolute(out / kResultsFile).string());
  auto series = [&](std::string const& pass, std::string const& method, std::string const& label,
                    InputFamily recipe, int d, std::string const& x, std::string const& y,
                    std::string const& title) {
    return data + " using (strcol(1) eq '" + pass + "' && strcol(2) eq '" + method + "' && strcol(3) eq '" +
           label + "' && strcol(7) eq '" + std::string(name(recipe)) + "' && ($8 == " + std::to_string(d) +
           ") ? $" + x + " : 1/0):" + y + " with linespoints lw 2 title '" + title + "'";
  };
  std::string const common =
      "set datafile separator ','\nset key outside right\nset grid\nset logscale xy\nset format y '%.0e'\n";
  struct Plot {
    std::string file, caption, script;
  };
  std::vector<Plot> plots;
  for (InputFamily recipe : study.recipes) {
    std::string script = common +
                         "set xlabel 'sequence length n'\nset ylabel 'RMSE of O'\nset title 'Forward, d = " +
                         std::to_string(table_d) + ", recipe " + std::string(name(recipe)) + "'\nplot ";
    std::vector<std::string> parts;
    for (PaperRow const& p : kPaperTable3) {
      if (std::string(p.name) == "FlashAttention-3 FP16") continue;  // same arithmetic as the FA2 row
      parts.push_back(series("forward", p.method, p.label, recipe, table_d, "9", "11", p.name));
    }
    parts.push_back(series("forward", "tiled", "fp8_e5m2 per_block incoherent", recipe, table_d, "9", "11",
                           "FA3-style FP8 e5m2"));
    parts.push_back(series("forward", "tiled", "bf16", recipe, table_d, "9", "11", "FlashAttention-2 BF16"));
    for (std::size_t i = 0; i < parts.size(); ++i) script += (i ? ", " : "") + parts[i];
    plots.push_back({forward_plot_file(recipe),
                     "RMSE of O against n, head dim 128, recipe " + std::string(name(recipe)),
                     script + "\n"});
  }
  {
    int const n = study.seqlens.back();
    std::string script =
        common +
        "unset logscale x\nset xtics (64, 128, 256)\nset xlabel 'head dim'\nset ylabel 'RMSE of O'\n"
        "set title 'Forward, n = " +
        std::to_string(n) + ", recipe fa3_outliers'\nplot ";
    std::vector<std::string> parts;
    for (std::string label : {"fp8_e4m3 per_tensor", "fp8_e4m3 per_tensor incoherent", "fp8_e4m3 per_block",
                              "fp8_e4m3 per_block incoherent", "fp8_e5m2 per_block incoherent", "fp16"})
      for (std::string method : {"baseline", "tiled"})
        if (method == "tiled" || label == "fp8_e4m3 per_tensor")
          parts.push_back(data + " using (strcol(1) eq 'forward' && strcol(2) eq '" + method +
                          "' && strcol(3) eq '" + label +
                          "' && strcol(7) eq 'fa3_outliers' && ($9 == " + std::to_string(n) +
                          ") ? $8 : 1/0):11 with linespoints lw 2 title '" + method + " " + label + "'");
    for (std::size_t i = 0; i < parts.size(); ++i) script += (i ? ", " : "") + parts[i];
    plots.push_back(
        {kHeadDimPlotFile, "RMSE of O against the head dim, n = " + std::to_string(n), script + "\n"});
  }
  {
    int const d = study.backward_head_dims.front();
    std::string script =
        common +
        "set xlabel 'sequence length n'\nset ylabel 'RMSE'\nset title 'Backward, d = " + std::to_string(d) +
        ", recipe fa3_outliers, tiled'\nplot ";
    std::vector<std::string> parts;
    for (std::string label : {"fp16", "fp8_e4m3 per_tensor", "fp8_e4m3 per_block incoherent"})
      for (auto [col, what] : {std::pair{"13", "dQ"}, std::pair{"14", "dK"}, std::pair{"15", "dV"}})
        parts.push_back(series("backward", "tiled", label, InputFamily::fa3_outliers, d, "9", col,
                               std::string(what) + " " + label));
    for (std::size_t i = 0; i < parts.size(); ++i) script += (i ? ", " : "") + parts[i];
    plots.push_back(
        {kBackwardPlotFile, "Backward RMSE of dQ, dK, dV against n (tiled, fa3_outliers)", script + "\n"});
  }
  md << "\n## Plots\n\n";
  if (!fl::common::gnuplot_available(gnuplot)) {
    md << "Plots skipped: gnuplot (`" << gnuplot << "`) is not available; the data are in results.csv.\n";
  } else {
    for (Plot const& p : plots)
      if (fl::common::render_svg(gnuplot, p.script, out / p.file))
        md << "![" << p.caption << "](" << p.file << ")\n\n";
      else
        md << "Plot " << p.file << " failed to render.\n\n";
  }
  fl::common::write_file_atomically(out / kReportFile, md.str());
  std::cout << "wrote " << (out / kReportFile).string() << ", results.csv and plots in " << std::fixed
            << std::setprecision(0) << total_seconds << " s\n";
  return fl::common::kExitOk;
}

}  // namespace fl::tools
