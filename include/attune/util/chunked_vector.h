// ChunkedVector: an append-only sequence stored in fixed-size chunks. Unlike
// std::vector it never moves what it already holds when it grows, so filling it
// with millions of records (one per step of a gigabyte log) costs one write per
// record instead of a copy of everything on every doubling; unlike std::deque
// its chunks are large for large elements too. Elements are never erased.
// Chunks are 2 MiB blocks offered to the kernel as huge pages: first touching
// fresh memory page by page (a fault per 4 KiB) cost more than parsing the
// log that fills it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace attune {

namespace detail {
// A 2 MiB block aligned to 2 MiB, advised as a huge page where the kernel
// allows it; freed with free_chunk_block.
void* allocate_chunk_block(std::size_t bytes);
void free_chunk_block(void* block);
}  // namespace detail

template <class T>
class ChunkedVector {
  static constexpr std::size_t kBlockBytes = std::size_t{2} << 20;
  static constexpr std::size_t ChunkSize = sizeof(T) >= kBlockBytes ? 1 : kBlockBytes / sizeof(T);

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
    if (size_ % ChunkSize == 0) {
      chunks_.reserve(chunks_.size() + 1);  // so that a failed reserve cannot leak the block
      chunks_.push_back(static_cast<T*>(detail::allocate_chunk_block(ChunkSize * sizeof(T))));
    }
    new (chunks_.back() + size_ % ChunkSize) T(std::move(value));
    ++size_;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return chunks_[i / ChunkSize][i % ChunkSize]; }
  const T& operator[](std::size_t i) const { return chunks_[i / ChunkSize][i % ChunkSize]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

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
