// ChunkedVector: an append-only sequence stored in chunks. Unlike std::vector
// it never moves what it already holds when it grows, so filling it with
// millions of records (one per step of a gigabyte log) costs one write per
// record instead of a copy of everything on every doubling; unlike std::deque
// its chunks are large for large elements too. Elements are never erased.
// Chunks double from 16 elements up to a few MiB and then stay that size, so
// a short log costs a small allocation; the large ones are offered to the
// kernel as huge pages, because first touching fresh memory page by page (a
// fault per 4 KiB) cost more than parsing the log that fills it.
#pragma once

#include <bit>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace attune {

namespace detail {
// Memory for a chunk; blocks of 2 MiB and more are aligned to 2 MiB and
// advised as huge pages where the kernel allows it. Freed with free_chunk_block.
void* allocate_chunk_block(std::size_t bytes);
void free_chunk_block(void* block);
}  // namespace detail

template <class T>
class ChunkedVector {
  // Chunk k (k < kGrowing) holds kFirst << k elements; later ones kLargest.
  static constexpr std::size_t kLargestBytes = std::size_t{4} << 20;
  static constexpr std::size_t kLargest = std::bit_floor(sizeof(T) >= kLargestBytes ? 1 : kLargestBytes / sizeof(T));
  static constexpr std::size_t kFirst = kLargest < 16 ? kLargest : 16;
  static constexpr std::size_t kGrowing = std::bit_width(kLargest / kFirst) - 1;  // kFirst << kGrowing == kLargest
  static constexpr std::size_t kInGrowing = kFirst * ((std::size_t{1} << kGrowing) - 1);

  struct Slot {
    std::size_t chunk;
    std::size_t offset;
  };
  static Slot slot(std::size_t i) {
    if (i < kInGrowing) {
      const std::size_t k = std::bit_width(i / kFirst + 1) - 1;
      return {k, i - kFirst * ((std::size_t{1} << k) - 1)};
    }
    const std::size_t m = i - kInGrowing;
    return {kGrowing + m / kLargest, m % kLargest};
  }
  static std::size_t capacity_of(std::size_t chunk) {
    return chunk < kGrowing ? kFirst << chunk : kLargest;
  }

 public:
  template <bool Const>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;
    using Owner = std::conditional_t<Const, const ChunkedVector*, ChunkedVector*>;

    Iterator() = default;
    Iterator(Owner owner, std::size_t i) : owner_(owner), i_(i) {}
    reference operator*() const { return (*owner_)[i_]; }
    pointer operator->() const { return &(*owner_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    Owner owner_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;
  using value_type = T;

  ChunkedVector() = default;
  ChunkedVector(std::initializer_list<T> items) {
    for (const T& t : items) push_back(t);
  }
  ChunkedVector(ChunkedVector&& o) noexcept : chunks_(std::move(o.chunks_)), size_(std::exchange(o.size_, 0)) {}
  ChunkedVector& operator=(ChunkedVector&& o) noexcept {
    if (this != &o) {
      release();
      chunks_ = std::move(o.chunks_);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ChunkedVector(const ChunkedVector& o) {
    for (const T& t : o) push_back(t);
  }
  ChunkedVector& operator=(const ChunkedVector& o) {
    if (this != &o) {
      release();
      for (const T& t : o) push_back(t);
    }
    return *this;
  }
  ~ChunkedVector() { release(); }

  void push_back(T value) {
    const Slot s = slot(size_);
    if (s.chunk == chunks_.size()) {
      chunks_.reserve(chunks_.size() + 1);  // so that a failed reserve cannot leak the block
      chunks_.push_back(static_cast<T*>(detail::allocate_chunk_block(capacity_of(s.chunk) * sizeof(T))));
    }
    new (chunks_[s.chunk] + s.offset) T(std::move(value));
    ++size_;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) {
    const Slot s = slot(i);
    return chunks_[s.chunk][s.offset];
  }
  const T& operator[](std::size_t i) const {
    const Slot s = slot(i);
    return chunks_[s.chunk][s.offset];
  }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  T& front() { return chunks_[0][0]; }
  const T& front() const { return chunks_[0][0]; }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  void release() {
    if constexpr (!std::is_trivially_destructible_v<T>) {
      for (std::size_t i = 0; i < size_; ++i) (*this)[i].~T();
    }
    for (T* c : chunks_) detail::free_chunk_block(c);
    chunks_.clear();
    size_ = 0;
  }

  std::vector<T*> chunks_;
  std::size_t size_ = 0;
};

}  // namespace attune
