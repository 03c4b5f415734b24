// read_file and write_file_atomic on what is not a plain file: a pipe or a
// device is never read, and for writing, a symlink is written through
// (the link stays, its target gets the bytes), and a pipe, a device or a
// directory is refused and left as it was, never replaced by a regular file.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <filesystem>
#include <string>

#include "attune/util/error.h"
#include "attune/util/file.h"
#include "../fixtures/scratch_dir.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

TEST(FileWrite, ASymlinkIsWrittenThroughAndStaysALink) {
  test::ScratchDir dir("attune_file_write");
  const std::string target = dir.write("real.sh", "old\n");
  const fs::path link = dir.path() / "link.sh";
  fs::create_symlink("src/real.sh", link);
  write_file_atomic(link.string(), "new\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read_file(target), "new\n");
}

TEST(FileWrite, APipeOrADirectoryIsRefusedAndLeftAsItWas) {
  test::ScratchDir dir("attune_file_write");
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomic(fifo.string(), "x"), InputError);
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
  EXPECT_THROW(write_file_atomic((dir.path() / "src").string(), "x"), InputError);
  EXPECT_TRUE(fs::is_directory(dir.path() / "src"));
  // A link to a pipe is refused the same way.
  fs::create_symlink(fifo, dir.path() / "to-pipe");
  EXPECT_THROW(write_file_atomic((dir.path() / "to-pipe").string(), "x"), InputError);
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
}

// read_file on a named pipe with no writer would block forever: it is refused
// from its type. (Should it block, the writer opened after 3 s lets the test fail.)
TEST(FileRead, APipeOrADeviceIsRefusedNotWaitedOn) {
  test::ScratchDir dir("attune_file_read");
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::mutex m;
  std::condition_variable done_cv;
  bool done = false;
  std::thread unblock([&] {
    std::unique_lock<std::mutex> lock(m);
    if (done_cv.wait_for(lock, std::chrono::seconds(3), [&] { return done; })) return;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  });
  EXPECT_THROW(read_file(fifo.string()), InputError);
  EXPECT_THROW(read_file("/dev/zero"), InputError);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  done_cv.notify_one();
  unblock.join();
}

TEST(FileWrite, ACharacterDeviceIsRefused) {
  try {
    write_file_atomic("/dev/null", "x");
    FAIL() << "wrote over /dev/null";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace attune
