// Streams a file, plain or gzip-compressed (told by its magic bytes 1f 8b), to
// a callback in 1 MiB chunks, so that logs and traces of many gigabytes are
// never held in memory. Training logs and profiler traces both arrive this way.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace attune {

inline constexpr std::size_t kFileChunkBytes = std::size_t{1} << 20;

// Calls on_chunk with the file's (decompressed) bytes in order. Throws
// InputError naming the file when it is not a regular file (input_file.h: a
// FIFO or a device is refused before it is opened), and "cannot read <what>:
// <why>" when it cannot be opened or read, or the gzip stream is damaged or
// truncated.
void read_file_chunks(const std::string& path, const std::string& what,
                      const std::function<void(std::string_view)>& on_chunk);

}  // namespace attune
