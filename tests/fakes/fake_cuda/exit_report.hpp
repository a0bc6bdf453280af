// FAKE_CUDA_REPORT=path: when the process exits (or the fake is unloaded), one JSON line is appended to
// `path` with the process id, every counter, the last image and the last launch. An unmodified test
// program run as a child (under `jitcache run`, say) cannot call the control API, but its test can
// read what the "driver" did for it: how many PTX JIT compiles, which cubin it loaded, which kernel
// it ran. A process that forks writes one line per process that exits through exit(); one that
// leaves through _exit() or a signal writes none.
//
// The line: {"pid": N, "counters": {"cubin_loads_ok": N, …, "load_calls": {"module_load_data": N, …},
// "last_error_log": "…"}, "last_image": {"kind": "cubin"|"ptx"|"fatbin"|"none", "complete": bool,
// "fatbin_wrapper": bool, "size": N, "sha256": "hex", "entry_point": "…", "sequence": N} or null,
// "last_launch": {"kernel_name": "…", "grid": [x, y, z], "block": [x, y, z], "shared_mem_bytes": N,
// "through_kernel_handle": bool, "sequence": N} or null}.
// Thread safety: the report is written once, by the thread that runs the exit handlers; it reads the
// counters and records through their own thread-safe accessors. The line goes out in one write() to a
// descriptor opened with O_APPEND, so lines of concurrent processes do not interleave.
#pragma once

#include <string>

namespace jitcache::fakes::fake_cuda {

// The report as it would be written now (without the newline).
std::string exit_report_line();

}  // namespace jitcache::fakes::fake_cuda
