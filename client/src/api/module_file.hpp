// Reads a module file for jitcache_module_load (cuModuleLoad's contract): the whole file, with a
// NUL after it so that PTX text is a C string as cuModuleLoadData expects.
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::api {

// Errors (ErrorCode::not_found / io / too_large) name the path and the system's reason.
common::Result<std::vector<char>> read_module_file(const char* path);

}  // namespace jitcache::client::api
