// The console's lines on rank 0, kept for the run's log file (OUTPUT with .h5 -> .log, beside the run
// file): lines printed before the file is known are held and written when it opens, so the log has the
// whole console, banner to summary (or the error line).
#pragma once

#include <string>

namespace tokdyn {

// One line of the console (no newline).
void log_console_line(const std::string& line);
// From now on lines go to path as well (appended: a resumed run continues its log, a new run under the same
// name adds to it), header first, then the held lines. A log that cannot be opened is not an error of the
// run: the console still has every line.
void open_console_log(const std::string& path, const std::string& header);
void close_console_log();

}  // namespace tokdyn
