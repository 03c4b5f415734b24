#include "attune/util/chunked_vector.h"

#include <sys/mman.h>

#include <cstdlib>

namespace attune::detail {

void* allocate_chunk_block(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  if (bytes < kHugePage) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Aligned so that whole huge pages fit; the size is not rounded up to one,
  // which would leave a quarter of a 3 MiB chunk backed but unused.
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) throw std::bad_alloc();
  // Advice only: where huge pages are off this changes nothing.
  madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

void free_chunk_block(void* block) { std::free(block); }

}  // namespace attune::detail
