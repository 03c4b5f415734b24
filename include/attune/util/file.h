// Whole-file reading and crash-safe writing. Writing goes to a temporary file in
// the same directory and is renamed over the target, so a failure never leaves a
// truncated or half-written file behind.
#pragma once

#include <string>

namespace attune {

// Throws InputError naming the file when it cannot be read or is not a
// regular file (a named pipe, a device, a directory: regular_file_size()).
std::string read_file(const std::string& path);

// Writes `content` to `path` atomically (temp file + fsync + rename). A
// symlink is written through (its target is replaced, the link kept); what is
// not a regular file (a device, a pipe, a directory) is refused, never replaced.
// Throws InputError naming the file when it cannot be written. Not
// `durable`: the same without the fsync — readers still never see half a
// file, but a crash may leave an empty or old one (for files a crash may lose).
void write_file_atomic(const std::string& path, const std::string& content, bool durable = true);

// The absolute path of the running program (Linux: /proc/self/exe); `fallback`
// when it cannot be found.
std::string current_executable(const std::string& fallback);

}  // namespace attune
