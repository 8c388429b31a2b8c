#pragma once
// The spellings both halves of fa-check's report share (the summary and JSON in check_report.cpp, the
// --report folder in check_report_folder.cpp), so the two say a shape or a number the same way.
#include <string>

#include "common/attention_shape.hpp"

namespace fl::numerics::report_format {

// "B=1 H_q=2 H_kv=2 N_q=64 N_k=64 D=64 scale=0.125"
std::string shape_line(common::AttentionShape const& s);
std::string upper(std::string text);
// x with `digits` significant digits (std::setprecision's default notation).
std::string sci(double x, int digits = 3);

}  // namespace fl::numerics::report_format
