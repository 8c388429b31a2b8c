// render_csv: the trace as data for plots, every figure the text rounds at full precision.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "numerics/explain/explain.hpp"

namespace fl::numerics::explain {

namespace {

// The shortest text that reads back as the same double; nan, inf and -inf as Python and gnuplot read them.
std::string number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

}  // namespace

std::string render_csv(Explanation const& x) {
  std::string out = "step,block,first_key,last_key,variant,dim,m,scale,l,output_so_far,answer\n";
  std::size_t steps = 0;
  for (Variant const& v : x.variants) steps = std::max(steps, v.trace.blocks.size());
  for (std::size_t step = 0; step < steps; ++step)
    for (Variant const& v : x.variants) {
      if (step >= v.trace.blocks.size()) continue;  // this variant visits fewer blocks
      emulator::BlockState const& b = v.trace.blocks[step];
      std::string const state = std::to_string(step) + "," + std::to_string(b.block) + "," +
                                std::to_string(b.first_key) + "," + std::to_string(b.end_key - 1) + "," +
                                v.name + ",";
      std::string const statistics = "," + number(b.m) + "," + number(b.alpha) + "," + number(b.l) + ",";
      for (std::size_t e = 0; e < b.output_so_far.size(); ++e)
        out += state + std::to_string(e) + statistics + number(b.output_so_far[e]) + "," +
               number(x.exact.at(e)) + "\n";
    }
  return out;
}

}  // namespace fl::numerics::explain
