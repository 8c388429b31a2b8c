#!/usr/bin/env python3
"""experiments/bench_csv.py: the verdict column decides, older files are read by their check's words, and a
row left out of a speed table is named on stderr."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments"))
from bench_csv import csv_rows, passed, speed_rows  # noqa: E402

COLUMNS = "family,head_dim,seqlen,mask,median_ms,tflops,check"


def write(folder, name, lines):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("# GPU: synthetic\n" + "\n".join(lines) + "\n")
    return path


class BenchCsvTest(unittest.TestCase):
    def test_the_verdict_column_decides_over_the_check_text(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write(folder, "new.csv", [
                COLUMNS + ",passed",
                'fa3_sm90,128,4096,full,1.5,600,"pass; O worst/bound 0.3",true',
                'fa3_sm90,128,4096,causal,1.0,450,"pass-through mutant caught",false',
                'fa3_sm90,64,4096,full,0,0,"pass; timing: launch failed",true'])
            rows = csv_rows(path)
            self.assertEqual([passed(r) for r in rows], [True, False, True])
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                kept = speed_rows(path)
            self.assertEqual([(r["head_dim"], r["mask"]) for r in kept], [("128", "full")])
            self.assertIn("fa3_sm90 d128 n4096 causal: pass-through mutant caught", stderr.getvalue())
            self.assertIn("d64 n4096 full: pass; timing: launch failed", stderr.getvalue())

    def test_older_files_are_read_by_the_check_text(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write(folder, "old.csv", [
                COLUMNS,
                'fa2_sm80,128,4096,full,1,300,"pass; O worst/bound 0.2"',
                'fa2_sm80,128,8192,full,1,300,"checked earlier (log): pass"',
                'fa2_sm80_bwd,128,16384,full,1,200,"not checked at this n (edge)"',
                'fa2_sm80,64,4096,full,1,300,"FAIL: O unrescaled"'])
            self.assertEqual([passed(r) for r in csv_rows(path)], [True, True, True, False])


if __name__ == "__main__":
    unittest.main()
