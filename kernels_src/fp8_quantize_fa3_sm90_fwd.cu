// fa3_sm90's forward program with the FP8 quantisation kernels beside it: what an FP8 problem quantised on
// the device compiles (device/families/fp8_quantize_launches.hpp), one program so that the quantisation,
// the V transpose and the forward are one launch sequence of one module.
#include "fa3_sm90_fwd.cu"
#include "fp8_quantize.cuh"
#include "fp8_quantize_transposed_v.cuh"  // a pre-transposed V: its V^T written by the quantisation
