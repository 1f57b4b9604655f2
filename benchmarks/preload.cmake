# libdlio_preload.so's overhead: run by benchmarks/preload_overhead.sh with and without
# LD_PRELOAD. Plain POSIX I/O only; it links libdlio like every benchmark but uses none of it.
dlio_add_benchmark(preload_overhead_benchmark preload_overhead_benchmark.cc)
