// fa-fp8-report: the FP8 error analysis of experiments/fp8_error_analysis. Runs numerics/fp8_study over
// e4m3/e5m2 x per-tensor/per-block x incoherent or not x head dims x sequence lengths, forward and
// backward, on the normal and the FlashAttention-3 recipes, and writes results.csv, report.md (tables,
// beside FlashAttention-3's Table 3, and FlashAttention-3's recipe with each FP8 P variant) and SVG plots
// drawn by gnuplot.
#include <boost/program_options.hpp>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/gnuplot.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "common/temporary_files.hpp"
#include "numerics/check_report.hpp"
#include "numerics/fp8_study.hpp"

namespace po = boost::program_options;
using namespace fl::numerics;

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

constexpr fl::common::CountRange kFullRowsUpTo{"full-rows-up-to", 0, std::int64_t(1) << 16};

std::string sci(double x) {
  std::ostringstream out;
  out << std::setprecision(2) << std::scientific << x;
  return out.str();
}

std::string key_of(Fp8StudyRow const& r) {
  return r.pass + "|" + r.method + "|" + r.label() + "|" + std::string(name(r.recipe)) + "|" +
         std::to_string(r.head_dim) + "|" + std::to_string(r.seqlen);
}

std::vector<int> parse_int_list(std::string const& text, char const* option, fl::common::CountRange range) {
  std::vector<int> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    try {
      std::size_t used = 0;
      int const v = std::stoi(item, &used);
      if (used != item.size() || v <= 0) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (std::exception const&) {
      throw po::error(std::string("--") + option + " " + text +
                      ": expected comma-separated positive integers");
    }
    range.what = std::string_view(option);
    if (auto complaint = fl::common::out_of_range(range, out.back())) throw po::error("--" + *complaint);
  }
  if (out.empty()) throw po::error(std::string("--") + option + " needs at least one value");
  return out;
}

// --fp8-variants: comma-separated variant sets of numerics/fp8_variants.hpp ("two_term_q+two_term_v"), or
// "none".
std::vector<Fp8Variants> parse_variant_sets(std::string const& text) {
  std::vector<Fp8Variants> out;
  if (text == "none") return out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    auto const v = parse_fp8_variants(item);
    if (!v)
      throw po::error("--fp8-variants " + item + ": expected \"all\", \"none\" or comma-separated sets of " +
                      allowed_fp8_variant_names() + " joined by '+'");
    out.push_back(*v);
  }
  if (out.empty()) throw po::error("--fp8-variants needs at least one value (or \"none\")");
  return out;
}

int write_report(po::variables_map const& vm, Fp8StudyOptions const& study, std::string const& command_line);

}  // namespace

