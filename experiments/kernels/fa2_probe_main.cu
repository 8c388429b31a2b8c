// Configs probed on the H200 (see fa2_probe.cu). Edit the list, rebuild, carry.
#include "fa2_probe.cu"

#define BOTH(D, BM, BN, NW, ST, WN, QR, ES)                          \
  run_all<Kernel<D, BM, BN, NW, ST, WN, QR, ES, false>>(checks, ns); \
  run_all<Kernel<D, BM, BN, NW, ST, WN, QR, ES, true>>(checks, ns);

int main(int argc, char** argv) {
  bool checks = true;
  std::vector<int> ns = {1024, 4096, 16384};
  if (argc > 1 && std::string(argv[1]) == "--no-check") checks = false;
  BOTH(64, 128, 64, 4, 1, 1, false, true)
  BOTH(64, 128, 64, 4, 2, 1, false, true)
  BOTH(64, 128, 128, 8, 2, 1, false, true)
  BOTH(64, 128, 64, 8, 2, 1, false, true)
  BOTH(64, 64, 64, 4, 2, 1, false, true)
  BOTH(128, 128, 64, 4, 1, 1, false, true)
  BOTH(128, 128, 32, 4, 1, 1, false, true)
  BOTH(128, 128, 64, 8, 1, 1, false, true)
  BOTH(128, 128, 64, 8, 2, 1, false, true)
  BOTH(128, 128, 128, 8, 2, 1, false, true)
  BOTH(128, 64, 64, 4, 2, 1, false, true)
  BOTH(128, 128, 64, 8, 2, 1, false, false)
  BOTH(256, 64, 64, 4, 1, 1, false, true)
  BOTH(256, 128, 64, 8, 1, 1, false, true)
  BOTH(256, 128, 32, 8, 2, 1, false, true)
  BOTH(64, 64, 64, 4, 1, 4, false, true)
  BOTH(64, 64, 64, 4, 2, 2, true, false)
  return 0;
}
