#pragma once
// A small streaming JSON writer for reports: objects, arrays, strings with escapes, numbers with 17
// significant digits. JSON has no infinity or NaN: they are written as the strings "inf", "-inf", "nan".
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fl::common {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(char const* s) { return value(std::string_view(s)); }
  JsonWriter& value(double x);
  JsonWriter& value(bool b);
  JsonWriter& value(std::size_t n);
  JsonWriter& value(int n);
  JsonWriter& null_value();
  template <class T>
  JsonWriter& field(std::string_view k, T const& v) {
    key(k);
    return value(v);
  }
  std::string str() const { return out_.str(); }

 private:
  void separate();
  void write_string(std::string_view s);
  std::ostringstream out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace fl::common
