#include "device/families/name_expression.hpp"

#include <stdexcept>

#include "device/family.hpp"

namespace fl::device {

std::string name_expression(fa::signature::Kernel const& kernel, common::Precision element,
                            Config const& values) {
  std::string out = std::string(kernel.name) + "<";
  for (int i = 0; i < kernel.count; ++i) {
    auto const& param = kernel.params[i];
    if (i > 0) out += ", ";
    if (param.kind == fa::signature::Kind::type) {
      out += element_type_name(element);
      continue;
    }
    auto const it = values.find(param.name);
    if (it == values.end())
      throw std::logic_error(std::string(kernel.name) + ": no value for template parameter " + param.name);
    if (param.kind == fa::signature::Kind::boolean)
      out += it->second != 0 ? "true" : "false";
    else
      out += std::to_string(it->second);
  }
  return out + ">";
}

}  // namespace fl::device
