#!/usr/bin/env python3
"""PTX of every family's kernels, to show that moving code between kernels_src headers changed none of it.

    python3 kernels_src/tools/ptx_compare.py snapshot KERNELS_DIR OUT_DIR [FILTER]   # before, then after
    python3 kernels_src/tools/ptx_compare.py compare OUT_DIR_BEFORE OUT_DIR_AFTER

snapshot compiles each case below (the families' defaults and neighbours, every dtype, head dim and mask,
the mutant switches; name expressions as device/families/*.cpp builds them, copied by hand: a case the
kernels reject fails in both trees and is skipped) with NVRTC and the host's options
(runtime/compile_request.cpp) for compute_90a: the PTX ptxas reads for sm_90a, without ptxas (about 1 s
a program). One process per compile: NVRTC 13.0 can segfault on some inline PTX. PTX carries no source
lines without -lineinfo, so moved code gives the same text, once NVRTC's per-compile module id in
internal names (_INTERNAL_<hex>_..., new on every compile) is replaced by a fixed one.
"""
import concurrent.futures
import ctypes
import os
import re
import subprocess
import sys

B16, F16, E4, E5 = "__nv_bfloat16", "__half", "__nv_fp8_e4m3", "__nv_fp8_e5m2"
SHORT = {B16: "bf16", F16: "fp16", E4: "e4m3", E5: "e5m2"}
FWD_MUTANTS = ["UNRESCALED_O", "UNRESCALED_L", "M_INIT_ZERO", "STALE_MAX", "EXP_BASE_MISMATCH",
               "MASKED_ROW_NAN", "MISSING_SCALE", "CAUSAL_DIAGONAL", "TAIL_UNMASKED", "LSE_WITHOUT_MAX",
               "NORMALIZE_IN_LOOP"]
FP8_MUTANTS = ["FP8_MISSING_DESCALE", "FP8_P_OVERFLOW"]
BWD_MUTANTS = ["BWD_MISSING_DELTA", "BWD_DK_MISSING_SCALE", "BWD_DQ_OVERWRITE", "BWD_RACE", "CAUSAL_DIAGONAL",
               "TAIL_UNMASKED", "EXP_BASE_MISMATCH", "MISSING_SCALE"]


def b(v):
    return "true" if v else "false"


def mask(causal):
    return "causal" if causal else "full"


def fa3_default(e, d, causal):
    fp8 = e in (E4, E5)
    c = dict(cons=2, n=176, st=2, pp=1, ov=1, pers=2 if causal else 1, so=0, pv=0, pb=False, tv=0)
    if d == 128 and causal: c["n"] = 128
    if d == 256: c["n"] = 80
    if d == 64: c.update(cons=3, n=112)
    if fp8:
        c.update(cons=2, n=256 if d == 64 else 128)
        if d == 256: c["ov"] = 0
        if causal: c["pers"] = 0
    return c


def fa3_name(e, d, causal, c):
    tail = ((f", {c['so']}" if c["so"] or c["pv"] or c["tv"] else "")
            + (f", {c['pv']}" if c["pv"] or c["tv"] else "")
            + (f", {c['tv']}" if c["tv"] else ""))
    return (f"fa3_sm90_fwd<{e}, {d}, {c['n']}, {c['cons']}, {c['st']}, {c['pp']}, {c['ov']}, {c['pers']}, "
            f"{b(causal)}, {b(c['pb'])}{tail}>")


