#include "numerics/campaign/campaign_report.hpp"

#include "common/stop_signals.hpp"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace fl::numerics::mutants {

namespace {

constexpr int kIdWidth = 22;
constexpr int kDtypeWidth = 10;
constexpr int kKindWidth = 9;
constexpr int kStatusWidth = 15;
constexpr int kInputWidth = 40;

std::string join(std::vector<std::string> const& items) {
  std::string out;
  for (auto const& s : items) out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "-" : out;
}

std::string naming(MutantOutcome const& o) {
  if (o.status != MutantStatus::killed) return "";
  return o.named_correctly ? "yes" : "NO";
}

}  // namespace

std::string json_string(std::string const& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string campaign_table(CampaignResult const& r) {
  std::ostringstream out;
  out << "target " << r.target << ", family " << r.family << "\n";
  out << std::left << std::setw(kDtypeWidth) << "dtype" << std::setw(kIdWidth) << "mutant"
      << std::setw(kKindWidth) << "kind" << std::setw(kStatusWidth) << "status" << std::setw(kInputWidth)
      << "killed by"
      << "named  diagnosis\n";
  for (auto const& o : r.outcomes) {
    MutantInfo const& m = info(o.id);
    out << std::left << std::setw(kDtypeWidth) << name(o.precision) << std::setw(kIdWidth) << m.name
        << std::setw(kKindWidth) << kind_name(m.kind) << std::setw(kStatusWidth) << status_name(o.status);
    if (o.status == MutantStatus::killed) {
      out << std::setw(kInputWidth) << o.killed_by->describe() << std::setw(7) << naming(o)
          << join(o.diagnosis);
    } else if (!o.reason.empty()) {
      out << o.reason;
    }
    out << "\n";
  }
  for (auto const& b : r.baseline) {
    out << "baseline " << name(b.precision) << ": correct " << r.family << " passes "
        << b.inputs_checked - b.failures.size() << "/" << b.inputs_checked << " inputs\n";
    for (auto const& f : b.failures) out << "  FALSE POSITIVE " << f << "\n";
  }
  out << std::fixed << std::setprecision(1) << "mutation score " << r.score() << "% (" << r.detected()
      << " detected / " << r.valid() << " valid; " << r.count(MutantStatus::equivalent) << " equivalent, "
      << r.count(MutantStatus::not_applicable) << " not applicable, " << r.misnamed() << " named wrongly)\n";
  if (r.interrupted())
    out << "INTERRUPTED by " << common::stop_signal_name(r.stop_signal) << ": " << r.outcomes.size() << " of "
        << r.planned_rows << " mutant rows run; the others were not run and are not in the score\n";
  return out.str();
}

std::string campaign_json(CampaignResult const& r) {
  std::ostringstream out;
  out << "{\"target\": " << json_string(r.target) << ", \"family\": " << json_string(r.family)
      << ",\n \"baseline\": [";
  for (std::size_t i = 0; i < r.baseline.size(); ++i) {
    auto const& b = r.baseline[i];
    out << (i ? ", " : "") << "{\"dtype\": " << json_string(std::string(name(b.precision)))
        << ", \"inputs_checked\": " << b.inputs_checked << ", \"false_positives\": [";
    for (std::size_t f = 0; f < b.failures.size(); ++f) out << (f ? ", " : "") << json_string(b.failures[f]);
    out << "]}";
  }
  out << "],\n \"mutants\": [";
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    auto const& o = r.outcomes[i];
    MutantInfo const& m = info(o.id);
    out << (i ? ",\n  " : "\n  ") << "{\"id\": " << json_string(std::string(m.name))
        << ", \"switch\": " << json_string(std::string(m.switch_name))
        << ", \"kind\": " << json_string(std::string(kind_name(m.kind)))
        << ", \"dtype\": " << json_string(std::string(name(o.precision)))
        << ", \"status\": " << json_string(std::string(status_name(o.status)))
        << ", \"killed_by\": " << (o.killed_by ? json_string(o.killed_by->describe()) : "null")
        << ", \"verdict\": " << json_string(o.verdict) << ", \"diagnosis\": [";
    for (std::size_t d = 0; d < o.diagnosis.size(); ++d)
      out << (d ? ", " : "") << json_string(o.diagnosis[d]);
    out << "], \"named_correctly\": " << (o.named_correctly ? "true" : "false")
        << ", \"evidence\": " << json_string(o.evidence) << ", \"reason\": " << json_string(o.reason) << "}";
  }
  out << "],\n \"detected\": " << r.detected() << ", \"valid\": " << r.valid()
      << ", \"equivalent\": " << r.count(MutantStatus::equivalent)
      << ", \"not_applicable\": " << r.count(MutantStatus::not_applicable)
      << ", \"misnamed\": " << r.misnamed() << ", \"score\": " << r.score()
      << ", \"rows_run\": " << r.outcomes.size() << ", \"rows_planned\": " << r.planned_rows
      << ", \"interrupted\": "
      << (r.interrupted() ? json_string(common::stop_signal_name(r.stop_signal)) : std::string("null"))
      << ", \"ok\": " << (r.ok() ? "true" : "false") << "}";
  return out.str();
}

}  // namespace fl::numerics::mutants
