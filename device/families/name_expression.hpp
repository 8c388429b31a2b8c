#pragma once
// A kernel's name expression ("fa2_sm80_fwd<__nv_bfloat16, 128, 128, 32, 4, 1, 1, false, true, false>")
// from its declared template parameters (kernels_src/fa_kernel_signatures.h: the order and kind of each)
// and the values a family gives them by name. The order is never restated on the host.
#include <string>

#include "common/precision.hpp"
#include "device/config.hpp"
#include "kernels_src/fa_kernel_signatures.h"

namespace fl::device {

// `values` holds every integer and boolean parameter by its name in the kernel (a boolean: 0 or 1); the
// type parameter is `element`. Throws std::logic_error naming the parameter when one has no value: a
// family that forgot one is a programming error, caught by the families' tests.
std::string name_expression(fa::signature::Kernel const& kernel, common::Precision element,
                            Config const& values);

}  // namespace fl::device
