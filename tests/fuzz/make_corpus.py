#!/usr/bin/env python3
"""Writes the fuzz harness's seed corpus (tests/fuzz/corpus/): one small attention problem as .npy files
that NumPy would write (float32, version 1.0, header padded to 64 bytes), with its correct O and LSE and
its backward (dO and the correct dQ, dK, dV) computed here in float64, so that fa-check's seeds pass (exit
0) before they are mutated; and fa-tune --replay's recorded measurements. Pure Python: no NumPy needed.
Run once; the output is committed."""
import math
import random
import struct
from pathlib import Path

B, H, N, D = 1, 2, 8, 16
OUT = Path(__file__).parent / "corpus"


def save(name, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    data = b"".join(struct.pack("<f", v) for v in values)
    (OUT / name).write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def main():
    rng = random.Random(12)
    OUT.mkdir(exist_ok=True)
    q, k, v = ([[[[rng.uniform(-1, 1) for _ in range(D)] for _ in range(N)] for _ in range(H)]
                for _ in range(B)]
               for _ in range(3))
    # Stored as float32: the reference must see the rounded values.
    q, k, v = ([[[[struct.unpack("<f", struct.pack("<f", x))[0] for x in r] for r in h] for h in b]
                for b in t]
               for t in (q, k, v))
    scale = 1 / math.sqrt(D)
    o, lse = [], []
    for b in range(B):
        for h in range(H):
            for i in range(N):
                s = [scale * sum(q[b][h][i][c] * k[b][h][j][c] for c in range(D)) for j in range(N)]
                m = max(s)
                p = [math.exp(x - m) for x in s]
                total = sum(p)
                o.append([sum(p[j] * v[b][h][j][c] for j in range(N)) / total for c in range(D)])
                lse.append(m + math.log(total))
    flat = lambda t: [x for b in t for h in b for r in h for x in r]
    save("q.npy", (B, H, N, D), flat(q))
    save("k.npy", (B, H, N, D), flat(k))
    save("v.npy", (B, H, N, D), flat(v))
    save("o.npy", (B, H, N, D), [x for r in o for x in r])
    save("lse.npy", (B, H, N), lse)
    # The backward (drawn after the forward, so that q, k, v, o, lse stay as they were): dO, and dQ, dK, dV
    # in float64 from P = softmax(scale Q K^T): dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO o O)),
    # dQ = scale dS K, dK = scale dS^T Q.
    d_o = [[[[rng.uniform(-1, 1) for _ in range(D)] for _ in range(N)] for _ in range(H)] for _ in range(B)]
    d_o = [[[[struct.unpack("<f", struct.pack("<f", x))[0] for x in r] for r in h] for h in b] for b in d_o]
    dq, dk, dv = [], [], []
    for b in range(B):
        for h in range(H):
            qs, ks, vs, dos = q[b][h], k[b][h], v[b][h], d_o[b][h]
            os_ = o[(b * H + h) * N:(b * H + h + 1) * N]
            p = [[math.exp(scale * sum(qs[i][c] * ks[j][c] for c in range(D)) - lse[(b * H + h) * N + i])
                  for j in range(N)] for i in range(N)]
            delta = [sum(dos[i][c] * os_[i][c] for c in range(D)) for i in range(N)]
            dp = [[sum(dos[i][c] * vs[j][c] for c in range(D)) for j in range(N)] for i in range(N)]
            ds = [[p[i][j] * (dp[i][j] - delta[i]) for j in range(N)] for i in range(N)]
            dq += [[scale * sum(ds[i][j] * ks[j][c] for j in range(N)) for c in range(D)] for i in range(N)]
            dk += [[scale * sum(ds[i][j] * qs[i][c] for i in range(N)) for c in range(D)] for j in range(N)]
            dv += [[sum(p[i][j] * dos[i][c] for i in range(N)) for c in range(D)] for j in range(N)]
    save("do.npy", (B, H, N, D), flat(d_o))
    save("dq.npy", (B, H, N, D), [x for r in dq for x in r])
    save("dk.npy", (B, H, N, D), [x for r in dk for x in r])
    save("dv.npy", (B, H, N, D), [x for r in dv for x in r])
    # fa-tune --replay's input: the head of a recorded H200 run (tests/tuner/data), a few candidates.
    recorded = Path(__file__).parent.parent / "tuner" / "data" / "fa2_sm80_h200_bf16_d128_n4096_full.tsv"
    (OUT / "replay.tsv").write_text("".join(recorded.read_text().splitlines(keepends=True)[:24]))


if __name__ == "__main__":
    main()
