// JsonlFile: an append-only JSON Lines file whose every record is durable
// once append() returns — the storage of journals that must survive a crash
// or a kill at any instant, and that several writers may share.
//
// Each record is one line: its compact dump() and '\n', written by a single
// write() on an O_APPEND descriptor and then fsync'd (and the directory too
// when the append created the file). So a crash leaves at most a torn last
// line, and several JsonlFile objects — in one process or in several —
// appending to one file never interleave their lines (on a local file
// system: NFS does not make O_APPEND atomic across hosts).
//
// Reading gives every complete record in order. A torn last line (no
// newline, or a line that is not a JSON object, followed by nothing but
// blank lines) is left out, and the next append() cuts it off first — if the
// file is still the size read() saw, so a line another writer appended since
// is never lost. A bad line anywhere else is an InputError naming the file
// and the line: that is damage, not an interrupted append. Blank lines are
// skipped. A missing file holds no records.
//
// Not thread-safe: one thread uses a JsonlFile at a time (a caller shared by
// threads holds its own mutex). Different objects on one file need no
// coordination.
//
// A JsonlFile made not `durable` skips the fsyncs: its lines still never
// interleave or tear while attune runs, but a crash of the machine may lose
// the last ones (for a journal nothing will resume from).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune {

class JsonlFile {
 public:
  // Creates the parent directories (InputError naming the file when it
  // cannot); the file itself is opened, and created, by the first append().
  explicit JsonlFile(std::string path, bool durable = true);
  ~JsonlFile();
  JsonlFile(const JsonlFile&) = delete;
  JsonlFile& operator=(const JsonlFile&) = delete;

  const std::string& path() const { return path_; }

  // Every complete record in order (see above). InputError naming the file
  // when it cannot be read, or naming the file and line of a bad line that
  // is not the last.
  std::vector<nlohmann::json> read();

  // read(), with each record's 1-based line number, for a reader whose own
  // checks of a record must name its line too.
  struct Line {
    int number = 0;
    nlohmann::json record;
  };
  std::vector<Line> read_lines();

  // Appends `record` (invalid UTF-8 in its strings replaced by U+FFFD): one
  // write() of dump()+'\n' on an O_APPEND descriptor, then fsync, and the
  // directory's fsync when the file was just created. InputError naming the
  // file when it cannot be opened, written or synced; a short write's torn
  // line is cut off again where it is still the file's tail.
  void append(const nlohmann::json& record);

 private:
  void open_for_append();

  std::string path_;
  bool durable_ = true;
  int fd_ = -1;                         // opened on the first append
  std::optional<long long> repair_at_;  // a torn tail read() found: cut the file here ...
  long long read_size_ = 0;             // ... before the next append, if it is still this size
};

}  // namespace attune
