// tokdyn rerun FILE [--check]: repeats the run a run file records (run/rerun.hpp) with its command.
#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/run/rerun.hpp"

namespace tokdyn {

DeckSchema rerun_schema() { return DeckSchema(); }

int run_rerun(const Comm& comm, const DeckSchema&, const RunRequest& request) {
  const RunFileHeader header = rerun_header(comm, request);
  const Command* command = find_command(header.command);
  if (!command || command->outputs != Outputs::run)
    throw InputError("'" + request.deck_path + "' holds a run of '" + header.command +
                     "', which tokdyn rerun cannot repeat");
  const DeckSchema schema = command->schema();
  const Rerun rerun = rerun_request(comm, header, request, schema);
  const int rc = command->run(comm, schema, rerun.request);
  if (rc != 0 || !request.check) return rc;
  return check_rerun(comm, request.deck_path, rerun.output);
}

}  // namespace tokdyn
