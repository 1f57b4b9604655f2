// `dlio-run profile [--output DIR] [--data-dir PREFIX]... -- CMD ARGS...`: runs a program under
// libdlio_preload.so so that it writes one .pfw trace per process into DIR, then analyzes them.
#pragma once

#include <string>
#include <vector>

#include "dlio/status.h"
#include "subcommand.h"

namespace dlio_run {

struct ProfileOptions {
  std::string output = "dlio-profile";  // trace directory, created when missing
  std::vector<std::string> data_dirs;   // traced path prefixes (made absolute); empty: all files
  std::vector<std::string> command;     // the program and its arguments
  std::string preload_lib;              // "" finds libdlio_preload.so beside dlio-run
};

// Declares the `profile` options on `command` (named and described by main.cc's table).
void DeclareProfileOptions(CLI::App* command, ProfileOptions* options);

// The subcommand's run: Profile with the program TakeProfileCommand took after `--` (when given),
// its exit code, or 1 when the profile could not start.
int ProfileCommand(const ProfileOptions& options, const Invocation& call);

// `dlio-run profile ... -- CMD ARGS...`: the words after the first "--" when argv[1] is
// "profile", and *argc cut before that "--", so that the option parser never sees the program's
// own arguments (it would take a `-c` or `--trace` among them as dlio-run's). Empty otherwise.
std::vector<std::string> TakeProfileCommand(int* argc, char** argv);

// Where libdlio_preload.so is: $DLIO_PRELOAD_LIB, else the build tree's or the install's copy
// relative to this executable. NotFound names the places looked at.
dlio::Result<std::string> FindPreloadLibrary();

// Runs options.command with the interposer and returns its exit code (128 + N when it died of
// signal N). Then writes the analysis of the traces to DIR/analysis.json and DIR/analysis.txt;
// when that fails (no trace written, ...) a warning goes to stderr and the exit code stands.
// Errors: the library or output directory is unusable, the command cannot start.
dlio::Result<int> Profile(const ProfileOptions& options);

}  // namespace dlio_run
