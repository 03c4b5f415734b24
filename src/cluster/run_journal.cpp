#include "attune/cluster/run_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/json_input.h"
#include "attune/util/process_parts.h"

namespace attune::cluster {

namespace {

using json = nlohmann::json;
using namespace json_field;

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

// ------------------------------------------------------------ RunJournal

RunJournal::RunJournal(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw InputError({}, "", "the run journal's path is empty");
  const std::filesystem::path p(path_);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw InputError({path_, 0, 0}, "", "cannot create the run journal's directory: " + ec.message());
  }
  load();
}

RunJournal::~RunJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void RunJournal::load() {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;
  const std::string text = read_file(path_);
  std::size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    ++lineno;
    const std::size_t nl = text.find('\n', pos);
    const std::size_t start = pos;
    const std::string_view line =
        std::string_view(text).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (nl == std::string::npos) {  // torn: the append that wrote it never finished
      repair_ = static_cast<long long>(start);
      break;
    }
    if (is_blank(line)) continue;
    try {
      apply(json::parse(line));
    } catch (const std::exception& e) {
      if (is_blank(std::string_view(text).substr(pos))) {  // the last record: torn
        repair_ = static_cast<long long>(start);
        break;
      }
      const auto* input = dynamic_cast<const InputError*>(&e);
      const std::string why = input ? format_error({}, input->key(), input->message()) : std::string(e.what());
      throw InputError({path_, lineno, 0}, "", "corrupt run journal record: " + why);
    }
  }
  if (repair_) loaded_size_ = static_cast<long long>(text.size());
}

JournalEntry& RunJournal::entry(const std::string& run, bool create) {
  if (const auto it = index_.find(run); it != index_.end()) return entries_[it->second];
  if (!create) throw std::invalid_argument(fmt::format("run '{}' is not in the run journal", run));
  index_.emplace(run, entries_.size());
  JournalEntry& e = entries_.emplace_back();
  e.run = run;
  e.spec.name = run;
  return e;
}

// Applies one record to the in-memory state; InputError for a malformed one.
// Records are applied leniently (a record for a run not seen yet creates it):
// several journals may have appended to one file.
void RunJournal::apply(const json& r) {
  if (!r.is_object()) wrong_type("record", "an object", r);
  std::string event, run;
  read_string(r, "event", event);
  read_string(r, "run", run);
  if (run.empty()) throw InputError({}, "run", "missing run name");
  if (event == "launching") {
    const json* spec = member(r, "spec");
    if (spec == nullptr) throw InputError({}, "spec", "missing");
    RunSpec s = run_spec_from_json(*spec);
    std::string cluster, recipe;
    read_string(r, "cluster", cluster);
    read_string(r, "recipe", recipe);
    JournalEntry& e = entry(run, true);
    e.cluster = std::move(cluster);
    e.spec = std::move(s);
    e.recipe = std::move(recipe);
    e.id.clear();
    e.status = RunStatus{};
    e.state = "launching";
  } else if (event == "launched") {
    std::string cluster, id;
    read_string(r, "cluster", cluster);
    read_string(r, "id", id);
    if (id.empty()) throw InputError({}, "id", "missing run id");
    JournalEntry& e = entry(run, true);
    if (!cluster.empty()) e.cluster = std::move(cluster);
    e.id = std::move(id);
    e.state = "launched";
  } else if (event == "finished") {
    const json* status = member(r, "status");
    if (status == nullptr) throw InputError({}, "status", "missing");
    RunStatus s = run_status_from_json(*status);
    if (!is_final(s.state)) throw InputError({}, "status", fmt::format("state '{}' is not final", to_string(s.state)));
    JournalEntry& e = entry(run, true);
    e.state = to_string(s.state);
    e.status = std::move(s);
  } else {
    throw InputError({}, "event", fmt::format("unknown event '{}'", event));
  }
}

// One record, one line, one write(), then fsync.
void RunJournal::append(json record) {
  record["at"] = utc_now();
  const std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const auto fail = [&](const std::string& what, int err) {
    throw InputError({path_, 0, 0}, "", fmt::format("cannot {} the run journal: {}", what, errno_text(err)));
  };
  if (fd_ < 0) {
    std::error_code ec;
    const bool created = !std::filesystem::exists(path_, ec);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail("open", errno);
    fd_ = fd;
    if (created) {  // the new file's directory entry must survive a crash too
      const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
      const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
      }
    }
    // Cut the torn tail load() found, unless another writer appended since.
    struct stat st {};
    if (repair_ && ::fstat(fd_, &st) == 0 && st.st_size == loaded_size_) {
      if (::ftruncate(fd_, *repair_) != 0) fail("repair the torn last line of", errno);
    }
    repair_.reset();
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
    fail("append to", err);
  }
  if (::fsync(fd_) != 0) fail("sync", errno);
}

void RunJournal::launching(const std::string& run, const std::string& cluster, const RunSpec& spec,
                           const std::string& recipe) {
  std::lock_guard lock(mu_);
  if (run.empty()) throw std::invalid_argument("a journalled run needs a name");
  if (const auto it = index_.find(run); it != index_.end() && entries_[it->second].state != "launching")
    throw std::invalid_argument(fmt::format("run '{}' is already in the run journal ({}): run names are unique",
                                            run, entries_[it->second].state));
  json r{{"event", "launching"}, {"run", run}, {"cluster", cluster}, {"spec", run_spec_json(spec)}, {"recipe", recipe}};
  append(r);
  apply(r);
}

void RunJournal::launched(const std::string& run, const RunId& id) {
  std::lock_guard lock(mu_);
  const JournalEntry& e = entry(run, false);
  if (e.state != "launching" && e.state != "launched")
    throw std::invalid_argument(fmt::format("run '{}' has finished ({}): it cannot be launched again", run, e.state));
  if (id.id.empty()) throw std::invalid_argument(fmt::format("run '{}': the cluster's id is empty", run));
  json r{{"event", "launched"}, {"run", run}, {"cluster", id.cluster}, {"id", id.id}};
  append(r);
  apply(r);
}

void RunJournal::finished(const std::string& run, const RunStatus& status) {
  std::lock_guard lock(mu_);
  entry(run, false);
  if (!is_final(status.state))
    throw std::invalid_argument(
        fmt::format("run '{}': '{}' is not a final state", run, to_string(status.state)));
  json r{{"event", "finished"}, {"run", run}, {"status", run_status_json(status)}};
  append(r);
  apply(r);
}

std::vector<JournalEntry> RunJournal::unfinished() const {
  std::lock_guard lock(mu_);
  std::vector<JournalEntry> out;
  for (const JournalEntry& e : entries_)
    if (e.state == "launching" || e.state == "launched") out.push_back(e);
  return out;
}

std::optional<JournalEntry> RunJournal::find(const std::string& run) const {
  std::lock_guard lock(mu_);
  const auto it = index_.find(run);
  if (it == index_.end()) return std::nullopt;
  return entries_[it->second];
}

std::vector<JournalEntry> RunJournal::entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

}  // namespace attune::cluster
