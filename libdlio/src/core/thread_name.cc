#include "core/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <string>

namespace dlio {

void NameThisThread(std::string_view role, size_t index) {
  std::string name(role);
  name += '-';
  name += std::to_string(index);
  name.resize(std::min<size_t>(name.size(), 15));  // the kernel's limit (16 with the NUL)
  (void)pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace dlio
