// Hand-built traces and analyses for the report tests (independent of AnalyzeTrace): the
// counters come from ComputeFileCounters, the totals and a timeline are filled in here.
#pragma once

#include <string>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"

namespace dlio::testing {

// Adds a read or write event.
void AddTransfer(ProfileTrace* trace, int32_t pid, int32_t tid, OpKind kind,
                 const std::string& path, int64_t start_us, int64_t dur_us, int64_t offset,
                 int64_t size);
// Adds an application event (kind kOther).
void AddApp(ProfileTrace* trace, int32_t pid, int32_t tid, const std::string& name,
            int64_t start_us, int64_t dur_us);

// A TraceAnalysis good enough for rendering: totals, files_detail (ComputeFileCounters, every
// file "sequential") and a 10-bucket timeline.
TraceAnalysis HandAnalysis(const ProfileTrace& trace);

// Two processes reading two files with a compute event between reads, and one write.
ProfileTrace SmallTrace();

}  // namespace dlio::testing
