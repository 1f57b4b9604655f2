#include "profile/import/strace_fd_table.h"

#include <algorithm>
#include <atomic>
#include <utility>

namespace dlio::profile_internal {
namespace {
std::atomic<int64_t> g_nodes_made{0};
}  // namespace

struct FdTable::Node {
  int64_t fd;
  FdEntry entry;
  Ptr left, right;
  int height;
};

int64_t FdTable::nodes_made() { return g_nodes_made.load(std::memory_order_relaxed); }

FdTable::Ptr FdTable::Make(int64_t fd, const FdEntry& entry, Ptr left, Ptr right) {
  g_nodes_made.fetch_add(1, std::memory_order_relaxed);
  const int h = 1 + std::max(left ? left->height : 0, right ? right->height : 0);
  return std::make_shared<const Node>(Node{fd, entry, std::move(left), std::move(right), h});
}

// A node over `left` and `right`, whose heights differ by at most 2, rotated back into balance.
FdTable::Ptr FdTable::Balance(int64_t fd, const FdEntry& entry, Ptr left, Ptr right) {
  auto height = [](const Ptr& n) { return n ? n->height : 0; };
  if (height(left) > height(right) + 1) {
    if (height(left->left) >= height(left->right)) {
      return Make(left->fd, left->entry, left->left, Make(fd, entry, left->right, right));
    }
    const Node& lr = *left->right;
    return Make(lr.fd, lr.entry, Make(left->fd, left->entry, left->left, lr.left),
                Make(fd, entry, lr.right, right));
  }
  if (height(right) > height(left) + 1) {
    if (height(right->right) >= height(right->left)) {
      return Make(right->fd, right->entry, Make(fd, entry, left, right->left), right->right);
    }
    const Node& rl = *right->left;
    return Make(rl.fd, rl.entry, Make(fd, entry, left, rl.left),
                Make(right->fd, right->entry, rl.right, right->right));
  }
  return Make(fd, entry, std::move(left), std::move(right));
}

// Recursion depth is the tree's height, at most 1.44 log2(n + 2).
FdTable::Ptr FdTable::Insert(const Ptr& n, int64_t fd, const FdEntry& entry) {
  if (!n) return Make(fd, entry, nullptr, nullptr);
  if (fd < n->fd) return Balance(n->fd, n->entry, Insert(n->left, fd, entry), n->right);
  if (fd > n->fd) return Balance(n->fd, n->entry, n->left, Insert(n->right, fd, entry));
  return Make(fd, entry, n->left, n->right);
}

FdTable::Ptr FdTable::RemoveMin(const Ptr& n, const Node** min) {
  if (!n->left) {
    *min = n.get();
    return n->right;
  }
  return Balance(n->fd, n->entry, RemoveMin(n->left, min), n->right);
}

FdTable::Ptr FdTable::Remove(const Ptr& n, int64_t fd) {
  if (!n) return nullptr;
  if (fd < n->fd) return Balance(n->fd, n->entry, Remove(n->left, fd), n->right);
  if (fd > n->fd) return Balance(n->fd, n->entry, n->left, Remove(n->right, fd));
  if (!n->right) return n->left;
  const Node* min = nullptr;
  Ptr right = RemoveMin(n->right, &min);
  return Balance(min->fd, min->entry, n->left, std::move(right));
}

const FdEntry* FdTable::Find(int64_t fd) const {
  const Node* n = root_.get();
  while (n != nullptr && n->fd != fd) n = fd < n->fd ? n->left.get() : n->right.get();
  return n != nullptr ? &n->entry : nullptr;
}

void FdTable::Set(int64_t fd, FdEntry entry) { root_ = Insert(root_, fd, entry); }

void FdTable::Erase(int64_t fd) {
  if (Find(fd) != nullptr) root_ = Remove(root_, fd);
}

void FdTable::CollectCloexec(const Node* n, std::vector<int64_t>* fds) {
  if (n == nullptr) return;
  CollectCloexec(n->left.get(), fds);
  if (n->entry.cloexec) fds->push_back(n->fd);
  CollectCloexec(n->right.get(), fds);
}

void FdTable::EraseCloexec() {
  std::vector<int64_t> fds;
  CollectCloexec(root_.get(), &fds);
  for (int64_t fd : fds) root_ = Remove(root_, fd);
}

}  // namespace dlio::profile_internal
