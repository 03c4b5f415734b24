// Opening a file attune reads as input (a log, a profile, a recipe) so that it
// can neither hang nor read forever: only a regular file is accepted, checked
// with stat() (symlinks followed) before it is opened, so a named pipe with no
// writer, /dev/zero, a terminal or a directory is refused with its type.
#pragma once

#include <cstdint>
#include <string>

namespace attune {

// "regular file", "named pipe (FIFO)", "character device", "block device",
// "directory", "socket", or "special file", for a st_mode.
std::string file_type_name(unsigned mode);

// The size in bytes of `path`, which must be a regular file. Throws InputError
// naming the file ("<what> is a named pipe (FIFO), not a regular file", or
// "cannot read <what>: <errno text>").
std::uint64_t regular_file_size(const std::string& path, const std::string& what);

// regular_file_size's check, then open(2) for reading: O_NONBLOCK for the open
// itself (a FIFO swapped in after the stat cannot block it), then fstat checks
// the file opened is still regular; blocking reads after. Returns the file
// descriptor, which the caller closes.
int open_regular_file(const std::string& path, const std::string& what);

}  // namespace attune
