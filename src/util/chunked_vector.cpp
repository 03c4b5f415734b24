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
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
  // Advice only: where huge pages are off this changes nothing.
  madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void free_chunk_block(void* block) { std::free(block); }

}  // namespace attune::detail
