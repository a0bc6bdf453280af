#include <client/src/loader/load_names.hpp>

namespace jitcache::client::loader {

std::string_view outcome_name(jitcache_load_outcome outcome) {
  switch (outcome) {
    case JITCACHE_OUTCOME_NONE: return "none";
    case JITCACHE_OUTCOME_PASS_THROUGH: return "pass_through";
    case JITCACHE_OUTCOME_HIT: return "hit";
    case JITCACHE_OUTCOME_COMPILED_BY_DAEMON: return "compiled_by_daemon";
    case JITCACHE_OUTCOME_COMPILED_LOCALLY: return "compiled_locally";
    case JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD: return "rebuilt_after_failed_load";
    case JITCACHE_OUTCOME_UNCACHED_FALLBACK: return "uncached_fallback";
  }
  return "unknown";
}

std::string_view stage_words(jitcache_load_stage stage) {
  switch (stage) {
    case JITCACHE_STAGE_NONE: return "none";
    case JITCACHE_STAGE_IMAGE: return "no image for this device";
    case JITCACHE_STAGE_PTX_VERSION: return "PTX version";
    case JITCACHE_STAGE_JIT: return "JIT";
    case JITCACHE_STAGE_LOAD: return "relocation or resources";
    case JITCACHE_STAGE_CACHE: return "cache";
  }
  return "unknown";
}

std::string_view stage_key(jitcache_load_stage stage) {
  switch (stage) {
    case JITCACHE_STAGE_NONE: return "none";
    case JITCACHE_STAGE_IMAGE: return "image";
    case JITCACHE_STAGE_PTX_VERSION: return "ptx_version";
    case JITCACHE_STAGE_JIT: return "jit";
    case JITCACHE_STAGE_LOAD: return "load";
    case JITCACHE_STAGE_CACHE: return "cache";
  }
  return "unknown";
}

}  // namespace jitcache::client::loader
