// Descriptor hooks shared by both interposers (fd_hooks.cc, linked into each library): whatever
// gives a number a new meaning behind the open/close hooks' back makes the library's table
// follow (dup*, fcntl(F_DUPFD*), close_range, closefrom, closedir, freopen, and the calls that
// make descriptors without opening a path: pipe, socket, accept, eventfd, memfd_create, ...),
// and the library's PrivateFd stays out of the program's way (private_fd.h).
//
// Each library defines the functions declared here.
#pragma once

namespace dlio::preload::fd_hooks {

// `fd` no longer names what the library followed (cheap when it followed nothing there).
void Forget(int fd);

// `new_fd` now names what `old_fd` names (dup*, fcntl(F_DUPFD*)).
void Copy(int old_fd, int new_fd);

// fcntl(fd, F_SETFL, ...) changed the description's flags (O_APPEND: positions move).
void FlagsChanged(int fd);

}  // namespace dlio::preload::fd_hooks
