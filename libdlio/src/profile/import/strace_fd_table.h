// The fd table of a traced process for the strace importer: fd -> open file description.
#ifndef DLIO_SRC_PROFILE_STRACE_FD_TABLE_H_
#define DLIO_SRC_PROFILE_STRACE_FD_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlio::profile_internal {

// An open file description: shared by dup'd fds and by parent and child after fork, as in the
// kernel, so they share the file offset.
struct Description {
  std::string path;
  int64_t pos = 0;      // -1: unknown (after an O_APPEND write: the file's end is not in the log)
  bool append = false;  // O_APPEND: every write goes to the end of the file
};

struct FdEntry {
  std::shared_ptr<Description> desc;
  bool cloexec = false;
};

// A persistent map (an AVL tree of immutable, shared nodes): a copy costs O(1) and shares every
// node, and a change copies only the O(log n) nodes on its path. A log of N forks of a process
// holding M fds thus takes O(M + N log M) memory even when every child changes its table, where
// copying the table per fork took O(N M). The descriptions stay shared and mutable (offsets).
// Requires external synchronization of writers; copies are independent values.
class FdTable {
 public:
  // The entry of `fd`, nullptr when the table has none (valid until the next change).
  const FdEntry* Find(int64_t fd) const;
  void Set(int64_t fd, FdEntry entry);
  void Erase(int64_t fd);
  // Drops every entry marked close-on-exec (a successful execve).
  void EraseCloexec();
  // Nodes allocated by changes of any table since the process started (for tests).
  static int64_t nodes_made();

 private:
  struct Node;
  using Ptr = std::shared_ptr<const Node>;
  static Ptr Make(int64_t fd, const FdEntry& entry, Ptr left, Ptr right);
  static Ptr Balance(int64_t fd, const FdEntry& entry, Ptr left, Ptr right);
  static Ptr Insert(const Ptr& n, int64_t fd, const FdEntry& entry);
  static Ptr Remove(const Ptr& n, int64_t fd);
  static Ptr RemoveMin(const Ptr& n, const Node** min);
  static void CollectCloexec(const Node* n, std::vector<int64_t>* fds);

  Ptr root_;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_STRACE_FD_TABLE_H_
