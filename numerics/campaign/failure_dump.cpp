#include "numerics/campaign/failure_dump.hpp"

#include <cstdio>

#include "common/atomic_file.hpp"
#include "common/npy.hpp"
#include "numerics/campaign/campaign_report.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::mutants {

namespace {

// "near_dtype_max, non-causal, seed 1" -> "near_dtype_max-non-causal-seed1"
std::string folder_name_of(std::string const& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char const c = text[i];
    if (c == ',') {
      out += '-';
    } else if (c != ' ') {
      out += c;
    }
  }
  return out;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The values as the implementation consumed them: fp16/bf16 rounded to the dtype (the input families already
// are; a value from elsewhere is rounded as an upload would round it). FP8 claims consume bf16 inputs that
// the kernel quantises itself, so they are written as given.
std::vector<double> as_consumed(std::vector<double> const& values, common::Precision precision) {
  if (precision != common::Precision::fp16 && precision != common::Precision::bf16) return values;
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = round_to(precision, static_cast<float>(values[i]));
  return out;
}

struct Shapes {
  std::vector<std::size_t> q, kv, lse;
};

Shapes shapes_of(common::AttentionShape const& s) {
  auto const b = std::size_t(s.batch), d = std::size_t(s.head_dim);
  return {{b, std::size_t(s.heads_q), std::size_t(s.seqlen_q), d},
          {b, std::size_t(s.heads_kv), std::size_t(s.seqlen_k), d},
          {b, std::size_t(s.heads_q), std::size_t(s.seqlen_q)}};
}

}  // namespace

std::filesystem::path failure_folder(std::filesystem::path const& dir, DumpContext const& context,
                                     FailureRecord const& record) {
  std::string const leaf =
      record.mutant ? std::string(info(*record.mutant).name) : "correct-" + folder_name_of(record.input_case);
  return dir / (context.target + "-" + context.family) / std::string(name(record.precision)) / leaf;
}

std::string fa_check_command(FailureRecord const& record, DumpContext const& context,
                             std::string const& fa_check) {
  AttentionOutputs const& out = *record.observed;
  std::string cmd = fa_check + " --q q.npy --k k.npy --v v.npy --o o.npy";
  if (!out.lse.empty()) cmd += " --lse lse.npy";
  if (out.has_backward() && record.inputs->has_backward())
    cmd += " --do do.npy --dq dq.npy --dk dk.npy --dv dv.npy";
  cmd += " --dtype " + std::string(name(record.precision));
  if (record.causal) cmd += " --causal";
  cmd += " --scale " + number(record.inputs->shape.scale());
  for (int n : context.extra_block_n) cmd += " --block-n " + std::to_string(n);
  cmd += " --json check.json";
  return cmd;
}

std::filesystem::path write_failure(std::filesystem::path const& dir, DumpContext const& context,
                                    FailureRecord const& record) {
  std::filesystem::path const folder = failure_folder(dir, context, record);
  std::filesystem::create_directories(folder);
  AttentionInputs const& in = *record.inputs;
  AttentionOutputs const& out = *record.observed;
  common::AttentionShape const& s = in.shape;
  Shapes const shape = shapes_of(s);
  common::write_npy(folder / "q.npy", shape.q, as_consumed(in.q, record.precision));
  common::write_npy(folder / "k.npy", shape.kv, as_consumed(in.k, record.precision));
  common::write_npy(folder / "v.npy", shape.kv, as_consumed(in.v, record.precision));
  common::write_npy(folder / "o.npy", shape.q, out.o);
  if (!out.lse.empty()) common::write_npy(folder / "lse.npy", shape.lse, out.lse);
  bool const backward = out.has_backward() && in.has_backward();
  if (backward) {
    common::write_npy(folder / "do.npy", shape.q, as_consumed(in.d_o, record.precision));
    common::write_npy(folder / "dq.npy", shape.q, out.dq);
    common::write_npy(folder / "dk.npy", shape.kv, out.dk);
    common::write_npy(folder / "dv.npy", shape.kv, out.dv);
  }
  std::string const command = fa_check_command(record, context);
  std::string json =
      "{\"target\": " + json_string(context.target) + ", \"family\": " + json_string(context.family) +
      ",\n \"mutant\": " + (record.mutant ? json_string(std::string(info(*record.mutant).name)) : "null") +
      ", \"switch\": " +
      (record.mutant ? json_string(std::string(info(*record.mutant).switch_name)) : "null") +
      ",\n \"input_case\": " + json_string(record.input_case) +
      ", \"dtype\": " + json_string(std::string(name(record.precision))) +
      ",\n \"shape\": {\"batch\": " + std::to_string(s.batch) +
      ", \"heads_q\": " + std::to_string(s.heads_q) + ", \"heads_kv\": " + std::to_string(s.heads_kv) +
      ", \"seqlen_q\": " + std::to_string(s.seqlen_q) + ", \"seqlen_k\": " + std::to_string(s.seqlen_k) +
      ", \"head_dim\": " + std::to_string(s.head_dim) + "}" +
      ",\n \"causal\": " + (record.causal ? "true" : "false") + ", \"scale\": " + number(s.scale()) +
      ", \"backward\": " + (backward ? "true" : "false") +
      ",\n \"kernel_config\": " + (record.config_json.empty() ? "{}" : record.config_json) +
      ",\n \"verdict\": " + json_string(record.verdict) + ",\n \"fa_check\": " + json_string(command) + "}\n";
  common::write_file_atomically(folder / "case.json", json);
  common::write_file_atomically(
      folder / "fa-check.sh",
      "#!/bin/sh\n# Replays the check and the diagnosis of this case; FA_CHECK overrides the "
      "program.\ncd \"$(dirname \"$0\")\" && exec " +
          fa_check_command(record, context, "\"${FA_CHECK:-fa-check}\"") + "\n");
  std::filesystem::permissions(folder / "fa-check.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  return folder;
}

FailureSink failure_dump_sink(std::filesystem::path dir, DumpContext context) {
  return [dir = std::move(dir), context = std::move(context)](FailureRecord const& record) {
    write_failure(dir, context, record);
  };
}

}  // namespace fl::numerics::mutants
