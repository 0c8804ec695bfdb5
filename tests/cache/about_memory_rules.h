// Test helper: the rules Firefox's about:memory applies when it loads a memory report
// (aboutMemory.js), checked on the parsed JSON. Returns one readable line per violation.
#ifndef LETHE_TESTS_CACHE_ABOUT_MEMORY_RULES_H_
#define LETHE_TESTS_CACHE_ABOUT_MEMORY_RULES_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::testing {

std::vector<std::string> AboutMemoryViolations(const nlohmann::ordered_json& report);

// heap-allocated minus every explicit/ report of kind heap, as the viewer computes it.
int64_t HeapUnclassified(const nlohmann::ordered_json& report);

}  // namespace lethe::testing

#endif  // LETHE_TESTS_CACHE_ABOUT_MEMORY_RULES_H_