def cases():
    out = []
    # fa3_sm90 forward: defaults, every dtype, head dim, mask; then one tunable changed at a time.
    for e in (B16, F16, E4, E5):
        fp8 = e in (E4, E5)
        for d in (64, 128, 256):
            for causal in (False, True):
                base = fa3_default(e, d, causal)
                variants = {"default": {}}
                if e in (B16, E4):
                    variants.update({"pp0": {"pp": 0}, "ov0": {"ov": 0 if base["ov"] else 1},
                                     "st3": {"st": 3}, "pers0": {"pers": 0}, "pers1": {"pers": 1},
                                     "pers2": {"pers": 2}, "so1": {"so": 1}, "n64": {"n": 64}})
                    if not fp8:
                        variants.update({"cons1": {"cons": 1}, "n128": {"n": 128}, "n96": {"n": 96}})
                if fp8:
                    variants.update({"perblock": {"pb": True},
                                     "pvbf16": {"pv": 1, "n": 128 if d != 256 else 64},
                                     # kTransposeV: d256's 2 x 128 has no room for the staged V tiles
                                     "tv1": dict(tv=1, **({"n": 64, "ov": 1} if d == 256 else {}))})
                for vname, delta in variants.items():
                    c = dict(base, **delta)
                    names = [fa3_name(e, d, causal, c)]
                    if fp8 and not c["pv"] and not c["tv"]:
                        names.append(f"fa3_sm90_transpose_v<{d}>")
                    out.append((f"fa3fwd_{SHORT[e]}_d{d}_{mask(causal)}_{vname}",
                                "fa3_sm90_fwd.cu", names, []))
    for m in FWD_MUTANTS + FP8_MUTANTS:
        for e in (B16, E4):
            for causal in (False, True):
                out.append((f"fa3fwd_{SHORT[e]}_d128_{mask(causal)}_mutant_{m}", "fa3_sm90_fwd.cu",
                            [fa3_name(e, 128, causal, fa3_default(e, 128, causal))], ["FA_MUTANT_" + m]))
    # fa3_sm90 backward: defaults (d64 128 x 128 REDs, d128 64 x 128 bulk, d256 64 x 64 REDs), every dq mode.
    for e in (B16, F16):
        for d in (64, 128, 256):
            for causal in (False, True):
                bm, bn, dq = (128 if d == 64 else 64), (64 if d == 256 else 128), (2 if d == 128 else 0)
                modes = [dq] + [m for m in (0, 1, 2) if m != dq]
                for mode in modes:
                    layout = ", fa3::BwdDqTiles" if mode == 2 else ""
                    names = [f"fa_bwd_preprocess<{e}, {d}, 4, true{layout}>",
                             f"fa3_sm90_bwd<{e}, {d}, {bm}, {bn}, 2, 2, {mode}, {b(causal)}>",
                             f"fa_bwd_dq_convert<{e}, {d}{layout}>"]
                    out.append((f"fa3bwd_{SHORT[e]}_d{d}_{mask(causal)}_dq{mode}",
                                "fa3_sm90_bwd.cu", names, []))
                if e == B16:
                    for m, n, c in ((64, 128, 1), (64, 64, 2), (128, 64, 2)):
                        out.append((f"fa3bwd_{SHORT[e]}_d{d}_{mask(causal)}_m{m}n{n}c{c}", "fa3_sm90_bwd.cu",
                                    [f"fa3_sm90_bwd<{e}, {d}, {m}, {n}, {c}, 2, 0, {b(causal)}>"], []))
    for m in BWD_MUTANTS:
        for causal in (False, True):
            for d, bm, bn, dq in ((128, 64, 128, 2), (64, 128, 128, 1)):
                out.append((f"fa3bwd_bf16_d{d}_{mask(causal)}_dq{dq}_mutant_{m}", "fa3_sm90_bwd.cu",
                            [f"fa3_sm90_bwd<{B16}, {d}, {bm}, {bn}, 2, 2, {dq}, {b(causal)}>"],
                            ["FA_MUTANT_" + m]))
    # FP8 quantisation on the device, in both programs that carry it, with their forward kernels.
    for e in (E4, E5):
        for d in (64, 128, 256):
            q = [f"fp8_block_amax<{d}>", f"fp8_tensor_scale<{e}>", f"fp8_quantize<{e}, {d}, true>",
                 f"fp8_quantize<{e}, {d}, false>"]
            c = fa3_default(e, d, False)
            out.append((f"fp8q_fa3_{SHORT[e]}_d{d}", "fp8_quantize_fa3_sm90_fwd.cu",
                        q + [fa3_name(e, d, False, c), f"fa3_sm90_transpose_v<{d}>"], []))
            c = dict(c, pb=True)
            out.append((f"fp8q_fa3_{SHORT[e]}_d{d}_perblock", "fp8_quantize_fa3_sm90_fwd.cu",
                        q + [fa3_name(e, d, True, dict(fa3_default(e, d, True), pb=True))], []))
            bm, bn, w, st = (64, 32, 4, 2) if d == 256 else (128, 128 if d == 64 else 64, 8, 1)
            out.append((f"fp8q_fa2fp8_{SHORT[e]}_d{d}", "fp8_quantize_fa2_fp8_fwd.cu",
                        q + [f"fa2_fp8_fwd<{e}, {d}, {bm}, {bn}, {w}, {st}, false, {b(bd)}, {b(cz)}>"
                             for bd in (False, True) for cz in (False, True)], []))
            for m in FP8_MUTANTS:
                out.append((f"fp8q_fa3_{SHORT[e]}_d{d}_mutant_{m}", "fp8_quantize_fa3_sm90_fwd.cu", q,
                            ["FA_MUTANT_" + m]))
    # The sm80-era families (none includes a file split here; compiled so that the claim is checked).
    for e in (B16, F16):
        for d in (64, 128, 256):
            for causal in (False, True):
                tag = f"{SHORT[e]}_d{d}_{mask(causal)}"
                n = {64: 64, 128: 32, 256: 64}[d]
                w, st = (8, 2) if d == 256 else (4, 1)
                out.append((f"fa2sm80_{tag}", "fa2_sm80_fwd.cu",
                            [f"fa2_sm80_fwd<{e}, {d}, 128, {n}, {w}, {st}, 1, false, true, {b(causal)}>"],
                            []))
                # fa1's and naive's defaults (device/families/fa1.cpp, naive.cpp)
                fm, fn, fw = {64: (128, 256, 8), 128: (128, 128, 4), 256: (64, 64, 4)}[d]
                out.append((f"fa1_{tag}", "fa1_fwd.cu",
                            [f"fa1_fwd_step<{e}, {d}, {fm}, {fn}, 32, {fw}, {b(causal)}>"], []))
                out.append((f"naive_{tag}", "naive.cu",
                            [f"naive_scores<{e}, {d}, 8, 2, 32, {b(causal)}>", f"naive_softmax<{e}, 256, 32>",
                             f"naive_output<{e}, {d}, 8, 2, {b(causal)}>"], []))
                bm, bn, w = (16, 64 * 64 // d, 2)
                out.append((f"flash_decode_{tag}", "flash_decode_fwd.cu",
                            [f"flash_decode_split<{e}, {d}, {bm}, {bn}, {w}, 1, {b(causal)}>",
                             f"flash_decode_combine<{e}, {d}, {w}>"], []))
                if d != 256:
                    bm, bn = (32, 64) if d == 128 else (64, 64)
                    qbn = 32 if d == 128 else 64
                    out.append((f"fa2sm80bwd_{tag}", "fa2_sm80_bwd.cu",
                                [f"fa_bwd_preprocess<{e}, {d}, 4, false>",
                                 f"fa2_sm80_bwd_dkdv<{e}, {d}, {bm}, {bn}, 4, 1, 0, {b(causal)}>",
                                 f"fa2_sm80_bwd_dq<{e}, {d}, 64, {qbn}, 4, {b(causal)}>"], []))
                    fm, fn, fw = (32, 128, 8) if d == 128 else (64, 64, 4)
                    out.append((f"fa1bwd_{tag}", "fa1_bwd.cu",
                                [f"fa_bwd_preprocess<{e}, {d}, 4, false>",
                                 f"fa1_bwd_step<{e}, {d}, {fm}, {fn}, {fw}, {b(causal)}>",
                                 f"fa_bwd_dq_convert<{e}, {d}>"], []))
    for e in (E4, E5):
        for d in (64, 128, 256):
            bm, bn, w, st = (64, 32, 4, 2) if d == 256 else (128, 128 if d == 64 else 64, 8, 1)
            out.append((f"fa2fp8_{SHORT[e]}_d{d}", "fa2_fp8_fwd.cu",
                        [f"fa2_fp8_fwd<{e}, {d}, {bm}, {bn}, {w}, {st}, false, {b(bd)}, {b(cz)}>"
                         for bd in (False, True) for cz in (False, True)], []))
    return out




def compile_one(kdir, program, out, names, defines):
    """One compile in this process: writes the lowered names and the PTX to `out`."""
    lib = ctypes.CDLL(os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64", "libnvrtc.so"))
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def ck(rc, what):
        if rc != 0:
            raise SystemExit(f"{what}: {lib.nvrtcGetErrorString(rc).decode()}")

    src = open(os.path.join(kdir, program), "rb").read()
    prog = ctypes.c_void_p()
    ck(lib.nvrtcCreateProgram(ctypes.byref(prog), src, program.encode(), 0, None, None), "create")
    for n in names:
        ck(lib.nvrtcAddNameExpression(prog, n.encode()), "addname " + n)
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    opts = ["--gpu-architecture=compute_90a", "--std=c++20", f"-I{cuda}/include", f"-I{cuda}/include/cccl",
            "-I" + kdir] + ["-D" + d + "=1" for d in defines]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts]))
    size = ctypes.c_size_t()
    if rc != 0:
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        sys.stderr.write(log.value.decode(errors="replace"))
        ck(rc, "compile")
    ck(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "ptxsize")
    ptx = ctypes.create_string_buffer(size.value)
    ck(lib.nvrtcGetPTX(prog, ptx), "ptx")
    lowered = []
    for n in names:
        p = ctypes.c_char_p()
        ck(lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(p)), "lowered " + n)
        lowered.append(f"// {n} -> {p.value.decode()}")
    with open(out, "w") as f:
        f.write("\n".join(lowered) + "\n" + ptx.value.decode())


