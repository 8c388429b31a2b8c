#!/usr/bin/env python3
"""Writes kernels_src/fa_wgmma_ops*.cuh: one inline-PTX wrapper per wgmma shape the families use.

wgmma names every accumulator register in its operand list (N/2 floats per thread for m64nN), so each N
is its own asm statement; the toolkit's headers do not wrap wgmma. Generated rather than written by hand
so that every shape is spelled the same way. One header per operand kind and shape role (PARTS below),
each under 300 lines; fa_wgmma_ops.cuh includes them all. Run from the repository root:
    python3 kernels_src/tools/gen_wgmma_ops.py            # (re)writes the headers
    python3 kernels_src/tools/gen_wgmma_ops.py --check    # names each committed header that differs
tests/kernels_src checks that the committed headers equal this script's output.
"""
import os
import sys

# (C++ element type, PTX type, k per instruction). k = 32 bytes of each operand row.
ELEMENTS = [
    ("__nv_bfloat16", "bf16", 16),
    ("__half", "f16", 16),
    ("__nv_fp8_e4m3", "e4m3", 32),
    ("__nv_fp8_e5m2", "e5m2", 32),
]
# N of S = Q K^T: the key block, every multiple of 16 from 64 to 256 (the tuner's kBlockN axis).
SS_N = list(range(64, 257, 16))
# N of O += P V: the head dim (and the backward's dV += P^T dO, dK += dS^T Q per head-dim slice).
RS_N = [64, 128, 256]
# N of the backward's dQ = dS K (both operands read transposed, 16-bit types only): 64-column items.
SS_TT_N = [64]


def accumulators(n):
    regs = n // 2
    names = ", ".join(f"%{i}" for i in range(regs))
    operands = ", ".join(f'"+f"(d[{i // 4}][{i % 4}])' for i in range(regs))
    return regs, "{" + names + "}", operands


def emit_ss(ctype, ptype, k, n):
    regs, d_list, _ = accumulators(n)
    a, b = regs, regs + 1
    trans = ", 0, 0" if k == 16 else ""
    out = ", ".join(f'"=f"(d[{i // 4}][{i % 4}])' for i in range(regs))
    inout = ", ".join(f'"+f"(d[{i // 4}][{i % 4}])' for i in range(regs))
    return f"""  // A (64 x {k}) and B ({n} x {k}) both from shared memory, both K-major. \
kAccumulate = 0 overwrites d
  // (the first k-step: d is only written, so its old values are dead before the product), 1 adds to it.
  template <int kAccumulate>
  __device__ __forceinline__ static void ss(float (&d)[{n // 8}][4], unsigned long long desc_a,
                                            unsigned long long desc_b) {{
    if constexpr (kAccumulate) {{
      asm volatile(
          "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n"
          "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {d_list}, %{a}, %{b}, \
p, 1, 1{trans};\\n}}\\n"
          : {inout}
          : "l"(desc_a), "l"(desc_b), "n"(1));
    }} else {{
      asm volatile(
          "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n"
          "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {d_list}, %{a}, %{b}, \
p, 1, 1{trans};\\n}}\\n"
          : {out}
          : "l"(desc_a), "l"(desc_b), "n"(0));
    }}
  }}
"""


def emit_ss_tt(ctype, ptype, k, n):
    regs, d_list, _ = accumulators(n)
    a, b = regs, regs + 1
    out = ", ".join(f'"=f"(d[{i // 4}][{i % 4}])' for i in range(regs))
    inout = ", ".join(f'"+f"(d[{i // 4}][{i % 4}])' for i in range(regs))
    return f"""  // A (64 x {k}) M-major and B ({k} x {n}) N-major, both from shared memory \
(imm-trans-a = imm-trans-b = 1):
  // dQ = dS K with dS read from its key-major dS^T tile and K as TMA stored it. kAccumulate as in ss.
  template <int kAccumulate>
  __device__ __forceinline__ static void ss_tt(float (&d)[{n // 8}][4], unsigned long long desc_a,
                                               unsigned long long desc_b) {{
    if constexpr (kAccumulate) {{
      asm volatile(
          "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n"
          "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {d_list}, %{a}, %{b}, \
p, 1, 1, 1, 1;\\n}}\\n"
          : {inout}
          : "l"(desc_a), "l"(desc_b), "n"(1));
    }} else {{
      asm volatile(
          "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n"
          "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {d_list}, %{a}, %{b}, \
p, 1, 1, 1, 1;\\n}}\\n"
          : {out}
          : "l"(desc_a), "l"(desc_b), "n"(0));
    }}
  }}
"""


