#include "attune/util/jsonl_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/process_parts.h"

namespace attune {

namespace {

using json = nlohmann::json;

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

}  // namespace

JsonlFile::JsonlFile(std::string path, bool durable) : path_(std::move(path)), durable_(durable) {
  if (path_.empty()) throw InputError({}, "", "a JSON Lines file's path is empty");
  const std::filesystem::path p(path_);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw InputError({path_, 0, 0}, "", "cannot create the file's directory: " + ec.message());
  }
}

JsonlFile::~JsonlFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<json> JsonlFile::read() {
  std::vector<json> out;
  for (Line& line : read_lines()) out.push_back(std::move(line.record));
  return out;
}

std::vector<JsonlFile::Line> JsonlFile::read_lines() {
  repair_at_.reset();
  read_size_ = 0;
  std::vector<Line> out;
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return out;
  const std::string text = read_file(path_);
  const std::string_view all(text);
  std::size_t pos = 0;
  int number = 0;
  while (pos < all.size()) {
    ++number;
    const std::size_t start = pos;
    const std::size_t nl = all.find('\n', pos);
    if (nl == std::string_view::npos) {  // torn: the append that wrote it never finished
      repair_at_ = static_cast<long long>(start);
      break;
    }
    const std::string_view line = all.substr(start, nl - start);
    pos = nl + 1;
    if (is_blank(line)) continue;
    std::string why;
    try {
      json record = json::parse(line);
      if (record.is_object()) {
        out.push_back({number, std::move(record)});
        continue;
      }
      why = fmt::format("a JSON {}, not an object", record.type_name());
    } catch (const json::parse_error& e) {
      why = e.what();
    }
    if (is_blank(all.substr(pos))) {  // the last line: torn
      repair_at_ = static_cast<long long>(start);
      break;
    }
    throw InputError({path_, number, 0}, "", "corrupt record: " + why);
  }
  if (repair_at_) read_size_ = static_cast<long long>(text.size());
  return out;
}

void JsonlFile::open_for_append() {
  std::error_code ec;
  const bool created = !std::filesystem::exists(path_, ec);
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError({path_, 0, 0}, "", "cannot open for appending: " + errno_text(errno));
  fd_ = fd;
  if (created && durable_) {  // the new file's directory entry must survive a crash too
    const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
}

void JsonlFile::append(const json& record) {
  const std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const auto fail = [&](const std::string& what, int err) {
    throw InputError({path_, 0, 0}, "", fmt::format("cannot {}: {}", what, errno_text(err)));
  };
  if (fd_ < 0) open_for_append();
  if (repair_at_) {
    // Cut the torn tail read() found, unless another writer appended since
    // (then the torn line is in the middle already, and cutting would lose theirs).
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_size == read_size_ && ::ftruncate(fd_, *repair_at_) != 0)
      fail("cut off the torn last line", errno);
    repair_at_.reset();
  }
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = n < 0 ? errno : ENOSPC;
    // A short write left a torn line: cut it if it is still the file's tail.
    struct stat after {};
    if (n > 0 && sized && ::fstat(fd_, &after) == 0 && after.st_size == before.st_size + n) {
      [[maybe_unused]] const int r = ::ftruncate(fd_, before.st_size);
    }
    fail("append", err);
  }
  if (durable_ && ::fsync(fd_) != 0) fail("sync", errno);
}

}  // namespace attune
