// fa-tune's outputs: the table on stdout, the JSON, and the measurement TSV (tune_command.hpp).
#include <algorithm>
#include <cstdio>

#include "db/tuning_store.hpp"
#include "tuner/measure/early_stop.hpp"
#include "tuner/report/table.hpp"
#include "tuner/tune/tune_command.hpp"
#include "tuner/tune/tuning_protocol.hpp"

namespace fl::tuner {

namespace {

std::string quoted(std::string const& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    else if (c == '\n' || c == '\t')
      c = ' ';
    out += c;
  }
  return out + "\"";
}

std::string one_field(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string optional_fixed(std::optional<double> value, int digits) {
  return value ? format_fixed(*value, digits) : "";
}

// Where the verification time went, when the evaluator measured its parts (the GPU's; a replay's rows do
// not have them): " (its sets a s, small problem b s, timed problem's run c s, its verdict d s)".
std::string verification_parts(TuneRow const& r) {
  if (r.verify_sets_s + r.verify_small_s + r.verify_timed_run_s <= 0.0) return "";
  double const verdict_s =
      std::max(0.0, r.verify_s - r.verify_sets_s - r.verify_small_s - r.verify_timed_run_s);
  return " (building its sets " + format_fixed(r.verify_sets_s, 1) + " s, small problem " +
         format_fixed(r.verify_small_s, 1) + " s, timed problem's run " +
         format_fixed(r.verify_timed_run_s, 1) + " s, its verdict " + format_fixed(verdict_s, 1) + " s)";
}

// Measured candidates per second of this problem's wall time (issue 14's throughput figure).
std::string candidates_per_second(TuneRow const& r) {
  if (r.evaluated == 0 || !(r.wall_s > 0.0)) return "nothing measured";
  return format_fixed(double(r.evaluated) / r.wall_s, 2) + " candidates/s";
}

std::string driver_text(db::GpuKey const& gpu) {
  return gpu.driver_version +
         (gpu.cuda_driver_api > 0 && gpu.driver_version != std::to_string(gpu.cuda_driver_api)
              ? " (CUDA driver API " + std::to_string(gpu.cuda_driver_api) + ")"
              : "");
}

}  // namespace

namespace {

std::string best_cell(TuneRow const& r) {
  if (!r.best_config.empty()) return r.best_config;
  return r.end == SearchEnd::not_reached ? "(not reached)" : "(none passed)";
}

std::string versus_default(TuneRow const& r) {
  if (r.default_tflops > 0) return format_fixed(r.best_tflops / r.default_tflops, 2) + "x";
  return "default " + r.default_verdict;
}

// "; backward forwards: 2 computed ahead, 1 kept in memory; forward sets: 9 built ahead" (empty when
// everything was computed when needed).
std::string forward_sources_note(ForwardSources const& f) {
  std::string parts;
  auto add = [&](std::size_t n, char const* what) {
    if (n) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(f.ahead, "computed ahead");
  add(f.kept, "kept in memory");
  add(f.stored, "read from the forward store");
  std::string note = parts.empty() ? "" : "; backward forwards: " + parts;
  if (f.sets_ahead) note += "; forward sets: " + std::to_string(f.sets_ahead) + " built ahead";
  return note;
}

std::string margin_text(ProblemWinner const& w) {
  if (w.runner_up_family.empty()) return w.families_tried == 1 ? "only family that ran" : "";
  return format_fixed(w.tflops / w.runner_up_tflops, 2) + "x over " + w.runner_up_family;
}

// How every candidate was timed (tuning_protocol.hpp), said once above the table: a kernel timed after a
// few warm-up runs reads faster than the same kernel settled, so a reader comparing TFLOP/s needs it.
std::string timing_note() {
  return "timed: " + std::to_string(kTuningWarmupRuns) + " warm-up runs, " +
         (kTuningSettleMs > 0 ? std::to_string(kTuningSettleMs) + " ms settled" : std::string("no settle")) +
         ", then the median of " + std::to_string(kTuningTimedRuns) + " runs a candidate (stored with each)";
}

}  // namespace

std::string render_tuning(TuningReport const& report) {
  TextTable table({"family", "problem", "best config", "ms", "TFLOP/s", "vs default", "searched", "ended",
                   "measured", "resumed", "rejected"});
  for (auto const& r : report.rows)
    table.add_row({r.family, r.problem, best_cell(r), r.best_config.empty() ? "" : format_fixed(r.best_ms, 3),
                   r.best_config.empty() ? "" : format_fixed(r.best_tflops, 1), versus_default(r),
                   std::to_string(r.evaluated + r.resumed) + "/" + std::to_string(r.space_size),
                   std::string(name(r.end)), std::to_string(r.evaluated), std::to_string(r.resumed),
                   std::to_string(r.rejected)});
  std::string out = "GPU " + report.gpu.name + ", driver " + driver_text(report.gpu) + ", NVRTC " +
                    report.nvrtc_version + ", strategy " + report.strategy + "\n" + timing_note() + "\n";
  if (!report.split_note.empty()) out += report.split_note + "\n";
  out += table.render();
  // The best family per problem, when more than one family was tried anywhere.
  bool several = false;
  for (auto const& w : report.winners) several = several || w.families_tried > 1;
  if (several) {
    TextTable winners({"problem", "best family", "config", "TFLOP/s", "margin"});
    for (auto const& w : report.winners)
      winners.add_row({w.problem,
                       w.family.empty() ? (w.reached ? "(none passed)" : "(not reached)") : w.family,
                       w.config, w.family.empty() ? "" : format_fixed(w.tflops, 1), margin_text(w)});
    out += "best family per problem:\n" + winners.render();
  }
  for (auto const& r : report.rows) {
    if (r.end == SearchEnd::not_reached) continue;
    if (r.default_verdict != "ok")
      out += r.family + " " + r.problem + ": default " + r.default_config + " " + r.default_verdict +
             (r.default_diagnosis.empty() ? "" : ": " + r.default_diagnosis) + "\n";
    for (auto const& fault : r.faults)
      out += r.family + " " + r.problem + ": the GPU context was lost after " + fault +
             "; stored as failed, context restored, tuning went on\n";
    if (report.from_store) continue;  // each --gpus worker printed its own times
    // Compile and timing separately (issue 6 item 9): the GPU thread's wall time split, and the NVRTC time
    // the workers spent, which overlaps the GPU work.
    out += r.family + " " + r.problem + ": " + format_fixed(r.wall_s, 1) + " s wall: waited for compiles " +
           format_fixed(r.compile_wait_s, 1) + " s, verification " + format_fixed(r.verify_s, 1) + " s" +
           verification_parts(r) + ", timing " + format_fixed(r.timing_s, 1) + " s; NVRTC " +
           format_fixed(r.compile_cpu_s, 1) + " s on " + std::to_string(report.compile_workers) +
           " workers; " + candidates_per_second(r) +
           (r.timing_cut > 0 ? "; timing cut after " + std::to_string(kProbeRuns) + " runs for " +
                                   std::to_string(r.timing_cut) + " clearly slower than the best so far"
                             : "") +
           "\n";
    for (auto const& n : r.noise) out += render_noise(r.family + " " + r.problem, n);
  }
  if (!report.cross_check.empty()) out += report.cross_check + "\n";
  if (!report.from_store)
    out += "verification inputs and float64 references: " + format_fixed(report.reference_s, 1) +
           " s (once per problem, shared by every candidate)" + forward_sources_note(report.forwards) + "\n";
  if (report.context_lost)
    out += "fa-tune: the GPU context was lost after " + *report.context_lost +
           " and could not be restored; that candidate is stored as failed, nothing after it was measured; "
           "rerun to resume\n";
  if (report.stop_signal)
    out +=
        "fa-tune: stopped by signal " + std::to_string(report.stop_signal) +
        " after the candidate in flight (stored); the table is what was measured so far; rerun to resume\n";
  return out;
}

std::string tuning_json(TuningReport const& report, std::string const& gpu_identity) {
  std::string out =
      "{\n  \"gpu\": " + quoted(gpu_identity) + ",\n  \"gpu_name\": " + quoted(report.gpu.name) +
      ",\n  \"driver\": " + quoted(report.gpu.driver_version) +
      ",\n  \"cuda_driver_api\": " + std::to_string(report.gpu.cuda_driver_api) +
      ",\n  \"nvrtc\": " + quoted(report.nvrtc_version) + ",\n  \"date\": " + quoted(db::utc_timestamp()) +
      ",\n  \"strategy\": " + quoted(report.strategy) +
      ",\n  \"timing\": {\"warmup_runs\": " + std::to_string(kTuningWarmupRuns) +
      ", \"settle_ms\": " + std::to_string(kTuningSettleMs) +
      ", \"timed_runs\": " + std::to_string(kTuningTimedRuns) + "}" +
      ",\n  \"split\": " + quoted(report.split_note) +
      ",\n  \"compile_workers\": " + std::to_string(report.compile_workers) +
      ",\n  \"reference_s\": " + format_fixed(report.reference_s, 3) +
      ",\n  \"forwards\": {\"ahead\": " + std::to_string(report.forwards.ahead) +
      ", \"kept\": " + std::to_string(report.forwards.kept) +
      ", \"stored\": " + std::to_string(report.forwards.stored) + "}" +
      ",\n  \"sets_ahead\": " + std::to_string(report.forwards.sets_ahead) +
      ",\n  \"context_lost\": " + (report.context_lost ? quoted(*report.context_lost) : "null") +
      ",\n  \"stop_signal\": " + std::to_string(report.stop_signal) +
      ",\n  \"cross_check\": " + quoted(report.cross_check) + ",\n  \"results\": [\n";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    auto const& r = report.rows[i];
    std::string noise, faults;
    for (std::size_t k = 0; k < r.noise.size(); ++k) noise += (k ? ", " : "") + noise_json(r.noise[k]);
    for (std::size_t k = 0; k < r.faults.size(); ++k) faults += (k ? ", " : "") + quoted(r.faults[k]);
    out += "    {\"family\": " + quoted(r.family) + ", \"problem\": " + quoted(r.problem) +
           ", \"best_config\": " + (r.best_config.empty() ? "null" : quoted(r.best_config)) +
           ", \"median_ms\": " + format_fixed(r.best_ms, 5) +
           ", \"tflops\": " + format_fixed(r.best_tflops, 2) + ", \"vs_default\": " +
           (r.default_tflops > 0 ? format_fixed(r.best_tflops / r.default_tflops, 4) : std::string("null")) +
           ", \"default_config\": " + quoted(r.default_config) +
           ", \"default_tflops\": " + format_fixed(r.default_tflops, 2) +
           ", \"default_verdict\": " + quoted(r.default_verdict) +
           ", \"default_diagnosis\": " + quoted(r.default_diagnosis) +
           ", \"searched\": " + std::to_string(r.evaluated + r.resumed) +
           ", \"space_size\": " + std::to_string(r.space_size) +
           ", \"ended\": " + quoted(std::string(name(r.end))) +
           ", \"measured\": " + std::to_string(r.evaluated) + ", \"resumed\": " + std::to_string(r.resumed) +
           ", \"rejected\": " + std::to_string(r.rejected) + ", \"faults\": [" + faults + "]" +
           ", \"wall_s\": " + format_fixed(r.wall_s, 3) +
           ", \"compile_wait_s\": " + format_fixed(r.compile_wait_s, 3) +
           ", \"verify_s\": " + format_fixed(r.verify_s, 3) +
           ", \"verify_sets_s\": " + format_fixed(r.verify_sets_s, 3) +
           ", \"verify_small_s\": " + format_fixed(r.verify_small_s, 3) +
           ", \"verify_timed_run_s\": " + format_fixed(r.verify_timed_run_s, 3) +
           ", \"timing_s\": " + format_fixed(r.timing_s, 3) +
           ", \"compile_cpu_s\": " + format_fixed(r.compile_cpu_s, 3) +
           ", \"timing_cut\": " + std::to_string(r.timing_cut) + ", \"noise\": [" + noise + "]}" +
           (i + 1 < report.rows.size() ? "," : "") + "\n";
  }
  out += "  ],\n  \"best_per_problem\": [\n";
  for (std::size_t i = 0; i < report.winners.size(); ++i) {
    auto const& w = report.winners[i];
    out += "    {\"problem\": " + quoted(w.problem) + ", \"reached\": " + (w.reached ? "true" : "false") +
           ", \"family\": " + (w.family.empty() ? "null" : quoted(w.family)) +
           ", \"config\": " + (w.family.empty() ? "null" : quoted(w.config)) +
           ", \"tflops\": " + format_fixed(w.tflops, 2) + ", \"median_ms\": " + format_fixed(w.median_ms, 5) +
           ", \"families_tried\": " + std::to_string(w.families_tried) +
           ", \"runner_up_family\": " + (w.runner_up_family.empty() ? "null" : quoted(w.runner_up_family)) +
           ", \"runner_up_tflops\": " + format_fixed(w.runner_up_tflops, 2) + ", \"margin\": " +
           (w.runner_up_tflops > 0 ? format_fixed(w.tflops / w.runner_up_tflops, 4) : std::string("null")) +
           "}" + (i + 1 < report.winners.size() ? "," : "") + "\n";
  }
  return out + "  ]\n}\n";
}

std::string measurements_tsv(TuningReport const& report, std::string const& command) {
  std::string out = "# fa-tune measurements (run 1 of each problem, evaluation order)\n# GPU " +
                    report.gpu.name + " cc" + std::to_string(report.gpu.cc_major) + "." +
                    std::to_string(report.gpu.cc_minor) + " " + std::to_string(report.gpu.sm_count) +
                    " SMs, driver " + driver_text(report.gpu) + ", NVRTC " + report.nvrtc_version + ", " +
                    db::utc_timestamp() + "\n# command: " + one_field(command) +
                    "\nfamily\tproblem\tconfig\tverdict\tmedian_ms\tp20_ms\tp80_ms\ttflops\tdiagnosis"
                    "\tcompile_wait_ms\tcompile_ms\tverify_ms\ttiming_ms\n";
  for (auto const& r : report.rows)
    for (std::size_t i = 0; i < r.candidates.size(); ++i) {
      auto const& [config, m] = r.candidates[i];
      auto const cost = i < r.costs.size() ? r.costs[i] : CandidateCost{};
      out += r.family + "\t" + r.problem + "\t" + config + "\t" + m.verdict + "\t" +
             optional_fixed(m.median_ms, 5) + "\t" + optional_fixed(m.p20_ms, 5) + "\t" +
             optional_fixed(m.p80_ms, 5) + "\t" + optional_fixed(m.tflops, 2) + "\t" +
             one_field(m.diagnosis) + "\t" + format_fixed(cost.compile_wait_ms, 1) + "\t" +
             format_fixed(cost.compile_ms, 1) + "\t" + format_fixed(cost.verify_ms, 1) + "\t" +
             format_fixed(cost.timing_ms, 1) + "\n";
    }
  return out;
}

}  // namespace fl::tuner