def emit_rs(ctype, ptype, k, n):
    regs, d_list, d_ops = accumulators(n)
    a0 = regs
    b, sd = regs + 4, regs + 5
    trans = "" if k == 32 else f", %{regs + 6}"
    trans_op = "" if k == 32 else ', "n"(kTransB)'
    tmpl = "template <int kTransB>\n  " if k == 16 else ""
    return f"""  // A (64 x {k}) from registers (each warp's 16 rows, mma.sync's A-fragment order), \
B from shared memory.
  {tmpl}__device__ __forceinline__ static void rs(float (&d)[{n // 8}][4], const unsigned (&a)[4],
                                                 unsigned long long desc_b, int scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{sd}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {d_list}, \
{{%{a0}, %{a0 + 1}, %{a0 + 2}, %{a0 + 3}}}, %{b}, p, 1, 1{trans};\\n}}\\n"
        : {d_ops}
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d){trans_op});
  }}
"""


SHARED_N = [n for n in RS_N if n in SS_N]                # every product: 64, 128, 256
KEY_BLOCK_N = [n for n in SS_N if n not in RS_N]          # S = Q K^T only: 80 ... 240 but 128
INCLUDES = {"bf16": "cuda_bf16.h", "f16": "cuda_fp16.h", "e4m3": "cuda_fp8.h", "e5m2": "cuda_fp8.h"}

# (file, PTX types, shapes, what the file holds). N = 64, 128, 256 are the head dims, so every product uses
# them (S = Q K^T at those key blocks, O += P V, the backward's S^T, dP^T, dV, dK, dQ); the other key
# blocks serve S = Q K^T only.
PARTS = [
    ("fa_wgmma_ops_16bit_head_dims.cuh", ["bf16", "f16"], SHARED_N,
     "bf16 and f16 at N = 64, 128, 256: ss, rs, and ss_tt at N = 64"),
    ("fa_wgmma_ops_fp8_head_dims.cuh", ["e4m3", "e5m2"], SHARED_N,
     "e4m3 and e5m2 at N = 64, 128, 256: ss, rs"),
] + [
    (f"fa_wgmma_ops_{ptype}_key_blocks.cuh", [ptype], KEY_BLOCK_N,
     f"{ptype} at the other key blocks, N = 80 ... 240: ss only")
    for _, ptype, _ in ELEMENTS
]

GENERATED = ("// GENERATED by kernels_src/tools/gen_wgmma_ops.py: do not edit by hand "
             "(a test compares it with the script).\n")


def index():
    # sorted, as clang-format orders them (the parts are independent specialisations: order is free)
    includes = "".join(f'#include "{name}"\n' for name in sorted(name for name, _, _, _ in PARTS))
    return ("#pragma once\n" + GENERATED + """//
// WgmmaOps<Element, N>::ss / ::rs issue one wgmma.mma_async m64nNk(32 bytes) with fp32 accumulators d
// (N/8 tiles of 4 floats per thread, the mma.sync C-fragment order of each warp's 16 rows: see
// fa_wgmma.cuh). scale_d = 0 overwrites d (the first k-step), 1 accumulates. kTransB (16-bit types only)
// = 1 reads B N-major (V as stored: keys x head dim); FP8 B must be K-major, so FP8 has no kTransB. ss_tt
// (16-bit, N = 64) reads A M-major and B N-major: the backward's dQ = dS K.
// The caller fences, commits and waits (fa_wgmma.cuh).
//
// One header per operand kind and shape role; a shape's wrappers are one specialisation, never split.
// N = 64, 128, 256 are the head dims: every product uses them (S = Q K^T at those key blocks, O += P V,
// the backward's S^T, dP^T, dV, dK and dQ); the other key blocks serve S = Q K^T only.
""" + "".join(f"//   {name}: {what}\n" for name, _, _, what in PARTS) + includes)


def part(what, ptypes, shapes):
    elements = [e for e in ELEMENTS if e[1] in ptypes]
    includes = "".join(f"#include <{h}>\n" for h in sorted({INCLUDES[p] for p in ptypes}))
    out = "#pragma once\n" + GENERATED + f"// WgmmaOps (fa_wgmma_ops.cuh) of {what}.\n" + includes + """
// One operand list per line, as generated (and compared with the generator's output):
// clang-format off
namespace fa {

template <typename Element, int N>
struct WgmmaOps;

"""
    for ctype, ptype, k in elements:
        for n in shapes:
            body = ((emit_ss(ctype, ptype, k, n) if n in SS_N else "")
                    + (emit_rs(ctype, ptype, k, n) if n in RS_N else ""))
            body += emit_ss_tt(ctype, ptype, k, n) if (n in SS_TT_N and k == 16) else ""
            out += f"template <>\nstruct WgmmaOps<{ctype}, {n}> {{\n{body}}};\n\n"
    return out + "}  // namespace fa\n"


def headers():
    files = {"fa_wgmma_ops.cuh": index()}
    for name, ptypes, shapes, what in PARTS:
        files[name] = part(what, ptypes, shapes)
    return files


def main():
    kernels_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    check = "--check" in sys.argv[1:]
    differs = False
    for name, text in headers().items():
        path = os.path.join(kernels_dir, name)
        if check:
            committed = open(path).read() if os.path.exists(path) else None
            if committed != text:
                print(f"differs from the generator's output: {name}")
                differs = True
        else:
            with open(path, "w") as f:
                f.write(text)
    sys.exit(1 if differs else 0)


if __name__ == "__main__":
    main()
