#include "common/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace fl::common {

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ << ",";
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_ << "{";
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_ << "}";
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  separate();
  out_ << "[";
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  out_ << "]";
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view k) {
  separate();
  write_string(k);
  out_ << ":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  separate();
  write_string(s);
  return *this;
}

void JsonWriter::write_string(std::string_view s) {
  out_ << '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\t':
        out_ << "\\t";
        break;
      case '\r':
        out_ << "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out_ << buf;
        } else {
          out_ << c;
        }
    }
  }
  out_ << '"';
}

JsonWriter& JsonWriter::value(double x) {
  if (std::isnan(x)) return value(std::string_view("nan"));
  if (std::isinf(x)) return value(std::string_view(x > 0 ? "inf" : "-inf"));
  separate();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  out_ << buf;
  return *this;
}
JsonWriter& JsonWriter::value(bool b) {
  separate();
  out_ << (b ? "true" : "false");
  return *this;
}
JsonWriter& JsonWriter::null_value() {
  separate();
  out_ << "null";
  return *this;
}
JsonWriter& JsonWriter::value(std::size_t n) {
  separate();
  out_ << n;
  return *this;
}
JsonWriter& JsonWriter::value(int n) {
  separate();
  out_ << n;
  return *this;
}

}  // namespace fl::common
