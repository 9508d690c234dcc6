// What a RunStatus snapshot looks like to the outside: the JSON of /api/status (the
// --metrics file's fields, plus the live ones the page draws) and the Prometheus text of
// /metrics (metric names and labels in docs/console.md; they are a stable interface).
//
// Pure functions of a snapshot; thread-safe.
#ifndef SLUICE_CONSOLE_STATUS_VIEWS_H_
#define SLUICE_CONSOLE_STATUS_VIEWS_H_

#include <string>

#include "console/run_status.h"

namespace sluice::console {

// {"topology":{...},"status":"running","exit_code":0,"wall_seconds":..,"units":[..],
//  "streams":[{"stream":"a.out -> b.in","buffers":..,"bytes":..,..., "rate":{..}}],
//  "filters":[..],"copies":[..],"hosts":[..],"failure":{..}}
std::string status_json(const StatusSnapshot& s);

// The Prometheus text exposition format (0.0.4).
std::string status_metrics(const StatusSnapshot& s);

// The page at "/": one self-contained HTML document (inline CSS and JS, nothing fetched
// from elsewhere) that polls /api/status twice a second and draws the run.
const std::string& status_page();
// The Content-Security-Policy the page is served with: its own inline style and script
// (by their SHA-256) and fetches from the console, nothing else.
const std::string& status_page_csp();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_STATUS_VIEWS_H_
