#include "matrix/testing/largest_allocation.h"

#include <atomic>
#include <cstdlib>
#include <new>

// Every non-aligned form is replaced, so that new and delete always pair malloc with free (ASan checks).
// (GCC's -Wmismatched-new-delete cannot tell that these malloc/free pairs are the replaced operators.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<size_t> g_largest_allocation{0};
void* TrackedMalloc(size_t size) noexcept {
  size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size)) {
  }
  return std::malloc(size == 0 ? 1 : size);
}
void* TrackedNew(size_t size) {
  if (void* p = TrackedMalloc(size)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(size_t size) { return TrackedNew(size); }
void* operator new[](size_t size) { return TrackedNew(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return TrackedMalloc(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return TrackedMalloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sparseditto::testing {

size_t LargestAllocation() { return g_largest_allocation.load(); }
void ResetLargestAllocation() { g_largest_allocation = 0; }

}  // namespace sparseditto::testing