int main(int argc, char** argv) {
  po::options_description options(
      "fa-fp8-report: FP8 attention error analysis (RMSE against a float64 reference), with "
      "plots.\n\nOptions");
  options.add_options()                                                                                    //
      ("help,h", "print this help")                                                                        //
      ("out", po::value<std::string>()->default_value("experiments/fp8_error_analysis"), "output folder")  //
      ("head-dims", po::value<std::string>()->default_value("64,128,256"),
       "head dims of the forward grid")  //
      ("seqlens", po::value<std::string>()->default_value("512,1024,2048,4096,8192,16384"),
       "sequence lengths of the forward grid")  //
      ("backward-seqlens", po::value<std::string>()->default_value("512,1024"),
       "sequence lengths of the backward runs (every row: O(n^2))")  //
      ("backward-head-dims", po::value<std::string>()->default_value("128"),
       "head dims of the backward runs")  //
      ("fp8-variants", po::value<std::string>()->default_value("all"),
       "FP8 variant sets run on FlashAttention-3's recipe (forward): all, none, or a list")  //
      ("full-rows-up-to", po::value<int>()->default_value(1024),
       "forward: every row up to this n, one sampled 128-row tile above it")            //
      ("seed", po::value<std::string>()->default_value("1"), "input seed")              //
      ("threads", po::value<int>()->default_value(0), "worker threads (0: all cores)")  //
      ("gnuplot", po::value<std::string>()->default_value(fl::common::kDefaultGnuplot), "gnuplot command");
  fl::common::exit_on_signals();
  po::variables_map vm;
  Fp8StudyOptions study;
  try {
    vm = fl::common::parse_strictly(argc, argv, options);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return fl::common::kExitOk;
    }
    study.head_dims = parse_int_list(vm["head-dims"].as<std::string>(), "head-dims", fl::common::kHeadDim);
    study.seqlens = parse_int_list(vm["seqlens"].as<std::string>(), "seqlens", fl::common::kSeqlen);
    study.backward_seqlens =
        parse_int_list(vm["backward-seqlens"].as<std::string>(), "backward-seqlens", fl::common::kSeqlen);
    study.backward_head_dims = parse_int_list(vm["backward-head-dims"].as<std::string>(),
                                              "backward-head-dims", fl::common::kHeadDim);
    // Both grids run the incoherent (Hadamard) variants, which need a power-of-two head dim.
    for (auto const& [option, dims] : {std::pair{"head-dims", &study.head_dims},
                                       std::pair{"backward-head-dims", &study.backward_head_dims}})
      for (int d : *dims)
        if ((d & (d - 1)) != 0)
          throw po::error(std::string("--") + option + " " + std::to_string(d) +
                          ": must be a power of two (Hadamard)");
    if (std::string const fv = vm["fp8-variants"].as<std::string>(); fv != "all")
      study.fp8_variants = parse_variant_sets(fv);
    study.full_rows_limit = vm["full-rows-up-to"].as<int>();
    if (auto complaint = fl::common::out_of_range(kFullRowsUpTo, study.full_rows_limit))
      throw po::error("--" + *complaint);
    auto const seed = fl::common::parse_count(fl::common::kSeed, vm["seed"].as<std::string>());
    if (!seed.ok()) throw po::error(seed.error);
    study.seed = std::uint64_t(seed.value);
    study.threads = vm["threads"].as<int>();
    if (auto complaint = fl::common::out_of_range(fl::common::kThreads, study.threads))
      throw po::error(*complaint);
    if (auto problem = fl::common::output_folder_problem(vm["out"].as<std::string>()))
      throw po::error("--out " + vm["out"].as<std::string>() + ": " + *problem);
  } catch (po::error const& e) {
    std::cerr << "fa-fp8-report: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  }
  try {
    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
    return write_report(vm, study, command_line);
  } catch (std::exception const& e) {  // a failure of the machine (disk full, ...), not of the user
    std::cerr << "fa-fp8-report: " << e.what() << "\n";
    return fl::common::kExitCheckFailed;
  }
}

namespace {

int write_report(po::variables_map const& vm, Fp8StudyOptions const& study, std::string const& command_line) {
  std::filesystem::path const out = vm["out"].as<std::string>();
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
  fl::common::write_file_atomically(out / "results.csv", csv.str());

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
  std::string const gnuplot = vm["gnuplot"].as<std::string>();
  std::string const data = fl::common::gnuplot_quote(std::filesystem::absolute(out / "results.csv").string());
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
    plots.push_back({"o_rmse_vs_n_" + std::string(name(recipe)) + ".svg",
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
    plots.push_back({"o_rmse_vs_head_dim.svg", "RMSE of O against the head dim, n = " + std::to_string(n),
                     script + "\n"});
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
        {"backward_rmse.svg", "Backward RMSE of dQ, dK, dV against n (tiled, fa3_outliers)", script + "\n"});
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
  fl::common::write_file_atomically(out / "report.md", md.str());
  std::cout << "wrote " << (out / "report.md").string() << ", results.csv and plots in " << std::fixed
            << std::setprecision(0) << total_seconds << " s\n";
  return fl::common::kExitOk;
}

}  // namespace
