// Names the calling thread as tools show it (top -H, gdb, /proc/<pid>/task/<tid>/comm, and the
// thread_name metadata of dlio's traces).
#pragma once

#include <cstddef>
#include <string_view>

namespace dlio {

// Sets the calling thread's name to "<role>-<index>", cut to Linux's 15 characters.
void NameThisThread(std::string_view role, size_t index);

}  // namespace dlio
