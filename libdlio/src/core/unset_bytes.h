// Bytes that a resize leaves unset: std::allocator, except that a value-initialising construct
// leaves the new object as the C library gave it. For memory the caller fills next (a read: its
// pages then fault in within the read that fills them, as a Python bytes object's or a numpy
// array's do; a decoder's row slots), where a zero fill would be a pass of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace dlio {

template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: rebinding
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using UnsetBytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

}  // namespace dlio
