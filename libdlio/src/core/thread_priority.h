// Lowers the calling thread's scheduling priority (its nice value), for helper threads that must
// not delay the threads they serve when the cores are oversubscribed.
#pragma once

namespace dlio {

// Adds `increment` (> 0; 0 does nothing) to the calling thread's nice value, up to 19. Linux
// nice values are per thread; raising one needs no privilege. Best effort: a failure is ignored
// (the thread then keeps its priority).
void LowerThisThreadPriority(int increment);

}  // namespace dlio
