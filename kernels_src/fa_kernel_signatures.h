#pragma once
// The template parameters of every sm80-era kernel the host instantiates by name expression, in the
// kernel's order: the one place that order is written besides the kernel's own template head. The host
// builds its name expressions from these (device/families/name_expression.hpp: values by parameter name), and
// tests/kernels_src/kernel_signature_test.cpp fails when a kernel's template head and its entry here
// disagree (name, kind or order). Plain constexpr C++, beside the kernels it describes.
//
// Adding a kernel: its parameters here, an entry in kKernels, and the family's name_expressions passing
// a value for each parameter by name.

namespace fa::signature {

enum class Kind { type, integer, boolean };

struct Param {
  const char* name;
  Kind kind;
};

struct Kernel {
  const char* name;  // the __global__ template's name
  const char* file;  // the kernels_src file whose template head the test reads
  const Param* params;
  int count;
};

template <int N>
constexpr Kernel kernel(const char* name, const char* file, const Param (&params)[N]) {
  return {name, file, params, N};
}

constexpr Param kElement{"Element", Kind::type};
constexpr Param kHeadDim{"kHeadDim", Kind::integer};
constexpr Param kBlockM{"kBlockM", Kind::integer};
constexpr Param kBlockN{"kBlockN", Kind::integer};
constexpr Param kNWarps{"kNWarps", Kind::integer};
constexpr Param kStages{"kStages", Kind::integer};
constexpr Param kIsCausal{"Is_causal", Kind::boolean};

constexpr Param kScoreBits{"kScoreBits", Kind::integer};
constexpr Param kNaiveScoresParams[] = {kElement, kHeadDim, kNWarps, kStages, kScoreBits, kIsCausal};
constexpr Param kNaiveSoftmaxParams[] = {kElement, {"kThreads", Kind::integer}, kScoreBits};
constexpr Param kNaiveOutputParams[] = {kElement, kHeadDim, kNWarps, kStages, kIsCausal};
constexpr Param kFa1FwdStepParams[] = {kElement, kHeadDim, kBlockM, kBlockN, {"kChunkN", Kind::integer},
                                       kNWarps,  kIsCausal};
constexpr Param kFa1BwdStepParams[] = {kElement, kHeadDim, kBlockM, kBlockN, kNWarps, kIsCausal};
constexpr Param kBwdPreprocessParams[] = {kElement, kHeadDim, kNWarps, {"kClearDqAccum", Kind::boolean}};
constexpr Param kBwdDqConvertParams[] = {kElement, kHeadDim};
constexpr Param kFa2Sm80FwdParams[] = {kElement,
                                       kHeadDim,
                                       kBlockM,
                                       kBlockN,
                                       kNWarps,
                                       kStages,
                                       {"kWarpsN", Kind::integer},
                                       {"kQInRegs", Kind::boolean},
                                       {"kEpilogueSmem", Kind::boolean},
                                       kIsCausal};
constexpr Param kFa2Sm80DkdvParams[] = {
    kElement, kHeadDim, kBlockM, kBlockN, kNWarps, kStages, {"kDqAtomic", Kind::integer}, kIsCausal};
constexpr Param kFa2Sm80DqParams[] = {kElement, kHeadDim, kBlockM, kBlockN, kNWarps, kIsCausal};
constexpr Param kFa2Fp8FwdParams[] = {kElement,
                                      kHeadDim,
                                      kBlockM,
                                      kBlockN,
                                      kNWarps,
                                      kStages,
                                      {"kQInRegs", Kind::boolean},
                                      {"kBlockDescale", Kind::boolean},
                                      kIsCausal};
constexpr Param kFlashDecodeSplitParams[] = {
    kElement, kHeadDim, kBlockM, kBlockN, kNWarps, {"kSplits", Kind::integer}, kIsCausal};
constexpr Param kFlashDecodeCombineParams[] = {kElement, kHeadDim, {"kPartials", Kind::integer}};

constexpr Kernel kNaiveScores = kernel("naive_scores", "naive.cu", kNaiveScoresParams);
constexpr Kernel kNaiveSoftmax = kernel("naive_softmax", "naive.cu", kNaiveSoftmaxParams);
constexpr Kernel kNaiveOutput = kernel("naive_output", "naive.cu", kNaiveOutputParams);
constexpr Kernel kFa1FwdStep = kernel("fa1_fwd_step", "fa1_fwd.cu", kFa1FwdStepParams);
constexpr Kernel kFa1BwdStep = kernel("fa1_bwd_step", "fa1_bwd.cu", kFa1BwdStepParams);
constexpr Kernel kBwdPreprocess = kernel("fa_bwd_preprocess", "fa_backward.cuh", kBwdPreprocessParams);
constexpr Kernel kBwdDqConvert = kernel("fa_bwd_dq_convert", "fa_backward.cuh", kBwdDqConvertParams);
constexpr Kernel kFa2Sm80Fwd = kernel("fa2_sm80_fwd", "fa2_sm80_fwd.cu", kFa2Sm80FwdParams);
constexpr Kernel kFa2Sm80Dkdv = kernel("fa2_sm80_bwd_dkdv", "fa2_sm80_bwd.cu", kFa2Sm80DkdvParams);
constexpr Kernel kFa2Sm80Dq = kernel("fa2_sm80_bwd_dq", "fa2_sm80_bwd_dq.cuh", kFa2Sm80DqParams);
constexpr Kernel kFa2Fp8Fwd = kernel("fa2_fp8_fwd", "fa2_fp8_fwd.cu", kFa2Fp8FwdParams);
constexpr Kernel kFlashDecodeSplit =
    kernel("flash_decode_split", "flash_decode_fwd.cu", kFlashDecodeSplitParams);
constexpr Kernel kFlashDecodeCombine =
    kernel("flash_decode_combine", "flash_decode_fwd.cu", kFlashDecodeCombineParams);

// Every kernel above, for the test that reads their template heads.
constexpr Kernel kKernels[] = {kNaiveScores,       kNaiveSoftmax,  kNaiveOutput,  kFa1FwdStep,
                               kFa1BwdStep,        kBwdPreprocess, kBwdDqConvert, kFa2Sm80Fwd,
                               kFa2Sm80Dkdv,       kFa2Sm80Dq,     kFa2Fp8Fwd,    kFlashDecodeSplit,
                               kFlashDecodeCombine};

}  // namespace fa::signature
