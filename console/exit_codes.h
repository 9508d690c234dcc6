// The console's exit statuses (documented in docs/console.md).
#ifndef SLUICE_CONSOLE_EXIT_CODES_H_
#define SLUICE_CONSOLE_EXIT_CODES_H_

namespace sluice::console {

inline constexpr int kExitOk = 0;           // every unit of work finished everywhere
inline constexpr int kExitRunFailed = 1;    // a filter or the runtime failed during the run
inline constexpr int kExitUsage = 2;        // bad command line
inline constexpr int kExitBadTopology = 3;  // the topology is invalid; nothing was started
inline constexpr int kExitHostUnavailable = 4;  // a host daemon did not answer or authenticate;
                                                // nothing was started
inline constexpr int kExitInterrupted = 130;  // stopped by SIGINT/SIGTERM/SIGHUP

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_EXIT_CODES_H_
