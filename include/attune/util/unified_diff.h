// unified_diff: the difference of two texts as `diff -u` prints it (---/+++
// headers, @@ hunks with three lines of context), so a person or `patch`
// can read what changed. Lines are compared exactly; a text without a final
// newline gets diff's "\ No newline at end of file" marker.
#pragma once

#include <string>

namespace attune {

// "" when the texts are equal.
std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_name,
                         const std::string& after_name, int context = 3);

}  // namespace attune