ID = re.compile(r"_INTERNAL_[0-9a-f]{8}_\d+_\w+?_[0-9a-f]{8}_\d+")
def norm(text):
    out, i = [], 0
    for m in re.finditer(r"(\d+)(_INTERNAL_)", text):
        if m.start() < i:
            continue
        digits = m.group(1)
        done = False
        for k in range(len(digits)):            # the length prefix is a suffix of the digit run
            length = int(digits[k:])
            ident = text[m.start(2):m.start(2) + length]
            if len(ident) == length and ID.fullmatch(ident):
                out.append(text[i:m.start(1) + k] + "11_INTERNAL_")
                i = m.start(2) + length
                done = True
                break
        if not done:
            raise SystemExit("unparsed internal name at %d: %r" % (m.start(), text[m.start():m.start()+80]))
    out.append(text[i:])
    return "".join(out)


def snapshot(kdir, outdir, flt=""):
    os.makedirs(outdir, exist_ok=True)

    def one(case):
        cid, program, names, defines = case
        raw = os.path.join(outdir, cid + ".raw")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "compile-one", kdir, program, raw,
                            " ".join(defines), *names], capture_output=True, text=True)
        if r.returncode != 0:
            open(os.path.join(outdir, cid + ".err"), "w").write(r.stdout + r.stderr)
            return cid, f"FAIL rc={r.returncode}"
        open(os.path.join(outdir, cid + ".ptx"), "w").write(norm(open(raw).read()))
        os.remove(raw)
        return cid, "ok"

    todo = [c for c in cases() if flt in c[0]]
    jobs = int(os.environ.get("JOBS", "2"))
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex, open(
            os.path.join(outdir, "status.txt"), "w") as st:
        for cid, s in ex.map(one, todo):
            st.write(f"{cid} {s}\n")
            st.flush()


