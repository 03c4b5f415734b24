#include "attune/util/file_lock.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "attune/util/error.h"

namespace attune {
namespace {

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_file_lock_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "run" / ".lock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // What try_lock says in a child process (fork): 0 when it got the lock,
  // else the holder's pid it was told (-1 when the child failed).
  long child_try_lock() {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(fds[0]);
      long holder = -1;
      try {
        holder = FileLock::try_lock(path_, &holder) ? 0 : holder;
      } catch (...) {
        holder = -1;
      }
      [[maybe_unused]] const ssize_t n = ::write(fds[1], &holder, sizeof holder);
      ::_exit(0);
    }
    ::close(fds[1]);
    long holder = -1;
    if (::read(fds[0], &holder, sizeof holder) != sizeof holder) holder = -1;
    ::close(fds[0]);
    ::waitpid(child, nullptr, 0);
    return holder;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(FileLockTest, AnotherProcessIsRefusedAndToldTheHoldersPid) {
  std::optional<FileLock> held = FileLock::try_lock(path_);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->path(), path_);
  EXPECT_TRUE(std::filesystem::exists(path_));  // created, with its directory
  EXPECT_EQ(child_try_lock(), static_cast<long>(::getpid()));
  held.reset();  // released on destruction
  EXPECT_EQ(child_try_lock(), 0);
  EXPECT_TRUE(FileLock::try_lock(path_).has_value());  // the child's lock died with it
}

TEST_F(FileLockTest, MovingKeepsTheLockAndTheLastOwnerReleasesIt) {
  std::optional<FileLock> first = FileLock::try_lock(path_);
  ASSERT_TRUE(first.has_value());
  FileLock moved = std::move(*first);
  first.reset();  // the moved-from object releases nothing
  EXPECT_EQ(child_try_lock(), static_cast<long>(::getpid()));
  FileLock other = FileLock::lock((dir_ / "other.lock").string());
  other = std::move(moved);  // drops other.lock, keeps this one
  EXPECT_EQ(child_try_lock(), static_cast<long>(::getpid()));
  EXPECT_TRUE(FileLock::try_lock((dir_ / "other.lock").string()).has_value());
}

TEST_F(FileLockTest, LockWaitsUntilTheHolderLetsGo) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    ::close(ready[0]);
    const auto lock = FileLock::try_lock(path_);
    const char c = lock ? 'y' : 'n';
    [[maybe_unused]] const ssize_t n = ::write(ready[1], &c, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ::_exit(0);  // the lock goes with the process
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, 'y');
  long pid = 0;
  EXPECT_FALSE(FileLock::try_lock(path_, &pid).has_value());
  EXPECT_EQ(pid, static_cast<long>(holder));
  const auto t0 = std::chrono::steady_clock::now();
  const FileLock lock = FileLock::lock(path_);
  EXPECT_GT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  ::waitpid(holder, nullptr, 0);
  std::ifstream in(path_);
  long written = 0;
  in >> written;
  EXPECT_EQ(written, static_cast<long>(::getpid()));  // the new holder's pid, not the old one's
}

TEST_F(FileLockTest, AFileThatCannotBeCreatedIsAnInputErrorNamingIt) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "plain") << "x";
  const std::string bad = (dir_ / "plain" / ".lock").string();
  try {
    FileLock::try_lock(bad);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, bad);
  }
  EXPECT_THROW(FileLock::lock(bad), InputError);
}

}  // namespace
}  // namespace attune