def compare(a, b):
    status = lambda d: dict(l.split(" ", 1) for l in open(os.path.join(d, "status.txt")).read().splitlines())
    sa, sb = status(a), status(b)
    same = differ = kernels = 0
    for cid in sorted(sa):
        if cid not in sb:
            print(f"missing after: {cid}")
            differ += 1
        elif sa[cid] != "ok" or sb[cid] != "ok":
            if (sa[cid] == "ok") != (sb[cid] == "ok"):
                print(f"compiles in one tree only: {cid} ({sa[cid]} / {sb[cid]})")
                differ += 1
        elif open(os.path.join(a, cid + ".ptx")).read() == open(os.path.join(b, cid + ".ptx")).read():
            same += 1
            kernels += sum(1 for l in open(os.path.join(a, cid + ".ptx")) if l.startswith(".visible .entry")
                           or l.startswith(".weak .entry") or l.startswith(".entry"))
        else:
            print(f"PTX differs: {cid}")
            differ += 1
    skipped = sum(1 for c in sa if sa[c] != "ok" and sb.get(c, "") != "ok")
    print(f"{same} programs ({kernels} kernels) identical, {differ} differing, {skipped} rejected in both")
    return 1 if differ else 0


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "compile-one":
        kdir, program, out, defines, *names = args
        compile_one(kdir, program, out, names, defines.split())
    elif mode == "snapshot":
        snapshot(*args)
    elif mode == "compare":
        sys.exit(compare(*args))
    else:
        sys.exit(__doc__)
